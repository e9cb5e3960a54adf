"""How each site's door stood on a day: walls passed in the browser, keywords held by a wall farm cannot
pass (a slider), a site that refused the crawl as a whole; what ``farm stats`` and the report say first.

Read from the ``keyword`` table (a keyword a wall held ends ``partial`` with ``blocked: <shape> …``, the
shape naming the wall: ``zhilian_verification_slider``; the earliest such end is the wall's "since") and
the day's crawl runs (``crawl_run``: the sessions each run earned, and a run that ended because the site
refused it, ``farm_site_refused``). Nothing here writes.
"""

import json
from dataclasses import dataclass, field
from datetime import date, datetime
from typing import Any
from zoneinfo import ZoneInfo

from sqlalchemy import and_, func, not_, select
from sqlalchemy.engine import Connection

from farm.state.clock import day_span
from farm.state.models import CrawlRun, Keyword
from farm.state.tallies import Limits

BLOCKED = "blocked: "


@dataclass
class Door:
    """One site's door on one day."""

    source: str
    held: dict[str, tuple[int, datetime]] = field(default_factory=dict)  # wall shape -> (keywords, since)
    sessions: int = 0  # sessions earned in the browser by the day's runs
    walls: dict[str, int] = field(default_factory=dict)  # wall -> times met
    refused_at: datetime | None = None  # when a run concluded the site refuses it
    refusals: dict[str, int] = field(default_factory=dict)  # that run's refusals by shape
    runs: int = 0

    def lines(self, waiting: int, tz: ZoneInfo) -> list[str]:
        """What to tell a user, most urgent first; none for a day without runs or walls."""
        lines = []
        for shape, (count, since) in sorted(self.held.items(), key=lambda item: item[1][1]):
            what = "slider" if "slider" in shape else shape
            lines.append(
                f"{self.source}: blocked by {what} since {since.astimezone(tz):%H:%M} ({shape}: {count} "
                f"keyword{'s' if count != 1 else ''} partial), {waiting} keyword{'s' if waiting != 1 else ''} waiting"
            )
        if self.refused_at is not None:
            shapes = ", ".join(f"{shape} ×{n}" for shape, n in sorted(self.refusals.items(), key=lambda i: -i[1]))
            lines.append(
                f"{self.source}: the site refused the crawl at {self.refused_at.astimezone(tz):%H:%M} "
                f"({shapes or 'every answer a refusal'}); {waiting} keyword{'s' if waiting != 1 else ''} waiting"
            )
        if self.sessions:
            walls = ", ".join(sorted(self.walls)) or "a wall"
            lines.append(
                f"{self.source}: {walls} passed in the browser: {self.sessions} session"
                f"{'s' if self.sessions != 1 else ''} earned, pages fetched plain with them"
            )
        elif self.runs and not lines:
            lines.append(f"{self.source}: plain requests, no wall met")
        return lines

    def to_json(self) -> dict[str, Any]:
        return {
            "held": {shape: {"keywords": n, "since": since.isoformat()} for shape, (n, since) in self.held.items()},
            "sessions_earned": self.sessions,
            "walls_met": self.walls,
            "refused_at": self.refused_at.isoformat() if self.refused_at else None,
            "runs": self.runs,
        }


def doors(conn: Connection, sources: list[str], day: date, tz: ZoneInfo) -> dict[str, Door]:
    """Each source's door on ``day`` (in ``tz``)."""
    found = {source: Door(source) for source in sources}
    k = Keyword.__table__.c
    held = (
        select(k.source, k.error_message, k.updated_at)
        .where(k.source.in_(sources), k.last_requested_date == day, k.crawl_status == "partial")
        .where(k.error_message.like(f"{BLOCKED}%"))
    )
    for source, message, updated_at in conn.execute(held):
        shape = message.removeprefix(BLOCKED).split(" ", 1)[0]
        count, since = found[source].held.get(shape, (0, updated_at))
        found[source].held[shape] = (count + 1, min(since, updated_at))
    span = day_span(day, tz).utc()
    start, end = span.start, span.end
    r = CrawlRun.__table__.c
    runs = select(r.source, r.status, r.ended_at, r.refusals, r.stats).where(
        r.source.in_(sources), r.started_at >= start, r.started_at < end
    )
    for source, status, ended_at, refusals, stats in conn.execute(runs):
        door = found[source]
        door.runs += 1
        numbers = _json(stats)
        door.sessions += int(numbers.get("farm/session/earned", 0) or 0)
        for name, value in numbers.items():
            if name.startswith("farm/wall/met/"):
                wall = name.removeprefix("farm/wall/met/")
                door.walls[wall] = door.walls.get(wall, 0) + int(value or 0)
        if status == "farm_site_refused" and ended_at is not None:
            if door.refused_at is None or ended_at > door.refused_at:
                door.refused_at, door.refusals = ended_at, _json(refusals)
    return found


def _json(text: str | None) -> dict[str, Any]:
    try:
        value = json.loads(text or "{}")
    except ValueError:
        return {}
    return value if isinstance(value, dict) else {}


def waiting(conn: Connection, sources: list[str], day: date, limits: Limits) -> dict[str, int]:
    """Keywords of each source not done on ``day``, done as `farm stats` counts it (farm.state.tallies)."""
    k = Keyword.__table__.c
    done = and_(k.last_requested_date == day, limits.done())
    query = select(k.source, func.count()).where(k.source.in_(sources), not_(done)).group_by(k.source)
    found = dict.fromkeys(sources, 0)
    found.update({source: count for source, count in conn.execute(query)})
    return found
