"""Time, in one place: "now" is aware UTC, "today" is judged in FARM_TIMEZONE, and a day is the instants
it spans there.

Postings and runs keep their times in UTC; a day is a range of those times, computed here and bound into
the queries, so that every database groups them alike (no database's own date functions, no time zone
tables) and a day with a daylight-saving change is as long as it really is.
"""

from dataclasses import dataclass
from datetime import UTC, date, datetime, time, timedelta
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError


def utcnow() -> datetime:
    return datetime.now(UTC)


def load_timezone(name: str) -> ZoneInfo:
    try:
        return ZoneInfo(name)
    except (ZoneInfoNotFoundError, ValueError) as exc:
        raise ValueError(f"FARM_TIMEZONE={name!r} is not a known time zone (try 'Asia/Shanghai')") from exc


def today(now: datetime, tz: ZoneInfo) -> date:
    """The calendar day of ``now`` where the crawl is judged."""
    return now.astimezone(tz).date()


def start_of(day: date, tz: ZoneInfo) -> datetime:
    """The aware instant ``day`` begins in ``tz``."""
    return datetime.combine(day, time(), tzinfo=tz)


@dataclass(frozen=True)
class Span:
    """The instants from ``start`` (included) to ``end`` (excluded)."""

    start: datetime
    end: datetime

    def utc(self) -> "Span":
        """The same instants, written in UTC."""
        return Span(self.start.astimezone(UTC), self.end.astimezone(UTC))


def day_span(day: date, tz: ZoneInfo) -> Span:
    """``day`` in ``tz``: from its start to the next day's, aware in ``tz``."""
    return Span(start_of(day, tz), start_of(day + timedelta(days=1), tz))


def last_days(day: date, count: int) -> list[date]:
    """The ``count`` days ending with ``day``, oldest first."""
    return [day - timedelta(days=back) for back in range(count - 1, -1, -1)]
