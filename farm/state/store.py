"""The keyword store: the one owner of every write to the ``keyword`` table.

A thin front over the store's jobs, each its own module: claims, take-back and adoption
(farm.state.claims, by the rules of farm.state.claimrules), page progress and ends
(farm.state.pagewrites), heartbeats and the reap (farm.state.upkeep), reads (farm.state.reads),
keyword imports (farm.state.keywords), and the retry policy every short transaction runs under
(farm.state.retry). Each job sees the store as a farm.state.storeview.StoreView. Transactions are
short and never span a callback.
"""

from collections.abc import Callable, Collection, Iterable, Sequence
from datetime import date, datetime, timedelta
from typing import Any, TypeVar

from sqlalchemy.engine import Engine

import farm.state.claimrules as claimrules
import farm.state.claims as claims
import farm.state.keywords as keywords
import farm.state.pagewrites as pagewrites
import farm.state.reads as reads
import farm.state.retry as retry
import farm.state.upkeep as upkeep
from farm.config import FarmConfig
from farm.state.claims import LeaseKey
from farm.state.clock import load_timezone, today, utcnow
from farm.state.db import make_engine
from farm.state.engine import reader
from farm.state.lease import BatchResult, DonePage, EndAsked, Lease, Outlook, PageWrite
from farm.state.reads import LeaseProgress

# what a store is made with, beside its engine and clock: FarmConfig's fields of these names
OPTIONS = ("timezone", "lease_timeout", "max_retries", "retry_delay", "max_blocked_claims", "outage_grace")

T = TypeVar("T")


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
    ) -> None:
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
        self.is_mysql = engine.dialect.name in ("mysql", "mariadb")
        self.is_postgresql = engine.dialect.name == "postgresql"
        # SELECT … FOR UPDATE [SKIP LOCKED] locks rows; SQLite's BEGIN IMMEDIATE locks the whole file
        self.row_locks = self.is_mysql or self.is_postgresql
        self.picks = claimrules.picks(engine.dialect.name)  # the claim's, locking
        self.peeks = claimrules.picks(engine.dialect.name, lock=False)  # the same rules, reading only
        self.takes = claimrules.takes()  # by claim kind, the UPDATE that takes a picked row

    @classmethod
    def from_config(cls, config: FarmConfig, engine: Engine | None = None, **overrides: Any) -> "KeywordStore":
        """The store farm's settings describe, as the CLI, the API, the crawl and the state writer
        make it: on ``engine``, or on an engine made for FARM_DB_URL with its deadlines;
        ``overrides`` (an option of OPTIONS, ``clock``) replace the settings' values."""
        if engine is None:
            engine = make_engine(config.db_url, timeout=config.db_timeout, pool_timeout=config.db_pool_timeout)
        return cls(engine, **{**{name: getattr(config, name) for name in OPTIONS}, **overrides})

    def options(self) -> dict[str, Any]:
        """What this store was made with, but the engine and the clock, by FarmConfig's field names."""
        return {name: getattr(self, name) for name in OPTIONS} | {"retry_delay": self.retry_delay.total_seconds()}

    def close(self) -> None:
        self.engine.dispose()

    def today(self) -> date:
        """The day the crawl is in: the clock's now, in FARM_TIMEZONE."""
        return today(self.clock(), self.tz)

    def retrying(self, fn: Callable[[], T]) -> T:
        """``fn``, one short transaction, under the retry policy (farm.state.retry)."""
        return retry.retrying(fn, dialect=self.engine.dialect.name, outage_grace=self.outage_grace)

    # --- claims (farm.state.claims) ---------------------------------------------

    def claim(
        self,
        source: str,
        crawler_id: str,
        n: int = 1,
        skip_partial: Iterable[int] = (),
        held: Collection[LeaseKey] | None = None,
    ) -> list[Lease]:
        """Up to ``n`` keywords of ``source``, now held by ``crawler_id``; see claims.claim."""
        return claims.claim(self, source, crawler_id, n, skip_partial, held)

    def claim_once(self, source: str, crawler_id: str, n: int, skip_partial: Iterable[int]) -> list[Lease]:
        """One claim's transaction, not retried (``claim`` retries it); see claims.take."""
        return claims.take(self, source, crawler_id, n, skip_partial)

    def claim_or_outlook(
        self,
        source: str,
        crawler_id: str,
        n: int,
        skip_partial: Iterable[int] = (),
        held: Collection[LeaseKey] | None = None,
    ) -> tuple[list[Lease], Outlook | None]:
        """``claim``, and when it takes nothing, the ``outlook``: (leases, None) or ([], Outlook)."""
        leases = self.claim(source, crawler_id, n, skip_partial=skip_partial, held=held)
        return leases, (None if leases else self.outlook(source, skip_partial=skip_partial))

    def outlook(self, source: str, skip_partial: Iterable[int] = ()) -> Outlook:
        """What a claim could hand out now, and when the next failed row comes due; see claims.outlook."""
        return claims.outlook(self, source, skip_partial)

    def claimable(self, source: str) -> int:
        """How many rows a claim could still hand out today."""
        return self.outlook(source).claimable

    def take_back(
        self, source: str, crawler_id: str, held: Iterable[LeaseKey] = (), others: Iterable[LeaseKey] = ()
    ) -> list[Lease]:
        """A stopped crawl's keywords, claimed again by it under new tokens; see claims.take_back."""
        return claims.take_back(self, source, crawler_id, held, others)

    def adopt_held(self, source: str, stopped: str, crawler_id: str) -> list[Lease]:
        """A stopped worker's keywords, now held by ``crawler_id``; see claims.adopt_held."""
        return claims.adopt_held(self, source, stopped, crawler_id)

    # --- progress and ends (farm.state.pagewrites) --------------------------------

    def page_done(
        self, lease: Lease, page: int, jobs: int, total_pages: int | None = None, site_total: int | None = None
    ) -> PageWrite:
        """Record page ``page`` of the lease as done with ``jobs`` postings; see pagewrites.write_batch."""
        return self.pages_done([(lease, page, jobs, total_pages, site_total)])[0]

    def pages_done(self, pages: Sequence[DonePage]) -> list[PageWrite]:
        """``page_done`` for many (lease, page, jobs, total_pages[, site_total]) in one transaction."""
        return self.write_batch([], pages, self.clock()).pages

    def write_batch(
        self,
        postings: list[dict[str, Any]],
        pages: Sequence[DonePage],
        now: datetime,
        ends: Iterable[EndAsked] = (),
    ) -> BatchResult:
        """Postings upserted, then pages recorded done, then keywords ended, in ONE transaction."""
        return pagewrites.write_batch(self, postings, pages, now, ends)

    def upsert_postings(self, rows: list[dict[str, Any]], now: datetime) -> int:
        """Insert new postings, update known ones; see farm.state.postings."""
        return self.write_batch(rows, [], now).postings

    def end(self, lease: Lease, kind: str, message: object = None) -> str | None:
        """End the keyword (one of ENDS) in its own transaction: the status written, or None when fenced."""
        return self.write_batch([], [], self.clock(), [(lease, kind, message)]).ends[0]

    def complete(self, lease: Lease) -> bool:
        """The keyword is done for today. True also when the lease's last page_done already completed it."""
        return self.end(lease, "completed") == "completed"

    def fail(self, lease: Lease, message: object) -> bool:
        """The keyword failed; it may be claimed again after FARM_RETRY_DELAY while retries are left."""
        return self.end(lease, "failed", message) is not None

    def release(self, lease: Lease, reason: object, blocked: bool = False) -> bool:
        """Give the keyword back unfinished (a stop, a block): the next claim resumes it."""
        return self.end(lease, "blocked" if blocked else "released", reason) is not None

    # --- upkeep (farm.state.upkeep) ---------------------------------------------

    def heartbeat(self, lease: Lease) -> bool:
        """The holder is alive; keeps the reaper away."""
        return upkeep.heartbeat(self, lease)

    def reap(self) -> int:
        """Crawling rows without a heartbeat for lease_timeout seconds become partial."""
        return upkeep.reap(self)

    # --- reads (farm.state.reads) -----------------------------------------------

    def stats(self, source: str | None = None, day: date | str | None = None) -> list[dict[str, Any]]:
        """Per source: total, used (requested on ``day``), unused, statuses and jobs of the used."""
        return reads.stats(self, source, day)

    def list_keywords(
        self, source: str | None = None, status: str | None = None, limit: int | None = None
    ) -> list[dict[str, Any]]:
        return reads.list_keywords(self, source, status, limit)

    def lease_progress(self, lease: Lease) -> LeaseProgress | None:
        """Where the lease's keyword stands, or None when it was claimed again since."""
        return reads.lease_progress(self, lease)

    def held_leases(self, source: str) -> list[tuple[Lease, str, LeaseProgress]]:
        """Every keyword of ``source`` being crawled: (its lease, its holder, where it stands)."""
        return reads.held_leases(self, source)

    def lease(self, source: str, keyword_id: int, lease_token: int) -> Lease | None:
        """The lease (id, token) while it is current."""
        return reads.lease(self, source, keyword_id, lease_token)

    # --- keywords (farm.state.keywords) -----------------------------------------

    def add_keywords(self, rows: Iterable[tuple[str, str, str]]) -> int:
        """Insert the keywords not yet in the table, validated, in one transaction; how many were new."""
        return keywords.add_keywords(self, rows)

    def import_keywords(self, rows: Iterable[tuple[str, str, str]]) -> keywords.Added:
        """``add_keywords``, telling which rows were left out as the same search as another."""
        return keywords.import_keywords(self, rows)
