"""The reads the keyword API needs and KeywordStore has no method for; all read-only.

- ``keyword_state``: a keyword as it is now, for the answer to a refused write;
- ``claimable_keywords``: what a claim would take now, in claim order, without taking it;
- ``day_progress``: pages done on a day, and when the day's first claim still on record was made.

``claimable_keywords`` restates KeywordStore's claim rules (its ``_claimable``):
tests/integration/test_api_reads.py holds the two to the same answer.
"""

from datetime import UTC, date, datetime, timedelta

from sqlalchemy import and_, case, func, or_, select

from farm.state.models import Keyword
from farm.state.store import KeywordStore

K = Keyword.__table__
c = K.c

_STATE_COLUMNS = (
    c.id,
    c.source,
    c.city,
    c.job,
    c.crawl_status,
    c.crawler_id,
    c.last_requested_date,
    c.last_completed_page,
    c.total_pages,
    c.jobs_found,
    c.heartbeat_at,
    c.lease_token,
)
_LISTED_COLUMNS = (
    c.id,
    c.source,
    c.city,
    c.job,
    c.crawl_status,
    c.last_requested_date,
    c.last_completed_page,
    c.total_pages,
    c.pages_ahead,
    c.retry_count,
)


def _aware(value: datetime | None) -> datetime | None:
    # an aggregate over a time column may come back as the database's naive UTC
    if value is None or value.tzinfo is not None:
        return value
    return value.replace(tzinfo=UTC)


def pages_of(text: str | None) -> list[int]:
    """keyword.pages_ahead ("4,7") as a sorted list."""
    return sorted(int(p) for p in (text or "").split(",") if p.strip())


def keyword_state(store: KeywordStore, keyword_id: int, lease_token: int) -> dict | None:
    """The keyword now, with whether ``lease_token`` is still its token; None when there is no such keyword."""
    with store.engine.connect() as conn:
        row = conn.execute(select(*_STATE_COLUMNS).where(c.id == keyword_id)).first()
    if row is None:
        return None
    state = dict(row._mapping)
    state["heartbeat_at"] = _aware(state["heartbeat_at"])
    state["lease_current"] = state.pop("lease_token") == lease_token
    return state


def claimable_keywords(store: KeywordStore, source: str, limit: int, skip_partial=frozenset()) -> list[dict]:
    """Up to ``limit`` keywords a claim of ``source`` would take now, in the order it would take them,
    each as it would hand it out (a fresh one starts over at page 1); partial ones in ``skip_partial``
    are left, as the claim leaves them."""
    now = store.clock()
    day = store.today()
    cutoff = now - timedelta(seconds=store.lease_timeout)
    kinds = [
        (
            "partial",
            and_(c.crawl_status == "partial", c.last_requested_date == day, c.id.not_in(sorted(skip_partial))),
            (c.id,),
        ),
        (
            "failed",
            and_(
                c.crawl_status == "failed",
                c.last_requested_date == day,
                c.retry_count < store.max_retries,
                c.blocked_claims < store.max_blocked_claims,
                or_(c.retry_at.is_(None), c.retry_at <= now),
            ),
            (c.id,),
        ),
        (
            # not requested today, and not held under a live heartbeat (a crawl running across midnight)
            "fresh",
            and_(
                or_(c.last_requested_date.is_(None), c.last_requested_date != day),
                or_(c.crawl_status != "crawling", c.heartbeat_at.is_(None), c.heartbeat_at < cutoff),
            ),
            # never requested (NULL sorts first on SQLite and MySQL), then the oldest request
            (c.last_requested_date, c.id),
        ),
    ]
    listed: list[dict] = []
    with store.engine.connect() as conn:
        for kind, claimable, order in kinds:
            if len(listed) >= limit:
                break
            stmt = (
                select(*_LISTED_COLUMNS)
                .where(c.source == source, claimable)
                .order_by(*order)
                .limit(limit - len(listed))
            )
            for r in conn.execute(stmt):
                fresh = kind == "fresh"
                listed.append(
                    {
                        "id": r.id,
                        "source": r.source,
                        "city": r.city,
                        "job": r.job,
                        "crawl_status": r.crawl_status,
                        "claim_kind": kind,
                        "last_completed_page": 0 if fresh else r.last_completed_page,
                        "total_pages": None if fresh else r.total_pages,
                        "pages_done_ahead": [] if fresh else pages_of(r.pages_ahead),
                        "retry_count": 0 if fresh else r.retry_count,
                        "lease_token": None,
                    }
                )
    return listed


def day_progress(store: KeywordStore, sources: list[str], day: date) -> dict[str, tuple[int, datetime | None]]:
    """Per source: pages recorded done on ``day`` (the watermarks and the pages done beyond them),
    and the earliest claim of that day still on record."""
    ahead = case(
        (c.pages_ahead == "", 0),
        else_=func.length(c.pages_ahead) - func.length(func.replace(c.pages_ahead, ",", "")) + 1,
    )
    stmt = (
        select(
            c.source,
            func.coalesce(func.sum(c.last_completed_page), 0),
            func.coalesce(func.sum(ahead), 0),
            func.min(c.last_requested_at),
        )
        .where(c.source.in_(sources), c.last_requested_date == day)
        .group_by(c.source)
    )
    with store.engine.connect() as conn:
        rows = conn.execute(stmt).all()
    return {source: (int(marks) + int(beyond), _aware(first)) for source, marks, beyond, first in rows}
