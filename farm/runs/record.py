"""The run table's writes: a run opened, a run closed with its numbers, the day's keywords and postings kept.

Each is one short transaction on the engine it is given; the crawl calls them on its DB thread.
"""

import json
from dataclasses import dataclass, field
from datetime import date, datetime
from zoneinfo import ZoneInfo

from sqlalchemy import and_, delete, insert, literal, or_, select, update
from sqlalchemy.engine import Engine

from farm.state.clock import day_span
from farm.state.models import CrawlRun, JobPostingRow, Keyword, KeywordDay, PostingDay

POSTINGS = JobPostingRow.__table__


@dataclass
class RunNumbers:
    """What a crawl tells of itself at its end (farm.runs.numbers builds it from the crawl's stats)."""

    keywords_claimed: int = 0
    keywords_ended: int = 0
    pages: int = 0
    postings: int = 0
    refusals: dict = field(default_factory=dict)
    coverage: dict = field(default_factory=dict)
    stats: dict = field(default_factory=dict)


def open_run(engine: Engine, source: str, crawler_id: str, machine: str, now: datetime) -> int:
    """A new ``running`` row; its id."""
    with engine.begin() as connection:
        result = connection.execute(
            insert(CrawlRun).values(
                source=source,
                crawler_id=crawler_id[:128],
                machine=machine[:128],
                started_at=now,
                status="running",
                refusals="{}",
                coverage="{}",
                stats="{}",
            )
        )
        return result.inserted_primary_key[0]


def note_walls(engine: Engine, run_id: int, walls: dict) -> None:
    """The walls a running crawl met and passed so far (``farm/wall/*``, ``farm/session/earned``) and its
    identities (``farm/identity/*``) as its row's stats, while it has no end: its close writes every stat over
    them, a late note never does."""
    with engine.begin() as connection:
        connection.execute(
            update(CrawlRun)
            .where(CrawlRun.id == run_id, CrawlRun.ended_at.is_(None))
            .values(stats=json.dumps(walls, sort_keys=True, default=str))
        )


def close_run(engine: Engine, run_id: int, status: str, numbers: RunNumbers, now: datetime) -> None:
    with engine.begin() as connection:
        connection.execute(
            update(CrawlRun)
            .where(CrawlRun.id == run_id)
            .values(
                ended_at=now,
                status=status[:64],
                keywords_claimed=numbers.keywords_claimed,
                keywords_ended=numbers.keywords_ended,
                pages=numbers.pages,
                postings=numbers.postings,
                refusals=json.dumps(numbers.refusals, sort_keys=True),
                coverage=json.dumps(numbers.coverage, sort_keys=True),
                stats=json.dumps(numbers.stats, sort_keys=True, default=str),
            )
        )


def keep_day(engine: Engine, source: str, day: date, tz: ZoneInfo) -> None:
    """Copy the source's keywords of ``day`` into keyword_day, and its postings seen that day (first or
    last seen in the day, in ``tz``) into posting_day, replacing what an earlier crawl of the day copied:
    the last crawl to end leaves the day's picture. A posting's last sighting of a day is still within
    the day when that crawl ends, so the last copy holds every posting seen that day."""
    columns = ("keyword_id", "day", "source", "city", "job", "crawl_status", "jobs_found", "last_completed_page")
    picked = select(
        Keyword.id,
        literal(day),
        Keyword.source,
        Keyword.city,
        Keyword.job,
        Keyword.crawl_status,
        Keyword.jobs_found,
        Keyword.last_completed_page,
        Keyword.total_pages,
    ).where(Keyword.source == source, Keyword.last_requested_date == day)
    span = day_span(day, tz).utc()
    start, end = span.start, span.end
    seen = select(POSTINGS.c.id, literal(day), POSTINGS.c.source).where(
        POSTINGS.c.source == source,
        or_(
            and_(POSTINGS.c.last_seen_at >= start, POSTINGS.c.last_seen_at < end),
            and_(POSTINGS.c.first_seen_at >= start, POSTINGS.c.first_seen_at < end),
        ),
    )
    with engine.begin() as connection:
        connection.execute(delete(KeywordDay).where(KeywordDay.source == source, KeywordDay.day == day))
        connection.execute(insert(KeywordDay).from_select([*columns, "total_pages"], picked))
        connection.execute(delete(PostingDay).where(PostingDay.source == source, PostingDay.day == day))
        connection.execute(insert(PostingDay).from_select(["posting_id", "day", "source"], seen))
