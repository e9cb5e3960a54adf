"""Time, in one place: "now" is aware UTC, "today" is judged in FARM_TIMEZONE."""

from datetime import UTC, date, datetime
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
