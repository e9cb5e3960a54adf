"""The run table's reads: the days' keywords and runs that the checks and the report compare."""

import json
from dataclasses import dataclass
from datetime import UTC, date, datetime, time, timedelta
from zoneinfo import ZoneInfo

from sqlalchemy import select
from sqlalchemy.engine import Engine

from farm.state.models import CrawlRun, KeywordDay


@dataclass(frozen=True)
class KeptKeyword:
    day: date
    source: str
    city: str
    job: str
    status: str
    jobs_found: int


@dataclass(frozen=True)
class KeptRun:
    id: int
    source: str
    machine: str
    day: date  # the day it started, in FARM_TIMEZONE
    started_at: datetime
    ended_at: datetime | None
    status: str
    pages: int
    postings: int
    refusals: dict
    coverage: dict
    stats: dict


def day_bounds(day: date, tz: ZoneInfo) -> tuple[datetime, datetime]:
    """The day's start and the next day's, as aware UTC times."""
    start = datetime.combine(day, time(), tz)
    return start.astimezone(UTC), (start + timedelta(days=1)).astimezone(UTC)


def kept_keywords(engine: Engine, first: date, last: date) -> list[KeptKeyword]:
    """keyword_day from ``first`` to ``last``, both included."""
    query = select(
        KeywordDay.day,
        KeywordDay.source,
        KeywordDay.city,
        KeywordDay.job,
        KeywordDay.crawl_status,
        KeywordDay.jobs_found,
    ).where(KeywordDay.day >= first, KeywordDay.day <= last)
    with engine.connect() as connection:
        return [KeptKeyword(*row) for row in connection.execute(query)]


def kept_runs(engine: Engine, first: date, last: date, tz: ZoneInfo) -> list[KeptRun]:
    """The runs that started from ``first`` to ``last`` (days in ``tz``), oldest first."""
    start, _ = day_bounds(first, tz)
    _, end = day_bounds(last, tz)
    table = CrawlRun.__table__
    query = select(table).where(table.c.started_at >= start, table.c.started_at < end).order_by(table.c.started_at)
    with engine.connect() as connection:
        rows = connection.execute(query).all()
    return [
        KeptRun(
            row.id,
            row.source,
            row.machine,
            row.started_at.astimezone(tz).date(),
            row.started_at,
            row.ended_at,
            row.status,
            row.pages,
            row.postings,
            json.loads(row.refusals),
            json.loads(row.coverage),
            json.loads(row.stats),
        )
        for row in rows
    ]
