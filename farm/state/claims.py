"""Claims: which keywords a claim may take, in which order, and taking them under new tokens.

One set of claim rules (``claimable``, ``candidates``, ``ordered``) serves every claim, the
take-back of a stopped crawl, a survivor's adoption of a stopped worker's keywords, the
``outlook`` of an empty claim and the keyword API's listing of what a claim would take.

A claim hands out leases atomically (``SELECT … FOR UPDATE SKIP LOCKED`` on MySQL/MariaDB and
PostgreSQL, one ``BEGIN IMMEDIATE`` write transaction on SQLite), each under a new random token that
fences every later write about the keyword (see farm.state.lease.new_lease_token).
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Sequence
from dataclasses import dataclass, replace
from datetime import UTC, date, datetime, timedelta
from typing import TYPE_CHECKING, Any, TypeAlias

from sqlalchemy import (
    BindParameter,
    ColumnElement,
    CompoundSelect,
    Integer,
    Select,
    Update,
    and_,
    bindparam,
    case,
    func,
    literal,
    or_,
    select,
    union_all,
    update,
)
from sqlalchemy.engine import Connection, Row

from farm.state.clock import today
from farm.state.lease import Lease, new_lease_token, parse_pages
from farm.state.models import Keyword

if TYPE_CHECKING:
    from farm.state.store import KeywordStore

K = Keyword.__table__
c = K.c

KINDS = ("partial", "failed", "fresh")  # claim order
MYSQL = ("mysql", "mariadb")
ROW_LOCKS = (*MYSQL, "postgresql")  # SELECT … FOR UPDATE [SKIP LOCKED]; SQLite locks the whole file

LEASE_COLUMNS = (
    c.id,
    c.city,
    c.job,
    c.crawl_status,
    c.last_requested_date,
    c.lease_token,
    c.last_completed_page,
    c.total_pages,
    c.pages_ahead,
    c.retry_count,
)
# rows and statements of any columns: a row is read by its columns' names (LEASE_COLUMNS', a pick's ``kind``)
AnyRow: TypeAlias = Row[*tuple[Any, ...]]
AnySelect: TypeAlias = Select[*tuple[Any, ...]]
# what picks() makes: a SELECT per kind, or on MySQL/MariaDB their UNION ALL
Pick: TypeAlias = AnySelect | CompoundSelect[*tuple[Any, ...]]
# (id, lease_token) of a lease
LeaseKey: TypeAlias = tuple[int, int]


@dataclass(frozen=True)
class Outlook:
    claimable: int  # rows a claim could take now
    next_retry_at: datetime | None  # when the first failed row waiting for FARM_RETRY_DELAY comes due


def aware(value: datetime | None) -> datetime | None:
    """A time read raw (an aggregate, no UtcDateTime) comes back as the database's naive UTC."""
    if value is None or value.tzinfo is not None:
        return value
    return value.replace(tzinfo=UTC)


def claimable(kind: str) -> ColumnElement[bool]:
    """Which rows of one kind a claim may take now (bound: source, day, now, cutoff, max_retries,
    max_blocked, skip_partial)."""
    source: BindParameter[str] = bindparam("source")
    day: BindParameter[date] = bindparam("day")
    if kind == "partial":  # ix_keyword_status: (source, 'partial', day) in id order
        return and_(
            c.source == source,
            c.crawl_status == "partial",
            c.last_requested_date == day,
            c.id.not_in(bindparam("skip_partial", expanding=True)),
        )
    if kind == "failed":  # ix_keyword_status: (source, 'failed', day) in id order
        return and_(
            c.source == source,
            c.crawl_status == "failed",
            c.last_requested_date == day,
            c.retry_count < bindparam("max_retries"),
            c.blocked_claims < bindparam("max_blocked"),
            or_(c.retry_at.is_(None), c.retry_at <= bindparam("now")),
        )
    # fresh: not requested today, and not held under a live heartbeat (a crawl running
    # across midnight keeps yesterday's keyword until it ends it)
    return and_(
        c.source == source,
        or_(c.last_requested_date.is_(None), c.last_requested_date != day),
        or_(c.crawl_status != "crawling", c.heartbeat_at.is_(None), c.heartbeat_at < bindparam("cutoff")),
    )


def candidates(kind: str, limit: int | BindParameter[int], dialect: str, lock: bool = True) -> AnySelect:
    """The rows of one kind a claim may take, in claim order (locked with SKIP LOCKED on MySQL/MariaDB
    and PostgreSQL when ``lock``)."""
    stmt = select(literal(KINDS.index(kind)).label("kind"), *LEASE_COLUMNS).where(claimable(kind))
    if kind == "fresh":  # walks ix_keyword_fresh (source, last_requested_date, id) in order, no sort
        stmt = stmt.order_by(c.last_requested_date, c.id)
    else:
        stmt = stmt.order_by(c.id)
    stmt = stmt.limit(limit)
    if dialect in MYSQL:
        # the optimizer may otherwise pick another index and sort; the claim order is the index order
        index = "ix_keyword_fresh" if kind == "fresh" else "ix_keyword_status"
        stmt = stmt.with_hint(K, f"FORCE INDEX ({index})")
    if lock and dialect in ROW_LOCKS:
        stmt = stmt.with_for_update(skip_locked=True)
    return stmt


def picks(dialect: str, lock: bool = True) -> Sequence[Pick]:
    """The statements that pick up to ``n`` rows of each kind, run in turn until ``n`` are found."""
    n = bindparam("n", type_=Integer)
    if dialect in MYSQL:
        # one round trip: up to n rows of each kind, each branch locking with SKIP LOCKED;
        # rows of a later kind that are not taken stay locked only until this commit
        return [union_all(*(candidates(kind, n, dialect, lock) for kind in KINDS))]
    statements = [candidates(kind, n, dialect, lock) for kind in KINDS]
    if dialect == "postgresql":
        # PostgreSQL sorts (and indexes) NULLs last: the never requested are picked first, apart,
        # each part in ix_keyword_fresh's order
        fresh = statements.pop()
        statements += [fresh.where(c.last_requested_date.is_(None)), fresh.where(c.last_requested_date.is_not(None))]
    return statements


def takes() -> dict[str, Update]:
    """Per kind, the UPDATE that takes picked rows (bound: ids, day, now, crawler_id; the new
    tokens are set per claim)."""
    common: dict[str, Any] = dict(
        crawl_status="crawling",
        last_requested_date=bindparam("day"),
        last_requested_at=bindparam("now"),
        crawler_id=bindparam("crawler_id"),
        crawl_started_at=bindparam("now"),
        heartbeat_at=bindparam("now"),
        updated_at=bindparam("now"),
    )
    values = {
        "partial": common,
        "failed": dict(common, retry_count=c.retry_count + 1),
        "fresh": dict(
            common,
            last_completed_page=0,
            total_pages=None,
            jobs_found=0,
            error_message=None,
            retry_count=0,
            pages_ahead="",
            retry_at=None,
            blocked_claims=0,
        ),
    }
    ids: BindParameter[list[int]] = bindparam("ids", expanding=True)
    return {kind: update(K).where(c.id.in_(ids)).values(v) for kind, v in values.items()}


def params(store: KeywordStore, source: str, now: datetime, skip_partial: Iterable[int] = ()) -> dict[str, Any]:
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


def pick(conn: Connection, statements: Sequence[Pick], bound: dict[str, Any], n: int) -> list[AnyRow]:
    """Up to ``n`` claimable rows in claim order: kind, then (for fresh rows) never requested
    first, the oldest request, id."""
    picked: list[AnyRow] = []
    for stmt in statements:
        picked.extend(conn.execute(stmt, {**bound, "n": n}).all())
        if len(picked) >= n:
            break
    day: date = bound["day"]
    picked.sort(key=lambda r: (r.kind, r.last_requested_date is not None, r.last_requested_date or day, r.id))
    return picked[:n]


def claim(
    store: KeywordStore,
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
        return store._claim(source, crawler_id, n, skip_partial)

    return store._retrying(attempt)


def take(store: KeywordStore, source: str, crawler_id: str, n: int, skip_partial: Iterable[int]) -> list[Lease]:
    """One claim's transaction: pick, then take each picked row under a new token."""
    now = store.clock()
    bound = params(store, source, now, skip_partial)
    with store.engine.begin() as conn:
        picked = pick(conn, store._picks, bound, n)
        tokens = {r.id: new_lease_token(r.lease_token) for r in picked}
        for kind_index, kind in enumerate(KINDS):
            ids = [r.id for r in picked if r.kind == kind_index]
            if ids:
                update_ = store._takes[kind].values(lease_token=case({i: tokens[i] for i in ids}, value=c.id))
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


def listing(store: KeywordStore, source: str, limit: int, skip_partial: Iterable[int] = ()) -> list[AnyRow]:
    """Up to ``limit`` rows a claim of ``source`` would take now, in the order it would take
    them, without taking them (each row's ``kind`` indexes KINDS)."""
    bound = params(store, source, store.clock(), skip_partial)
    with store.engine.connect() as conn:
        return pick(conn, store._peeks, bound, limit)


def outlook(store: KeywordStore, source: str, skip_partial: Iterable[int] = ()) -> Outlook:
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

    rows, retry_at = store._retrying(read)
    return Outlook(rows, aware(retry_at))


def held_by(source: str, crawler_id: str) -> ColumnElement[bool]:
    """The rows of ``source`` being crawled under ``crawler_id``."""
    return and_(c.source == source, c.crawler_id == crawler_id, c.crawl_status == "crawling")


def held_beyond(store: KeywordStore, source: str, crawler_id: str, held: Collection[LeaseKey]) -> list[Lease]:
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
    store: KeywordStore,
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
    return store._retrying(lambda: _take_back(store, source, crawler_id, held_set, others_set))


def _take_back(
    store: KeywordStore, source: str, crawler_id: str, held: set[LeaseKey], others: set[LeaseKey]
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
    if store._row_locks:
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


def adopt_held(store: KeywordStore, source: str, stopped: str, crawler_id: str) -> list[Lease]:
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

    return store._retrying(write)
