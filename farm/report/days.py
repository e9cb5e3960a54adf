"""Calendar days where the crawl is judged (FARM_TIMEZONE), as the UTC instants they span.

Postings keep their times in UTC; a day of the report is a range of those times,
computed here and bound into the queries, so that every database groups them
alike (no database's own date functions, no time zone tables) and a day with a
daylight-saving change is as long as it really is.
"""

from dataclasses import dataclass
from datetime import date, datetime, time, timedelta
from zoneinfo import ZoneInfo


def start_of(day: date, tz: ZoneInfo) -> datetime:
    """The aware instant ``day`` begins in ``tz``."""
    return datetime.combine(day, time(), tzinfo=tz)


@dataclass(frozen=True)
class Span:
    """The instants from ``start`` (included) to ``end`` (excluded)."""

    start: datetime
    end: datetime


def day_span(day: date, tz: ZoneInfo) -> Span:
    return Span(start_of(day, tz), start_of(day + timedelta(days=1), tz))


def last_days(day: date, count: int) -> list[date]:
    """The ``count`` days ending with ``day``, oldest first."""
    return [day - timedelta(days=back) for back in range(count - 1, -1, -1)]
