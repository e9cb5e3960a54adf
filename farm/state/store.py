"""The keyword store: the one owner of every write to the ``keyword`` table.

Claims hand out leases atomically (``SELECT … FOR UPDATE SKIP LOCKED`` on
MySQL/MariaDB and PostgreSQL, one ``BEGIN IMMEDIATE`` write transaction on SQLite); every later
write about a keyword names its (id, lease_token) and changes nothing once another
claim has given it a new token (random: see new_lease_token). Transactions are short and never span a callback.
"""

import itertools
import logging
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from datetime import UTC, date, datetime, timedelta

from sqlalchemy import Integer, and_, bindparam, case, func, literal, or_, select, union_all, update
from sqlalchemy.dialects import mysql, sqlite
from sqlalchemy.engine import Engine
from sqlalchemy.exc import OperationalError
from sqlalchemy.exc import TimeoutError as PoolTimeout

from farm.display import escape
from farm.state.clock import load_timezone, today, utcnow
from farm.state.db import RETRYABLE_POSTGRESQL, make_engine, postgresql_state, postgresql_unreachable, reader
from farm.state.lease import ENDS, BatchResult, Lease, PageWrite, new_lease_token
from farm.state.models import SOURCES, STATUSES, Keyword
from farm.state.postings import upsert_postings
from farm.state.validation import validate_keyword

logger = logging.getLogger(__name__)

K = Keyword.__table__
c = K.c

COUNTED_STATUSES = ("crawling", "completed", "failed", "partial")
_KINDS = ("partial", "failed", "fresh")  # claim order
ERROR_MAX = 2000  # characters of an error message kept in the row
INSERT_CHUNK = 5000  # keyword rows per executemany
# MySQL errors worth retrying the whole (short) transaction for: deadlock, lock wait timeout
RETRYABLE_MYSQL = (1213, 1205)
# The database went away (refused, gone, lost mid-query): ridden out for the outage grace
CONNECTION_LOST_MYSQL = (2002, 2003, 2006, 2013, 2055)

_LEASE_COLUMNS = (
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


def _parse_pages(text: str | None) -> set[int]:
    return {int(p) for p in (text or "").split(",") if p.strip()}


def _format_pages(pages: Iterable[int]) -> str:
    return ",".join(str(p) for p in sorted(pages))


@dataclass(frozen=True)
class LeaseProgress:
    watermark: int  # last_completed_page
    total_pages: int | None
    pages_ahead: frozenset[int]
    status: str = "crawling"

    def missing(self) -> list[int]:
        """Pages not done up to the known total; the next one when no total is known."""
        last = self.total_pages if self.total_pages is not None else self.watermark + 1
        return [page for page in range(self.watermark + 1, last + 1) if page not in self.pages_ahead]


@dataclass(frozen=True)
class Outlook:
    claimable: int  # rows a claim could take now
    next_retry_at: datetime | None  # when the first failed row waiting for FARM_RETRY_DELAY comes due


def _aware(value: datetime | None) -> datetime | None:
    # a raw column read (no UtcDateTime) is naive UTC
    if value is None or value.tzinfo is not None:
        return value
    return value.replace(tzinfo=UTC)


def _truncate(message, limit: int = ERROR_MAX) -> str | None:
    """An error message as stored: control characters escaped (a client's or a site's text moves
    no cursor of whoever reads it later), cut to ``limit``."""
    if message is None:
        return None
    message = escape(str(message))
    return message if len(message) <= limit else message[: limit - 1] + "…"


class KeywordStore:
    def __init__(
        self,
        engine: Engine,
        *,
        timezone: str = "Asia/Shanghai",
        lease_timeout: int = 1800,
        max_retries: int = 3,
        retry_delay: float = 600,
        max_blocked_claims: int = 5,
        outage_grace: float = 0,
        clock: Callable[[], datetime] = utcnow,
    ):
        self.engine = engine
        # reads that must not wait behind writers (SQLite's write lock); never for claims or writes
        self.reader = reader(engine)
        self.timezone = timezone
        self.tz = load_timezone(timezone)
        self.lease_timeout = int(lease_timeout)
        self.max_retries = int(max_retries)
        self.retry_delay = timedelta(seconds=float(retry_delay))
        self.max_blocked_claims = int(max_blocked_claims)
        self.outage_grace = float(outage_grace)
        self.clock = clock
        self._mysql = engine.dialect.name in ("mysql", "mariadb")
        self._postgresql = engine.dialect.name == "postgresql"
        # SELECT … FOR UPDATE [SKIP LOCKED] locks rows; SQLite's BEGIN IMMEDIATE locks the whole file
        self._row_locks = self._mysql or self._postgresql
        self._build_claim_statements()

    @classmethod
    def from_settings(cls, settings) -> "KeywordStore":
        """The store of these settings, each checked by farm.config (SettingError names a bad one)."""
        from farm.config import read

        return cls(
            make_engine(
                read(settings, "db_url"),
                timeout=read(settings, "db_timeout"),
                pool_timeout=read(settings, "db_pool_timeout"),
            ),
            timezone=read(settings, "timezone"),
            lease_timeout=read(settings, "lease_timeout"),
            max_retries=read(settings, "max_retries"),
            retry_delay=read(settings, "retry_delay"),
            max_blocked_claims=read(settings, "max_blocked_claims"),
            outage_grace=read(settings, "outage_grace"),
        )

    def options(self) -> dict:
        """What this store was made with, but the engine and the clock: another process's
        store made with ``KeywordStore(make_engine(url), **options)`` writes the same way."""
        return {
            "timezone": self.timezone,
            "lease_timeout": self.lease_timeout,
            "max_retries": self.max_retries,
            "retry_delay": self.retry_delay.total_seconds(),
            "max_blocked_claims": self.max_blocked_claims,
            "outage_grace": self.outage_grace,
        }

    def close(self) -> None:
        self.engine.dispose()

    # --- time -----------------------------------------------------------------

    def today(self) -> date:
        """The day the crawl is in: the clock's now, in FARM_TIMEZONE."""
        return today(self.clock(), self.tz)

    # --- claims ---------------------------------------------------------------

    def claim(self, source: str, crawler_id: str, n: int = 1, skip_partial=(), held=None) -> list[Lease]:
        """Up to ``n`` keywords of ``source``, now held by ``crawler_id``.

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

        def attempt():
            nonlocal failed_before
            if failed_before and held is not None:
                unknown = self._held_beyond(source, crawler_id, held)
                if unknown:
                    return unknown
            failed_before = True  # until it returns
            return self._claim(source, crawler_id, n, skip_partial)

        return self._retrying(attempt)

    @staticmethod
    def _held_by(source: str, crawler_id: str):
        """The rows of ``source`` being crawled under ``crawler_id``."""
        return and_(c.source == source, c.crawler_id == crawler_id, c.crawl_status == "crawling")

    def _held_beyond(self, source: str, crawler_id: str, held) -> list[Lease]:
        stmt = select(*_LEASE_COLUMNS).where(self._held_by(source, crawler_id)).order_by(c.id)
        with self.engine.connect() as conn:
            rows = conn.execute(stmt).all()
        return [self._lease_of(source, r, "recovered") for r in rows if (r.id, r.lease_token) not in held]

    @staticmethod
    def _claimable(kind: str):
        """Which rows of one kind a claim may take now (bound: source, day, now, cutoff, max_retries,
        max_blocked, skip_partial)."""
        source, day = bindparam("source"), bindparam("day")
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

    def _candidates(self, kind: str, limit):
        """The rows of one kind a claim may take, in claim order."""
        stmt = select(literal(_KINDS.index(kind)).label("kind"), *_LEASE_COLUMNS).where(self._claimable(kind))
        if kind == "fresh":  # walks ix_keyword_fresh (source, last_requested_date, id) in order, no sort
            stmt = stmt.order_by(c.last_requested_date, c.id)
        else:
            stmt = stmt.order_by(c.id)
        stmt = stmt.limit(limit)
        if self._mysql:
            # the optimizer may otherwise pick another index and sort; the claim order is the index order
            index = "ix_keyword_fresh" if kind == "fresh" else "ix_keyword_status"
            stmt = stmt.with_hint(K, f"FORCE INDEX ({index})")
        if self._row_locks:
            stmt = stmt.with_for_update(skip_locked=True)
        return stmt

    def _params(self, source: str, now: datetime, skip_partial=()) -> dict:
        return {
            "source": source,
            "day": today(now, self.tz),
            "now": now,
            "cutoff": now - timedelta(seconds=self.lease_timeout),
            "max_retries": self.max_retries,
            "max_blocked": self.max_blocked_claims,
            "skip_partial": sorted(skip_partial),
        }

    def _build_claim_statements(self) -> None:
        n = bindparam("n", type_=Integer)
        if self._mysql:
            # one round trip: up to n rows of each kind, each branch locking with SKIP LOCKED;
            # rows of a later kind that are not taken stay locked only until this commit
            self._pick = [union_all(*(self._candidates(kind, n) for kind in _KINDS))]
        else:
            self._pick = [self._candidates(kind, n) for kind in _KINDS]
        if self._postgresql:
            # PostgreSQL sorts (and indexes) NULLs last: the never requested are picked first, apart,
            # each part in ix_keyword_fresh's order
            fresh = self._pick.pop()
            self._pick += [
                fresh.where(c.last_requested_date.is_(None)),
                fresh.where(c.last_requested_date.is_not(None)),
            ]
        common = dict(
            crawl_status="crawling",
            last_requested_date=bindparam("day"),
            last_requested_at=bindparam("now"),
            crawler_id=bindparam("crawler_id"),
            crawl_started_at=bindparam("now"),
            heartbeat_at=bindparam("now"),
            updated_at=bindparam("now"),
        )  # and a new lease_token per row, set at each claim
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
        ids = bindparam("ids", expanding=True)
        self._take = {kind: update(K).where(c.id.in_(ids)).values(v) for kind, v in values.items()}

    def _claim(self, source: str, crawler_id: str, n: int, skip_partial) -> list[Lease]:
        now = self.clock()
        params = {**self._params(source, now, skip_partial), "n": n}
        day = params["day"]
        picked = []
        with self.engine.begin() as conn:
            for stmt in self._pick:
                picked.extend(conn.execute(stmt, params).all())
                if len(picked) >= n:
                    break
            # claim order: kind, then (for fresh rows) never requested first, oldest request, id
            picked.sort(key=lambda r: (r.kind, r.last_requested_date is not None, r.last_requested_date or day, r.id))
            picked = picked[:n]
            tokens = {r.id: new_lease_token(r.lease_token) for r in picked}
            for kind_index, kind in enumerate(_KINDS):
                ids = [r.id for r in picked if r.kind == kind_index]
                if ids:
                    take = self._take[kind].values(lease_token=case({i: tokens[i] for i in ids}, value=c.id))
                    conn.execute(take, {"ids": ids, "day": day, "now": now, "crawler_id": crawler_id})
        leases = []
        for r in picked:
            kind = _KINDS[r.kind]
            if kind == "fresh":
                start, total, ahead, retries = 1, None, frozenset(), 0
            else:
                start = r.last_completed_page + 1
                total = r.total_pages
                ahead = frozenset(_parse_pages(r.pages_ahead))
                retries = r.retry_count + (1 if kind == "failed" else 0)
            leases.append(
                Lease(
                    id=r.id,
                    source=source,
                    city=r.city,
                    job=r.job,
                    lease_token=tokens[r.id],
                    start_page=start,
                    from_status=kind,
                    total_pages=total,
                    pages_ahead=ahead,
                    retry_count=retries,
                )
            )
        return leases

    def take_back(self, source: str, crawler_id: str, held=(), others=()) -> list[Lease]:
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
        held, others = set(held), set(others)
        return self._retrying(lambda: self._take_back(source, crawler_id, held, others))

    def _take_back(self, source: str, crawler_id: str, held: set, others: set) -> list[Lease]:
        now = self.clock()
        day = today(now, self.tz)
        pick = (
            select(*_LEASE_COLUMNS)
            .where(
                c.source == source,
                c.crawler_id == crawler_id,
                c.last_requested_date == day,
                c.crawl_status.in_(("crawling", "partial")),
            )
            .order_by(c.id)
        )
        if self._row_locks:
            pick = pick.with_for_update(skip_locked=True)
        leases = []
        with self.engine.begin() as conn:
            for r in conn.execute(pick).all():
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
                if taken != 1:
                    continue
                leases.append(
                    Lease(
                        id=r.id,
                        source=source,
                        city=r.city,
                        job=r.job,
                        lease_token=token,
                        start_page=r.last_completed_page + 1,
                        from_status="resumed",
                        total_pages=r.total_pages,
                        pages_ahead=frozenset(_parse_pages(r.pages_ahead)),
                        retry_count=r.retry_count,
                    )
                )
        return leases

    def claim_or_outlook(self, source: str, crawler_id: str, n: int, skip_partial=(), held=None):
        """``claim``, and when it takes nothing, the ``outlook``: (leases, None) or ([], Outlook)."""
        leases = self.claim(source, crawler_id, n, skip_partial=skip_partial, held=held)
        return leases, (None if leases else self.outlook(source, skip_partial=skip_partial))

    def outlook(self, source: str, skip_partial=()) -> "Outlook":
        """What a claim could hand out now, and when the next failed row comes due for a retry.

        SKIP LOCKED hides rows other claimers hold locked for a moment: an empty claim
        is not the end while this still counts rows.
        """
        now = self.clock()
        params = self._params(source, now, skip_partial)
        count = select(func.count()).select_from(K).where(or_(*(self._claimable(kind) for kind in _KINDS)))
        waiting = select(func.min(c.retry_at)).where(
            c.source == bindparam("source"),
            c.crawl_status == "failed",
            c.last_requested_date == bindparam("day"),
            c.retry_count < bindparam("max_retries"),
            c.blocked_claims < bindparam("max_blocked"),
            c.retry_at > bindparam("now"),
        )

        def read():
            with self.reader.connect() as conn:
                return int(conn.execute(count, params).scalar_one()), conn.execute(waiting, params).scalar_one()

        claimable, retry_at = self._retrying(read)
        return Outlook(claimable, _aware(retry_at))

    def claimable(self, source: str) -> int:
        """How many rows a claim could still hand out today."""
        return self.outlook(source).claimable

    # --- fenced writes --------------------------------------------------------

    def _fence(self, lease: Lease):
        return and_(c.id == lease.id, c.lease_token == lease.lease_token, c.crawl_status == "crawling")

    def page_done(self, lease: Lease, page: int, jobs: int, total_pages: int | None = None) -> PageWrite:
        """Record page ``page`` of the lease as done with ``jobs`` postings.

        The watermark (last_completed_page) only moves over pages 1..N all done;
        later pages wait in pages_ahead. A page reported again adds no jobs. When
        the watermark reaches the known total, the same write completes the row.
        """
        return self.pages_done([(lease, page, jobs, total_pages)])[0]

    def pages_done(self, pages) -> list[PageWrite]:
        """``page_done`` for many (lease, page, jobs, total_pages) in one transaction.

        Under load a crawler has several pages ready at once; one commit for all of
        them keeps the window between "fetched" and "recorded" short, and the pages
        of one lease cost one read and one write between them.
        """
        return self.write_batch([], pages, self.clock()).pages

    def write_batch(self, postings: list[dict], pages, now: datetime, ends=()) -> BatchResult:
        """Postings upserted, then pages recorded done, then keywords ended, in ONE transaction.

        A crawl sends a page's progress with its postings or after them, and a keyword's
        end after the progress of every page it fetched: so a page is never recorded
        done while its postings could still be lost, and an end never fences a page
        fetched before it. ``ends`` are (lease, kind, message), kind one of ENDS.
        """

        def write():
            with self.engine.begin() as conn:
                written, rejected = upsert_postings(conn, postings, now) if postings else (0, [])
                page_writes = self._pages_done(conn, now, pages)
                ended = [self._end(conn, now, lease, kind, message) for lease, kind, message in ends]
                return BatchResult(written, page_writes, ended, rejected)

        return self._retrying(write)

    def _pages_done(self, conn, now, pages) -> list[PageWrite]:
        by_lease: dict[tuple[int, int], list[tuple[int, int, int, int | None]]] = {}
        leases = {}
        for at, (lease, page, jobs, total) in enumerate(pages):
            leases[lease.key] = lease
            by_lease.setdefault(lease.key, []).append((at, int(page), int(jobs), total))
        results: list[PageWrite | None] = [None] * len(pages)
        for key, lease_pages in by_lease.items():
            for at, result in self._lease_pages_done(conn, now, leases[key], lease_pages):
                results[at] = result
        return results

    def _lease_pages_done(self, conn, now, lease: Lease, pages):
        """Apply one lease's pages, in order: one read, at most one fenced write."""
        stmt = select(
            c.lease_token,
            c.crawl_status,
            c.last_completed_page,
            c.total_pages,
            c.pages_ahead,
        ).where(c.id == lease.id)
        if self._row_locks:
            stmt = stmt.with_for_update()
        row = conn.execute(stmt).first()
        if row is None or row.lease_token != lease.lease_token or row.crawl_status != "crawling":
            mark = lease.start_page - 1 if row is None else row.last_completed_page
            total = lease.total_pages if row is None else row.total_pages
            return [(at, PageWrite(False, False, mark, total, False)) for at, _, _, _ in pages]
        mark, total = row.last_completed_page, row.total_pages
        ahead = _parse_pages(row.pages_ahead)
        jobs_found, completed, total_told = 0, False, False
        results = []
        for at, page, jobs, total_pages in pages:
            if completed:  # a page after the one that completed the keyword: as if fenced
                results.append((at, PageWrite(False, False, mark, total, False)))
                continue
            counted = page > mark and page not in ahead
            if counted:
                ahead.add(page)
                while mark + 1 in ahead:
                    mark += 1
                    ahead.discard(mark)
                jobs_found += jobs
            if total_pages is not None:
                total, total_told = int(total_pages), True
            completed = total is not None and mark >= total
            results.append((at, PageWrite(True, counted, mark, total, completed)))
        values = dict(
            last_completed_page=mark,
            pages_ahead=_format_pages(ahead),
            heartbeat_at=now,
            updated_at=now,
        )
        if jobs_found:
            values["jobs_found"] = c.jobs_found + jobs_found
        if total_told:
            values["total_pages"] = total
        if completed:
            values["crawl_status"] = "completed"
        conn.execute(update(K).where(self._fence(lease)).values(values))
        return results

    def _fenced_update(self, lease: Lease, **values) -> bool:
        values["updated_at"] = self.clock()

        def write():
            with self.engine.begin() as conn:
                return conn.execute(update(K).where(self._fence(lease)).values(values)).rowcount == 1

        return self._retrying(write)

    def _end(self, conn, now, lease: Lease, kind: str, message) -> str | None:
        """End the lease's keyword; the status written, or None when the lease is no longer current."""
        if kind not in ENDS:
            raise ValueError(f"unknown end {kind!r} (one of {', '.join(ENDS)})")
        stmt = select(c.lease_token, c.crawl_status, c.blocked_claims).where(c.id == lease.id)
        if self._row_locks:
            stmt = stmt.with_for_update()
        row = conn.execute(stmt).first()
        if row is None or row.lease_token != lease.lease_token:
            return None
        if row.crawl_status != "crawling":
            # the lease's last page already completed it
            return "completed" if kind == "completed" and row.crawl_status == "completed" else None
        values: dict = {"updated_at": now}
        if kind == "completed":
            values.update(crawl_status="completed", heartbeat_at=now)
        elif kind == "failed":
            values.update(crawl_status="failed", error_message=_truncate(message), retry_at=now + self.retry_delay)
        elif kind == "blocked":
            blocked = row.blocked_claims + 1
            values["blocked_claims"] = blocked
            if blocked >= self.max_blocked_claims:
                # a keyword the site blocks all day is not claimed again today
                values.update(
                    crawl_status="failed", error_message=_truncate(f"blocked {blocked} times today; last: {message}")
                )
            else:
                values.update(crawl_status="partial", error_message=_truncate(f"blocked: {message}"))
        else:  # released
            values.update(crawl_status="partial", error_message=_truncate(message))
        conn.execute(update(K).where(self._fence(lease)).values(values))
        return values["crawl_status"]

    def end(self, lease: Lease, kind: str, message=None) -> str | None:
        """End the keyword (one of ENDS) in its own transaction; see ``_end``."""
        return self.write_batch([], [], self.clock(), [(lease, kind, message)]).ends[0]

    def complete(self, lease: Lease) -> bool:
        """The keyword is done for today. True also when the lease's last page_done already completed it."""
        return self.end(lease, "completed") == "completed"

    def fail(self, lease: Lease, message) -> bool:
        """The keyword failed; it may be claimed again after FARM_RETRY_DELAY while retries are left."""
        return self.end(lease, "failed", message) is not None

    def release(self, lease: Lease, reason, blocked: bool = False) -> bool:
        """Give the keyword back unfinished (a stop, a block): the next claim resumes it."""
        return self.end(lease, "blocked" if blocked else "released", reason) is not None

    def heartbeat(self, lease: Lease) -> bool:
        """The holder is alive; keeps the reaper away."""
        return self._fenced_update(lease, heartbeat_at=self.clock())

    def reap(self) -> int:
        """Crawling rows without a heartbeat for lease_timeout seconds become partial.

        On MySQL/MariaDB and PostgreSQL the stale rows are picked with SKIP LOCKED, like claims: a row
        another crawler holds locked is being claimed or written right now, and a reap
        must not wait behind it (nor hold a crawler's database thread while it waits).
        """
        now = self.clock()
        cutoff = now - timedelta(seconds=self.lease_timeout)
        message = f"reaped at {now.isoformat(timespec='seconds')}: no heartbeat for {self.lease_timeout}s"
        stale = and_(c.crawl_status == "crawling", or_(c.heartbeat_at.is_(None), c.heartbeat_at < cutoff))

        def write():
            with self.engine.begin() as conn:
                if self._row_locks:
                    pick = select(c.id).where(stale).with_for_update(skip_locked=True)
                    ids = conn.execute(pick).scalars().all()
                    if not ids:
                        return 0
                    where = and_(c.id.in_(ids), stale)
                else:
                    where = stale
                stmt = update(K).where(where).values(crawl_status="partial", error_message=message, updated_at=now)
                return conn.execute(stmt).rowcount

        reaped = self._retrying(write)
        if reaped:
            logger.info("reaped %d stale lease(s) (no heartbeat for %ss)", reaped, self.lease_timeout)
        return reaped

    # --- reading --------------------------------------------------------------

    def stats(self, source: str | None = None, day: date | str | None = None) -> list[dict]:
        """Per source: total, used (requested on ``day``), unused, statuses and jobs of the used."""
        if day is None:
            day = self.today()
        elif isinstance(day, str):
            day = date.fromisoformat(day)
        sources = list(SOURCES) if source is None else [source]
        totals_q = select(c.source, func.count()).where(c.source.in_(sources)).group_by(c.source)
        used_q = (
            select(c.source, c.crawl_status, func.count(), func.coalesce(func.sum(c.jobs_found), 0))
            # every status named: the day's rows are found through ix_keyword_status, not scanned for
            .where(c.source.in_(sources), c.crawl_status.in_(STATUSES), c.last_requested_date == day)
            .group_by(c.source, c.crawl_status)
        )
        with self.reader.connect() as conn:
            totals = dict(conn.execute(totals_q).all())
            used_rows = conn.execute(used_q).all()
        out = {
            s: {
                "date": day.isoformat(),
                "source": s,
                "total": int(totals.get(s, 0)),
                "used": 0,
                "unused": 0,
                "crawl_status": {status: 0 for status in COUNTED_STATUSES},
                "jobs_found": 0,
            }
            for s in sources
        }
        for s, status, count, jobs in used_rows:
            entry = out[s]
            entry["used"] += int(count)
            entry["jobs_found"] += int(jobs)
            if status in entry["crawl_status"]:
                entry["crawl_status"][status] += int(count)
        for entry in out.values():
            entry["unused"] = entry["total"] - entry["used"]
        return [out[s] for s in sources]

    def list_keywords(
        self, source: str | None = None, status: str | None = None, limit: int | None = None
    ) -> list[dict]:
        stmt = select(K).order_by(c.id)
        if source is not None:
            stmt = stmt.where(c.source == source)
        if status is not None:
            stmt = stmt.where(c.crawl_status == status)
        if limit is not None:
            stmt = stmt.limit(int(limit))
        with self.reader.connect() as conn:
            return [dict(r._mapping) for r in conn.execute(stmt)]

    # --- leases shared between workers (FARM_REDIS_URL) -------------------------

    def lease_progress(self, lease: Lease) -> "LeaseProgress | None":
        """Where the lease's keyword stands (its status too: it may have ended), or None when the
        keyword was claimed again since (another token)."""
        stmt = select(c.crawl_status, c.last_completed_page, c.total_pages, c.pages_ahead).where(
            c.id == lease.id, c.lease_token == lease.lease_token
        )
        row = self._retrying(lambda: self._first(stmt))
        if row is None:
            return None
        return LeaseProgress(
            row.last_completed_page, row.total_pages, frozenset(_parse_pages(row.pages_ahead)), row.crawl_status
        )

    def held_leases(self, source: str) -> list[tuple[Lease, str, "LeaseProgress"]]:
        """Every keyword of ``source`` being crawled: (its lease, its holder, where it stands)."""
        stmt = select(*_LEASE_COLUMNS, c.crawler_id).where(c.source == source, c.crawl_status == "crawling")
        with self.reader.connect() as conn:
            rows = conn.execute(stmt).all()
        return [
            (
                self._lease_of(source, r),
                r.crawler_id,
                LeaseProgress(r.last_completed_page, r.total_pages, frozenset(_parse_pages(r.pages_ahead))),
            )
            for r in rows
        ]

    def adopt_held(self, source: str, stopped: str, crawler_id: str) -> list[Lease]:
        """The keywords of ``source`` that ``stopped`` holds, ``crawling``, now held by ``crawler_id``
        under the same tokens (shared through Redis: a survivor takes over a stopped worker's
        keywords, those it claimed and had not yet listed in Redis too)."""

        def write():
            with self.engine.begin() as conn:
                held = self._held_by(source, stopped)
                ids = conn.execute(select(c.id).where(held)).scalars().all()
                if not ids:
                    return []
                conn.execute(update(K).where(held, c.id.in_(ids)).values(crawler_id=crawler_id))
                taken = and_(c.id.in_(ids), c.crawler_id == crawler_id, c.crawl_status == "crawling")
                rows = conn.execute(select(*_LEASE_COLUMNS).where(taken).order_by(c.id)).all()
            return [self._lease_of(source, r) for r in rows]

        return self._retrying(write)

    def lease(self, source: str, keyword_id: int, lease_token: int) -> Lease | None:
        """The lease (id, token) while it is current: for a worker that takes over a dead one's keywords."""
        stmt = select(*_LEASE_COLUMNS).where(
            c.id == keyword_id, c.lease_token == lease_token, c.crawl_status == "crawling"
        )
        with self.reader.connect() as conn:
            row = conn.execute(stmt).first()
        return None if row is None else self._lease_of(source, row)

    def _first(self, stmt):
        with self.reader.connect() as conn:
            return conn.execute(stmt).first()

    @staticmethod
    def _lease_of(source: str, r, from_status: str = "adopted") -> Lease:
        return Lease(
            id=r.id,
            source=source,
            city=r.city,
            job=r.job,
            lease_token=r.lease_token,
            start_page=r.last_completed_page + 1,
            from_status=from_status,
            total_pages=r.total_pages,
            pages_ahead=frozenset(_parse_pages(r.pages_ahead)),
            retry_count=r.retry_count,
        )

    # --- writes outside leases ------------------------------------------------

    def add_keywords(self, rows: Iterable[tuple[str, str, str]]) -> int:
        """Insert the keywords not yet in the table, all in one transaction.

        Every row is validated first (KeywordError names the first bad one, and
        nothing is written); rows already present are skipped. Returns how many
        were inserted.
        """
        seen: set[tuple[str, str, str]] = set()
        params: list[dict] = []
        now = self.clock()
        for row in rows:
            key = validate_keyword(*row)
            if key in seen:
                continue
            seen.add(key)
            params.append({"source": key[0], "city": key[1], "job": key[2], "created_at": now, "updated_at": now})
        if not params:
            return 0
        if self._mysql:
            stmt = mysql.insert(K).prefix_with("IGNORE")
        elif self.engine.dialect.name == "sqlite":
            stmt = sqlite.insert(K).on_conflict_do_nothing(index_elements=["source", "city", "job"])
        else:
            from sqlalchemy.dialects import postgresql

            # psycopg's executemany counts no rows: the inserted ones are counted by their ids
            stmt = postgresql.insert(K).on_conflict_do_nothing(index_elements=["source", "city", "job"]).returning(c.id)
        inserted = 0
        with self.engine.begin() as conn:
            for start in range(0, len(params), INSERT_CHUNK):
                result = conn.execute(stmt, params[start : start + INSERT_CHUNK])
                inserted += len(result.all()) if result.returns_rows else max(result.rowcount, 0)
        return inserted

    def upsert_postings(self, rows: list[dict], now: datetime) -> int:
        """Insert new postings, update known ones; see farm.state.postings."""
        return self.write_batch(rows, [], now).postings

    # --- helpers --------------------------------------------------------------

    def _retrying(self, fn, attempts: int = 5):
        """Run one short transaction, again after a deadlock or lock wait timeout (PostgreSQL: or a
        serialization failure), and again
        while the database is unreachable, for up to outage_grace seconds (then the error stands).

        Unreachable: refused, gone, lost mid-query, silent past FARM_DB_TIMEOUT (PyMySQL's read
        deadline is a lost connection), or no pooled connection free within FARM_DB_POOL_TIMEOUT
        (every one of them waiting on a server that does not answer)."""
        deadline, pause = None, 0.2
        for attempt in itertools.count():
            try:
                return fn()
            except (OperationalError, PoolTimeout) as exc:
                code = _mysql_code(exc) if self._mysql else postgresql_state(exc)
                conflict = code in RETRYABLE_MYSQL if self._mysql else code in RETRYABLE_POSTGRESQL
                if self._row_locks and conflict and attempt < attempts - 1:
                    logger.debug("retrying after database error %s (attempt %d)", code, attempt + 1)
                    time.sleep(0.01 * (attempt + 1))
                    continue
                unreachable = (
                    isinstance(exc, PoolTimeout)
                    or exc.connection_invalidated
                    or (self._mysql and code in CONNECTION_LOST_MYSQL)
                    or (self._postgresql and postgresql_unreachable(exc))
                )
                if not unreachable:
                    raise
                deadline = deadline or time.monotonic() + self.outage_grace
                if time.monotonic() >= deadline:
                    raise
                logger.warning("the database is unreachable (%s); trying again in %.1fs", _first_line(exc), pause)
                time.sleep(pause)
                pause = min(pause * 2, 5.0)


def _mysql_code(exc) -> int | None:
    orig = getattr(exc, "orig", None)  # a pool timeout has none
    return orig.args[0] if orig is not None and orig.args else None


def _first_line(exc) -> str:
    orig = exc.orig if getattr(exc, "orig", None) is not None else exc
    return (str(orig).strip().splitlines() or [type(orig).__name__])[0]
