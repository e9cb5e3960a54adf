"""An opening's life over the days: first seen, last seen, gone.

A posting is *gone* once its keyword's crawl has COMPLETED on ``gone_after`` days after the day it was last
seen without finding it; it is gone on the last of those days. Only completed days count: a keyword that
ended partial or failed did not read all its pages, so not finding a posting then proves nothing. An
opening is first seen when the first of its postings was, last seen when the last was, and gone when all
its postings are, on the day the last of them went.

Days are judged in FARM_TIMEZONE; keyword_day (farm.runs) says which keywords completed on which days.
"""

from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import UTC, date, datetime
from zoneinfo import ZoneInfo

from sqlalchemy import select
from sqlalchemy.engine import Engine

from farm.state.models import JobPostingRow, KeywordDay


@dataclass(frozen=True)
class Life:
    first_seen: date
    last_seen: date
    gone: date | None  # the day it went; None while it is open


@dataclass(frozen=True)
class DayCounts:
    day: date
    new_postings: int
    gone_postings: int
    new_openings: int
    gone_openings: int


def posting_lives(engine: Engine, tz: ZoneInfo, gone_after: int, until: date) -> dict[tuple[str, str], Life]:
    """Each posting's life as known at the end of ``until``."""
    completed = defaultdict(list)  # keyword id -> its completed days, in order
    days = select(KeywordDay.keyword_id, KeywordDay.day).where(
        KeywordDay.crawl_status == "completed", KeywordDay.day <= until
    )
    table = JobPostingRow.__table__
    postings = select(table.c.source, table.c.job_id, table.c.keyword_id, table.c.first_seen_at, table.c.last_seen_at)
    with engine.connect() as connection:
        for keyword_id, day in connection.execute(days.order_by(KeywordDay.day)):
            completed[keyword_id].append(day)
        rows = connection.execute(postings).all()
    lives = {}
    for source, job_id, keyword_id, first_seen_at, last_seen_at in rows:
        last = _day(last_seen_at, tz)
        since = [day for day in completed.get(keyword_id, ()) if day > last]
        gone = since[gone_after - 1] if len(since) >= gone_after else None
        lives[(source, job_id)] = Life(_day(first_seen_at, tz), last, gone)
    return lives


def opening_lives(openings: Iterable[list[tuple[str, str]]], lives: dict[tuple[str, str], Life]) -> list[Life]:
    """Each opening's life from its postings' (``openings``: each opening's (source, job_id) list)."""
    found = []
    for postings in openings:
        members = [lives[key] for key in postings if key in lives]
        gone = [life.gone for life in members]
        found.append(
            Life(
                min(life.first_seen for life in members),
                max(life.last_seen for life in members),
                None if None in gone else max(gone),
            )
        )
    return found


def day_counts(day: date, postings: list[Life], openings: list[Life]) -> DayCounts:
    return DayCounts(
        day,
        sum(life.first_seen == day for life in postings),
        sum(life.gone == day for life in postings),
        sum(life.first_seen == day for life in openings),
        sum(life.gone == day for life in openings),
    )


def _day(moment: datetime, tz: ZoneInfo) -> date:
    """A stored time's day in ``tz`` (SQLite gives its UTC times back naive)."""
    return (moment if moment.tzinfo else moment.replace(tzinfo=UTC)).astimezone(tz).date()
