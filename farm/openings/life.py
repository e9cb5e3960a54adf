"""An opening's life over the days: first seen, last seen, gone, and back again (reposted).

A posting is listed from the day it is seen until it is *gone*: its keyword's crawl has COMPLETED on
``gone_after`` days after it was seen without finding it; it is gone on the last of those days. Only
completed days count: a keyword that ended partial or failed did not read all its pages, so not finding
a posting then proves nothing. A posting seen again after it went is *back* (reposted) that day, and
listed again. The days a posting was seen are posting_day's (farm.runs.record.keep_day), with the days
of its first and last sighting; a completed day proves the posting unseen when posting_day holds its
site's sightings of that day, or the day is after its last sighting. An opening is listed while any of
its postings is: first seen when the first of them was, gone when the last of them went, back when one
of them is seen again after that.

Days are judged in FARM_TIMEZONE; keyword_day (farm.runs) says which keywords completed on which days.
"""

from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import UTC, date, datetime
from itertools import pairwise
from zoneinfo import ZoneInfo

from sqlalchemy import select
from sqlalchemy.engine import Engine

from farm.state.models import JobPostingRow, KeywordDay, PostingDay

Span = tuple[date, date | None]  # listed from the first day to the day it went (None: still listed)


@dataclass(frozen=True)
class Life:
    first_seen: date
    last_seen: date
    gone: date | None  # the day it went for the last time; None while it is listed
    spans: tuple[Span, ...] = ()  # the stretches it was listed, oldest first

    @property
    def back(self) -> tuple[date, ...]:
        """The days it was seen again after it went."""
        return tuple(start for start, _ in self.spans[1:])


@dataclass(frozen=True)
class DayCounts:
    day: date
    new_postings: int
    gone_postings: int
    new_openings: int
    gone_openings: int
    back_postings: int = 0
    back_openings: int = 0


def spans(seen: list[date], completed: list[date], unseen, gone_after: int) -> list[Span]:
    """The stretches a posting was listed: ``seen`` its days seen (sorted, no repeats), ``completed`` its
    keyword's completed days, ``unseen(day)`` whether not finding it that day is proof."""
    found, start = [], seen[0]
    for before, after in pairwise(seen):
        between = [day for day in completed if before < day < after and unseen(day)]
        if len(between) >= gone_after:
            found.append((start, between[gone_after - 1]))
            start = after
    since = [day for day in completed if day > seen[-1] and unseen(day)]
    found.append((start, since[gone_after - 1] if len(since) >= gone_after else None))
    return found


def posting_lives(engine: Engine, tz: ZoneInfo, gone_after: int, until: date) -> dict[tuple[str, str], Life]:
    """Each posting's life as known at the end of ``until``."""
    completed = defaultdict(list)  # keyword id -> its completed days, in order
    days = select(KeywordDay.keyword_id, KeywordDay.day).where(
        KeywordDay.crawl_status == "completed", KeywordDay.day <= until
    )
    kept = defaultdict(set)  # source -> the days posting_day holds its sightings of
    sightings = defaultdict(set)  # posting id -> its days seen
    table = JobPostingRow.__table__
    postings = select(
        table.c.id, table.c.source, table.c.job_id, table.c.keyword_id, table.c.first_seen_at, table.c.last_seen_at
    )
    with engine.connect() as connection:
        for keyword_id, day in connection.execute(days.order_by(KeywordDay.day)):
            completed[keyword_id].append(day)
        for source, day in connection.execute(select(PostingDay.source, PostingDay.day).distinct()):
            kept[source].add(day)
        for posting_id, day in connection.execute(select(PostingDay.posting_id, PostingDay.day)):
            sightings[posting_id].add(day)
        rows = connection.execute(postings).all()
    lives = {}
    for posting_id, source, job_id, keyword_id, first_seen_at, last_seen_at in rows:
        first, last = _day(first_seen_at, tz), _day(last_seen_at, tz)
        seen = sorted(day for day in {first, last, *sightings.get(posting_id, ())} if day <= until)
        if not seen:  # first seen after ``until``
            lives[(source, job_id)] = Life(first, last, None)
            continue
        stretches = spans(seen, completed.get(keyword_id, []), _proof(kept[source], last), gone_after)
        lives[(source, job_id)] = Life(first, last, stretches[-1][1], tuple(stretches))
    return lives


def _proof(kept: set[date], last: date):
    """Whether not finding a posting on a completed day proves it unseen: its site's sightings of the day
    are kept, or the day is after its last sighting."""
    return lambda day: day in kept or day > last


def opening_lives(openings: Iterable[list[tuple[str, str]]], lives: dict[tuple[str, str], Life]) -> list[Life]:
    """Each opening's life from its postings' (``openings``: each opening's (source, job_id) list)."""
    found = []
    for postings in openings:
        members = [lives[key] for key in postings if key in lives]
        listed = merged([span for life in members for span in life.spans])
        found.append(
            Life(
                min(life.first_seen for life in members),
                max(life.last_seen for life in members),
                listed[-1][1] if listed else None,
                tuple(listed),
            )
        )
    return found


def merged(stretches: list[Span]) -> list[Span]:
    """The days listed by any of ``stretches``, as stretches apart from one another."""
    out: list[list] = []
    for start, end in sorted(stretches, key=lambda span: span[0]):
        if out and (out[-1][1] is None or start <= out[-1][1]):
            if out[-1][1] is not None and (end is None or end > out[-1][1]):
                out[-1][1] = end
            continue
        out.append([start, end])
    return [(start, end) for start, end in out]


def day_counts(day: date, postings: list[Life], openings: list[Life]) -> DayCounts:
    return DayCounts(
        day,
        sum(life.first_seen == day for life in postings),
        sum(_went(life, day) for life in postings),
        sum(life.first_seen == day for life in openings),
        sum(_went(life, day) for life in openings),
        sum(day in life.back for life in postings),
        sum(day in life.back for life in openings),
    )


def _went(life: Life, day: date) -> bool:
    return any(end == day for _, end in life.spans)


def _day(moment: datetime, tz: ZoneInfo) -> date:
    """A stored time's day in ``tz`` (SQLite gives its UTC times back naive)."""
    return (moment if moment.tzinfo else moment.replace(tzinfo=UTC)).astimezone(tz).date()
