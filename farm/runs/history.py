"""The run table's reads: the days' keywords and runs that the checks and the report compare."""

import json
from dataclasses import dataclass
from datetime import date, datetime
from zoneinfo import ZoneInfo

from sqlalchemy import select
from sqlalchemy.engine import Engine

from farm.state.clock import day_span
from farm.state.models import CrawlRun, Keyword, KeywordDay


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
    crawler_id: str = ""


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
    start, end = day_span(first, tz).utc().start, day_span(last, tz).utc().end
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
            row.crawler_id,
        )
        for row in rows
    ]


@dataclass(frozen=True)
class SiteDay:
    """A site's keywords on one day: how many it held by the day's end, and which of them that day's
    crawls never reached (neither kept in keyword_day for the day nor requested that day)."""

    source: str
    keywords: int
    uncrawled: tuple[str, ...]  # "city/job", in the keyword table's order


def site_days(engine: Engine, day: date, tz: ZoneInfo) -> list[SiteDay]:
    """Every site of the keyword table with the keywords it held by the end of ``day``, by name."""
    end = day_span(day, tz).utc().end
    k = Keyword.__table__.c
    held = (
        select(k.id, k.source, k.city, k.job, k.last_requested_date).where(k.created_at < end).order_by(k.source, k.id)
    )
    kept = select(KeywordDay.keyword_id).where(KeywordDay.day == day)
    with engine.connect() as connection:
        crawled = set(connection.execute(kept).scalars())
        rows = connection.execute(held).all()
    sites: dict[str, tuple[int, list[str]]] = {}
    for keyword_id, source, city, job, requested in rows:
        count, missed = sites.get(source, (0, []))
        if keyword_id not in crawled and requested != day:
            missed.append(f"{city}/{job}")
        sites[source] = (count + 1, missed)
    return [SiteDay(source, count, tuple(missed)) for source, (count, missed) in sites.items()]
