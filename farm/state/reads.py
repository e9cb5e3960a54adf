"""Reads of the keyword table: the day's stats, listings, and where a lease stands."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date
from typing import TYPE_CHECKING, Any

from sqlalchemy import func, select

from farm.sites import known_sources
from farm.state.claimrules import LEASE_COLUMNS
from farm.state.claims import lease_of
from farm.state.lease import Lease, parse_pages
from farm.state.models import STATUSES, Keyword

if TYPE_CHECKING:
    from sqlalchemy.engine import Row

    from farm.state.storeview import StoreView

K = Keyword.__table__
c = K.c

COUNTED_STATUSES = ("crawling", "completed", "failed", "partial")


@dataclass(frozen=True)
class LeaseProgress:
    watermark: int  # last_completed_page
    total_pages: int | None
    pages_ahead: frozenset[int]
    status: str = "crawling"

    def done(self) -> list[int]:
        """Pages done: up to the watermark, and those done ahead of it."""
        return sorted({*range(1, self.watermark + 1), *self.pages_ahead})

    def missing(self) -> list[int]:
        """Pages not done up to the known total; the next one when no total is known."""
        last = self.total_pages if self.total_pages is not None else self.watermark + 1
        return [page for page in range(self.watermark + 1, last + 1) if page not in self.pages_ahead]


def stats(store: StoreView, source: str | None = None, day: date | str | None = None) -> list[dict[str, Any]]:
    """Per source: total, used (requested on ``day``), unused, statuses and jobs of the used."""
    if day is None:
        day = store.today()
    elif isinstance(day, str):
        day = date.fromisoformat(day)
    sources = list(known_sources()) if source is None else [source]
    totals_q = select(c.source, func.count()).where(c.source.in_(sources)).group_by(c.source)
    used_q = (
        select(c.source, c.crawl_status, func.count(), func.coalesce(func.sum(c.jobs_found), 0))
        # every status named: the day's rows are found through ix_keyword_status, not scanned for
        .where(c.source.in_(sources), c.crawl_status.in_(STATUSES), c.last_requested_date == day)
        .group_by(c.source, c.crawl_status)
    )
    with store.reader.connect() as conn:
        totals: dict[str, int] = dict(conn.execute(totals_q).all())
        used_rows = conn.execute(used_q).all()
    out: dict[str, dict[str, Any]] = {
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
    store: StoreView, source: str | None = None, status: str | None = None, limit: int | None = None
) -> list[dict[str, Any]]:
    stmt = select(K).order_by(c.id)
    if source is not None:
        stmt = stmt.where(c.source == source)
    if status is not None:
        stmt = stmt.where(c.crawl_status == status)
    if limit is not None:
        stmt = stmt.limit(int(limit))
    with store.reader.connect() as conn:
        return [dict(r._mapping) for r in conn.execute(stmt)]


def lease_progress(store: StoreView, lease: Lease) -> LeaseProgress | None:
    """Where the lease's keyword stands (its status too: it may have ended), or None when the
    keyword was claimed again since (another token)."""
    stmt = select(c.crawl_status, c.last_completed_page, c.total_pages, c.pages_ahead).where(
        c.id == lease.id, c.lease_token == lease.lease_token
    )

    def read() -> Row[str, int, int | None, str] | None:
        with store.reader.connect() as conn:
            return conn.execute(stmt).first()

    row = store.retrying(read)
    if row is None:
        return None
    return LeaseProgress(row.last_completed_page, row.total_pages, parse_pages(row.pages_ahead), row.crawl_status)


def held_leases(store: StoreView, source: str) -> list[tuple[Lease, str, LeaseProgress]]:
    """Every keyword of ``source`` being crawled: (its lease, its holder, where it stands)."""
    stmt = select(*LEASE_COLUMNS, c.crawler_id).where(c.source == source, c.crawl_status == "crawling")
    with store.reader.connect() as conn:
        rows = conn.execute(stmt).all()
    return [
        (
            lease_of(source, r),
            r.crawler_id,
            LeaseProgress(r.last_completed_page, r.total_pages, parse_pages(r.pages_ahead)),
        )
        for r in rows
    ]


def lease(store: StoreView, source: str, keyword_id: int, lease_token: int) -> Lease | None:
    """The lease (id, token) while it is current: for a worker that takes over a dead one's keywords."""
    stmt = select(*LEASE_COLUMNS).where(c.id == keyword_id, c.lease_token == lease_token, c.crawl_status == "crawling")
    with store.reader.connect() as conn:
        row = conn.execute(stmt).first()
    return None if row is None else lease_of(source, row)
