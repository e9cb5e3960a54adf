"""The reads the keyword API needs and KeywordStore has no method for; all read-only.

- ``keyword_state``: a keyword as it is now, for the answer to a refused write;
- ``claimable_keywords``: what a claim would take now, in claim order, without taking it;
- ``day_progress``: pages done on a day, and when the day's first claim still on record was made.

``claimable_keywords`` lists with the claim's own rules (farm.state.claimrules, as claims.listing reads them).
"""

from datetime import date, datetime

from sqlalchemy import case, func, select

from farm.state import claimrules, claims
from farm.state.claims import aware
from farm.state.lease import parse_pages
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


def keyword_state(store: KeywordStore, keyword_id: int, lease_token: int) -> dict | None:
    """The keyword now, with whether ``lease_token`` is still its token; None when there is no such keyword."""
    with store.engine.connect() as conn:
        row = conn.execute(select(*_STATE_COLUMNS).where(c.id == keyword_id)).first()
    if row is None:
        return None
    state = dict(row._mapping)
    state["heartbeat_at"] = aware(state["heartbeat_at"])
    state["lease_current"] = state.pop("lease_token") == lease_token
    return state


def claimable_keywords(store: KeywordStore, source: str, limit: int, skip_partial=frozenset()) -> list[dict]:
    """Up to ``limit`` keywords a claim of ``source`` would take now, in the order it would take them,
    each as it would hand it out (a fresh one starts over at page 1); partial ones in ``skip_partial``
    are left, as the claim leaves them. The claim's own rules pick them (farm.state.claims)."""
    listed = []
    for r in claims.listing(store, source, limit, skip_partial):
        kind = claimrules.KINDS[r.kind]
        fresh = kind == "fresh"
        listed.append(
            {
                "id": r.id,
                "source": source,
                "city": r.city,
                "job": r.job,
                "crawl_status": r.crawl_status,
                "claim_kind": kind,
                "last_completed_page": 0 if fresh else r.last_completed_page,
                "total_pages": None if fresh else r.total_pages,
                "pages_done_ahead": [] if fresh else sorted(parse_pages(r.pages_ahead)),
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
    return {source: (int(marks) + int(beyond), aware(first)) for source, marks, beyond, first in rows}
