"""Page progress and ends: every write a lease's holder makes, each fenced by (id, lease_token).

A write about a keyword changes nothing once another claim has given it a new token. Postings,
pages and ends go in ONE transaction (``write_batch``) so that a page is never recorded done
while its postings could still be lost, and an end never fences a page fetched before it.

A page write may carry ``site_total``, the postings the site says the keyword holds (the count its
answers carry, past any page cap: ``farm stats`` and the report set it against what the cap let
farm take). It travels with the page, not with the keyword's end: the write that completes a
keyword is a page write, so the count is committed with the very pages it was read beside, and a
kill at any moment leaves the row with the count of the pages it has done. The latest told wins;
a write without one (a site that tells none) leaves it as it was, but for the first pages a row
records (none done yet: a fresh claim, a new day): they replace the count of an earlier day, told
or not, so a row's count is always one of its own pages'. Claims leave the column alone.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from datetime import datetime
from typing import TYPE_CHECKING, Any

from sqlalchemy import ColumnElement, Integer, and_, bindparam, select, update
from sqlalchemy.engine import Connection

from farm.display import escape
from farm.state.lease import ENDS, BatchResult, DonePage, EndAsked, Lease, PageWrite, format_pages, parse_pages
from farm.state.models import Keyword, site_count
from farm.state.postings import upsert_postings

if TYPE_CHECKING:
    from farm.state.storeview import StoreView

K = Keyword.__table__
c = K.c

ERROR_MAX = 2000  # characters of an error message kept in the row
# jobs_found + the jobs a write adds, built once: SQLAlchemy builds ``column + number`` with a
# reference cycle (its bound parameter and that parameter's comparator) that only the garbage
# collector frees. One a lease a frame, 0.9 kB each, piled up to some 10 MB in the state writer
# between two of its rare collections (farm.heap).
JOBS_ADDED = "jobs_added"
ADD_JOBS = c.jobs_found + bindparam(JOBS_ADDED, type_=Integer)
# one page of a lease, as _lease_pages_done applies it: (its place in the batch, page, jobs,
# total_pages, the site's count of postings)
_Page = tuple[int, int, int, int | None, int | None]


def fence(lease: Lease) -> ColumnElement[bool]:
    """The row ``lease`` may write: its keyword, under its token, still being crawled."""
    return and_(c.id == lease.id, c.lease_token == lease.lease_token, c.crawl_status == "crawling")


def truncate(message: object, limit: int = ERROR_MAX) -> str | None:
    """An error message as stored: control characters escaped (a client's or a site's text moves
    no cursor of whoever reads it later), cut to ``limit``."""
    if message is None:
        return None
    text = escape(str(message))
    return text if len(text) <= limit else text[: limit - 1] + "…"


def write_batch(
    store: StoreView,
    postings: list[dict[str, Any]],
    pages: Sequence[DonePage],
    now: datetime,
    ends: Iterable[EndAsked] = (),
) -> BatchResult:
    """Postings upserted, then pages recorded done, then keywords ended, in ONE transaction.

    A crawl sends a page's progress with its postings or after them, and a keyword's
    end after the progress of every page it fetched: so a page is never recorded
    done while its postings could still be lost, and an end never fences a page
    fetched before it. ``ends`` are (lease, kind, message), kind one of ENDS.
    ``pages`` are (lease, page, jobs, total_pages[, site_total]): the watermark (last_completed_page)
    only moves over pages 1..N all done; later pages wait in pages_ahead. A page
    reported again adds no jobs. When the watermark reaches the known total, the
    same write completes the row.
    """

    def write() -> BatchResult:
        with store.engine.begin() as conn:
            written, rejected = upsert_postings(conn, postings, now) if postings else (0, [])
            page_writes = _pages_done(store, conn, now, pages)
            ended = [_end(store, conn, now, lease, kind, message) for lease, kind, message in ends]
            return BatchResult(written, page_writes, ended, rejected)

    return store.retrying(write)


def _pages_done(store: StoreView, conn: Connection, now: datetime, pages: Sequence[DonePage]) -> list[PageWrite]:
    by_lease: dict[tuple[int, int], list[_Page]] = {}
    leases: dict[tuple[int, int], Lease] = {}
    for at, (lease, page, jobs, total, *told) in enumerate(pages):
        leases[lease.key] = lease
        by_lease.setdefault(lease.key, []).append((at, int(page), int(jobs), total, told[0] if told else None))
    results: dict[int, PageWrite] = {}
    for key, lease_pages in by_lease.items():
        for at, result in _lease_pages_done(store, conn, now, leases[key], lease_pages):
            results[at] = result
    return [results[at] for at in range(len(pages))]


def _lease_pages_done(
    store: StoreView, conn: Connection, now: datetime, lease: Lease, pages: list[_Page]
) -> list[tuple[int, PageWrite]]:
    """Apply one lease's pages, in order: one read, at most one fenced write."""
    stmt = select(
        c.lease_token,
        c.crawl_status,
        c.last_completed_page,
        c.total_pages,
        c.pages_ahead,
    ).where(c.id == lease.id)
    if store.row_locks:
        stmt = stmt.with_for_update()
    row = conn.execute(stmt).first()
    if row is None or row.lease_token != lease.lease_token or row.crawl_status != "crawling":
        mark = lease.start_page - 1 if row is None else row.last_completed_page
        total = lease.total_pages if row is None else row.total_pages
        return [(at, PageWrite(False, False, mark, total, False)) for at, *_ in pages]
    mark, total = row.last_completed_page, row.total_pages
    ahead = set(parse_pages(row.pages_ahead))
    first = mark == 0 and not ahead  # no page done yet: its count is an earlier day's
    jobs_found, completed, total_told = 0, False, False
    site_total: int | None = None
    results: list[tuple[int, PageWrite]] = []
    for at, page, jobs, total_pages, told in pages:
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
        if site_count(told) is not None:
            site_total = site_count(told)
        completed = total is not None and mark >= total
        results.append((at, PageWrite(True, counted, mark, total, completed)))
    values: dict[str, Any] = dict(
        last_completed_page=mark,
        pages_ahead=format_pages(ahead),
        heartbeat_at=now,
        updated_at=now,
    )
    if jobs_found:
        values["jobs_found"] = ADD_JOBS
    if total_told:
        values["total_pages"] = total
    if site_total is not None or first:
        values["site_total"] = site_total
    if completed:
        values["crawl_status"] = "completed"
    conn.execute(update(K).where(fence(lease)).values(values), {JOBS_ADDED: jobs_found} if jobs_found else None)
    return results


def fenced_update(store: StoreView, lease: Lease, **values: Any) -> bool:
    """``values`` written to the lease's row in their own transaction; False when fenced."""
    values["updated_at"] = store.clock()

    def write() -> bool:
        with store.engine.begin() as conn:
            return conn.execute(update(K).where(fence(lease)).values(values)).rowcount == 1

    return store.retrying(write)


def _end(store: StoreView, conn: Connection, now: datetime, lease: Lease, kind: str, message: object) -> str | None:
    """End the lease's keyword; the status written, or None when the lease is no longer current."""
    if kind not in ENDS:
        raise ValueError(f"unknown end {kind!r} (one of {', '.join(ENDS)})")
    stmt = select(c.lease_token, c.crawl_status, c.blocked_claims).where(c.id == lease.id)
    if store.row_locks:
        stmt = stmt.with_for_update()
    row = conn.execute(stmt).first()
    if row is None or row.lease_token != lease.lease_token:
        return None
    if row.crawl_status != "crawling":
        # the lease's last page already completed it
        return "completed" if kind == "completed" and row.crawl_status == "completed" else None
    values: dict[str, Any] = {"updated_at": now}
    if kind == "completed":
        values.update(crawl_status="completed", heartbeat_at=now)
    elif kind == "failed":
        values.update(crawl_status="failed", error_message=truncate(message), retry_at=now + store.retry_delay)
    elif kind == "blocked":
        blocked = row.blocked_claims + 1
        values["blocked_claims"] = blocked
        if blocked >= store.max_blocked_claims:
            # a keyword the site blocks all day is not claimed again today
            values.update(
                crawl_status="failed", error_message=truncate(f"blocked {blocked} times today; last: {message}")
            )
        else:
            values.update(crawl_status="partial", error_message=truncate(f"blocked: {message}"))
    else:  # released
        values.update(crawl_status="partial", error_message=truncate(message))
    conn.execute(update(K).where(fence(lease)).values(values))
    status: str = values["crawl_status"]
    return status
