"""Claims: keywords taken under new tokens, in the order the claim rules (farm.state.claimrules) pick
them; by the same rules, the ``outlook`` of an empty claim and the ``listing`` of what a claim would
take (the keyword API's). And the take-back of a stopped crawl and a survivor's adoption of a stopped
worker's keywords, each held row read back as a lease (``lease_of``).

A claim hands out leases atomically (``SELECT … FOR UPDATE SKIP LOCKED`` on MySQL/MariaDB and
PostgreSQL, one ``BEGIN IMMEDIATE`` write transaction on SQLite), each under a new random token that
fences every later write about the keyword (see farm.state.lease.new_lease_token).
"""

from __future__ import annotations

from collections.abc import Collection, Iterable
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from typing import Any, TypeAlias

from sqlalchemy import ColumnElement, and_, bindparam, case, func, or_, select, update

from farm.state.claimrules import KINDS, LEASE_COLUMNS, AnyRow, K, c, claimable, pick
from farm.state.clock import today
from farm.state.lease import Lease, Outlook, new_lease_token, parse_pages
from farm.state.storeview import StoreView

# (id, lease_token) of a lease
LeaseKey: TypeAlias = tuple[int, int]


def aware(value: datetime | None) -> datetime | None:
    """A time read raw (an aggregate, no UtcDateTime) comes back as the database's naive UTC."""
    if value is None or value.tzinfo is not None:
        return value
    return value.replace(tzinfo=UTC)


def params(store: StoreView, source: str, now: datetime, skip_partial: Iterable[int] = ()) -> dict[str, Any]:
    """The claim rules' bound values for ``store``'s settings at ``now``."""
    return {
        "source": source,
        "day": today(now, store.tz),
        "now": now,
        "cutoff": now - timedelta(seconds=store.lease_timeout),
        "max_retries": store.max_retries,
        "max_blocked": store.max_blocked_claims,
        "skip_partial": sorted(skip_partial),
    }


def claim(
    store: StoreView,
    source: str,
    crawler_id: str,
    n: int = 1,
    skip_partial: Iterable[int] = (),
    held: Collection[LeaseKey] | None = None,
) -> list[Lease]:
    """Up to ``n`` keywords of ``source``, now held by ``crawler_id``, in one transaction.

    Partial rows of today first, then failed rows of today with retries left,
    then fresh rows (not requested today), oldest request first. Partial rows
    whose id is in ``skip_partial`` are left for another crawler or another run
    (a crawler does not spin on a keyword the site keeps blocking).

    ``held``: the leases (id, token) the claimer knows it holds. A connection lost
    at the commit leaves its outcome unknown: if the claim had committed, the next
    attempt would claim other rows and the first would stay ``crawling`` under a
    holder that never learnt of them. So an attempt after a failed one first
    returns the rows the table says ``crawler_id`` holds beyond ``held``, if any.
    """
    if n < 1:
        return []
    failed_before = False

    def attempt() -> list[Lease]:
        nonlocal failed_before
        if failed_before and held is not None:
            unknown = held_beyond(store, source, crawler_id, held)
            if unknown:
                return unknown
        failed_before = True  # until it returns
        return store.claim_once(source, crawler_id, n, skip_partial)

    return store.retrying(attempt)


def take(store: StoreView, source: str, crawler_id: str, n: int, skip_partial: Iterable[int]) -> list[Lease]:
    """One claim's transaction: pick, then take each picked row under a new token."""
    now = store.clock()
    bound = params(store, source, now, skip_partial)
    with store.engine.begin() as conn:
        picked = pick(conn, store.picks, bound, n)
        tokens = {r.id: new_lease_token(r.lease_token) for r in picked}
        for kind_index, kind in enumerate(KINDS):
            ids = [r.id for r in picked if r.kind == kind_index]
            if ids:
                update_ = store.takes[kind].values(lease_token=case({i: tokens[i] for i in ids}, value=c.id))
                conn.execute(update_, {"ids": ids, "day": bound["day"], "now": now, "crawler_id": crawler_id})
    return [_claimed(source, r, tokens[r.id]) for r in picked]


def _claimed(source: str, r: AnyRow, token: int) -> Lease:
    kind = KINDS[r.kind]
    if kind == "fresh":
        return Lease(r.id, source, r.city, r.job, token, start_page=1, from_status=kind)
    return Lease(
        id=r.id,
        source=source,
        city=r.city,
        job=r.job,
        lease_token=token,
        start_page=r.last_completed_page + 1,
        from_status=kind,
        total_pages=r.total_pages,
        pages_ahead=parse_pages(r.pages_ahead),
        retry_count=r.retry_count + (1 if kind == "failed" else 0),
    )


def listing(store: StoreView, source: str, limit: int, skip_partial: Iterable[int] = ()) -> list[AnyRow]:
    """Up to ``limit`` rows a claim of ``source`` would take now, in the order it would take
    them, without taking them (each row's ``kind`` indexes KINDS)."""
    bound = params(store, source, store.clock(), skip_partial)
    with store.engine.connect() as conn:
        return pick(conn, store.peeks, bound, limit)


def outlook(store: StoreView, source: str, skip_partial: Iterable[int] = ()) -> Outlook:
    """What a claim could hand out now, and when the next failed row comes due for a retry.

    SKIP LOCKED hides rows other claimers hold locked for a moment: an empty claim
    is not the end while this still counts rows.
    """
    bound = params(store, source, store.clock(), skip_partial)
    count = select(func.count()).select_from(K).where(or_(*(claimable(kind) for kind in KINDS)))
    waiting = select(func.min(c.retry_at)).where(
        c.source == bindparam("source"),
        c.crawl_status == "failed",
        c.last_requested_date == bindparam("day"),
        c.retry_count < bindparam("max_retries"),
        c.blocked_claims < bindparam("max_blocked"),
        c.retry_at > bindparam("now"),
    )

    def read() -> tuple[int, datetime | None]:
        with store.reader.connect() as conn:
            return int(conn.execute(count, bound).scalar_one()), conn.execute(waiting, bound).scalar_one()

    rows, retry_at = store.retrying(read)
    return Outlook(rows, aware(retry_at))


def held_by(source: str, crawler_id: str) -> ColumnElement[bool]:
    """The rows of ``source`` being crawled under ``crawler_id``."""
    return and_(c.source == source, c.crawler_id == crawler_id, c.crawl_status == "crawling")


def held_beyond(store: StoreView, source: str, crawler_id: str, held: Collection[LeaseKey]) -> list[Lease]:
    stmt = select(*LEASE_COLUMNS).where(held_by(source, crawler_id)).order_by(c.id)
    with store.engine.connect() as conn:
        rows = conn.execute(stmt).all()
    return [lease_of(source, r, "recovered") for r in rows if (r.id, r.lease_token) not in held]


def lease_of(source: str, r: AnyRow, from_status: str = "adopted") -> Lease:
    """The lease a row of LEASE_COLUMNS stands for, under its token, resuming after its watermark."""
    return Lease(
        id=r.id,
        source=source,
        city=r.city,
        job=r.job,
        lease_token=r.lease_token,
        start_page=r.last_completed_page + 1,
        from_status=from_status,
        total_pages=r.total_pages,
        pages_ahead=parse_pages(r.pages_ahead),
        retry_count=r.retry_count,
    )


def take_back(
    store: StoreView,
    source: str,
    crawler_id: str,
    held: Iterable[LeaseKey] = (),
    others: Iterable[LeaseKey] = (),
) -> list[Lease]:
    """The keywords a crawl that stopped held, claimed again by it at once under new tokens
    (JOBDIR checkpoint; no waiting for lease_timeout).

    Taken back: today's rows of ``source`` still held by ``crawler_id``, ``crawling`` (the crawl
    was killed; its claims after its last checkpoint too), or ``partial`` under a token in
    ``held`` (it paused, or was reaped, and nobody claimed them since). Each is taken with a
    conditional UPDATE naming the token and the holder read, so a row claimed by anyone else
    meanwhile stays theirs. Leases come back as a partial claim's do (resume at the next page).
    ``others``: (id, token) another worker adopted (shared through Redis, a survivor adopts a
    stopped worker's keywords without a new claim): left to it.
    """
    held_set, others_set = set(held), set(others)
    return store.retrying(lambda: _take_back(store, source, crawler_id, held_set, others_set))


def _take_back(
    store: StoreView, source: str, crawler_id: str, held: set[LeaseKey], others: set[LeaseKey]
) -> list[Lease]:
    now = store.clock()
    day = today(now, store.tz)
    stmt = (
        select(*LEASE_COLUMNS)
        .where(
            c.source == source,
            c.crawler_id == crawler_id,
            c.last_requested_date == day,
            c.crawl_status.in_(("crawling", "partial")),
        )
        .order_by(c.id)
    )
    if store.row_locks:
        stmt = stmt.with_for_update(skip_locked=True)
    leases: list[Lease] = []
    with store.engine.begin() as conn:
        for r in conn.execute(stmt).all():
            if r.crawl_status == "partial" and (r.id, r.lease_token) not in held:
                continue  # given back for good (a block, an outage): today's claim rules decide
            if (r.id, r.lease_token) in others:
                continue
            token = new_lease_token(r.lease_token)
            taken = conn.execute(
                update(K)
                .where(
                    c.id == r.id,
                    c.lease_token == r.lease_token,
                    c.crawler_id == crawler_id,
                    c.crawl_status == r.crawl_status,
                )
                .values(
                    crawl_status="crawling",
                    lease_token=token,
                    heartbeat_at=now,
                    last_requested_at=now,
                    updated_at=now,
                )
            ).rowcount
            if taken == 1:
                leases.append(replace(lease_of(source, r, "resumed"), lease_token=token))
    return leases


def adopt_held(store: StoreView, source: str, stopped: str, crawler_id: str) -> list[Lease]:
    """The keywords of ``source`` that ``stopped`` holds, ``crawling``, now held by ``crawler_id``
    under the same tokens (shared through Redis: a survivor takes over a stopped worker's
    keywords, those it claimed and had not yet listed in Redis too)."""

    def write() -> list[Lease]:
        with store.engine.begin() as conn:
            held = held_by(source, stopped)
            ids = conn.execute(select(c.id).where(held)).scalars().all()
            if not ids:
                return []
            conn.execute(update(K).where(held, c.id.in_(ids)).values(crawler_id=crawler_id))
            taken = and_(c.id.in_(ids), c.crawler_id == crawler_id, c.crawl_status == "crawling")
            rows = conn.execute(select(*LEASE_COLUMNS).where(taken).order_by(c.id)).all()
        return [lease_of(source, r) for r in rows]

    return store.retrying(write)
