"""The claim rules as SQL: which keyword rows a claim may take now, and in which order.

One set of rules (``claimable``, ``candidates``, ``picks``, ``pick``) serves every claim
(farm.state.claims), the ``outlook`` of an empty claim and the keyword API's listing of what a
claim would take. Claim order: ``partial`` rows of today, then ``failed`` ones with retries left,
then fresh rows (not requested today), the never requested first, then the oldest request.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import date
from typing import Any, TypeAlias

from sqlalchemy import (
    BindParameter,
    ColumnElement,
    CompoundSelect,
    Integer,
    Select,
    Update,
    and_,
    bindparam,
    literal,
    or_,
    select,
    union_all,
    update,
)
from sqlalchemy.engine import Connection, Row

from farm.state.models import Keyword

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
