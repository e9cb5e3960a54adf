"""Read-only reports over the keyword table: what `farm stats` and `farm doctor` show.

Nothing here writes. The queries run over the store's engine, in short read
transactions, and read only the ``keyword`` table, but for the share of the
day's postings whose salary text no rule reads (``job_posting``).

The table has one row per keyword and no per-page log, so what happened
recently is read off what the rows hold:

- **pages** of a day: the sum of the day's page watermarks (``last_completed_page``
  of the rows requested that day), i.e. pages recorded done in order from page 1;
- **recent rate**: the keywords of the day that ended (``completed`` or
  ``failed``) in the last N minutes by ``updated_at`` (the time of a row's last
  write, which for an ended row is its end), and the pages of those keywords,
  over the minutes of those N that the site's crawls ran (``crawl_run``: from a
  run's start to its end, or to now while it is alive, farm.runs.live): a crawl
  of 5 seconds is a rate over 5 seconds, not over the N minutes. Crawls that
  keep no run row (the keyword API's workers) are counted over the N minutes;
- **remaining**: the day's keywords not done for the day, where done means
  ``completed``, or ``failed`` with no claim left today (retries or block
  claims exhausted); **ETA**: remaining ÷ recent keywords per minute, only while
  a crawler of the site is alive (a run alive, or a ``crawling`` keyword whose
  heartbeat is fresher than FARM_LEASE_TIMEOUT).
"""

from dataclasses import dataclass
from datetime import UTC, date, datetime, timedelta
from typing import Any
from zoneinfo import ZoneInfo

from sqlalchemy import and_, case, func, or_, select
from sqlalchemy.engine import Connection, Engine
from sqlalchemy.sql.elements import ColumnElement

from farm.runs.live import alive_runs
from farm.sites import known_sources
from farm.state.clock import day_span
from farm.state.models import STATUSES, CrawlRun, JobPostingRow, Keyword

K = Keyword.__table__
c = K.c

DEFAULT_WINDOW_MINUTES = 10
DEFAULT_LEASE_TIMEOUT = 1800  # FARM_LEASE_TIMEOUT's default: a heartbeat older than this is a crawler gone
DEFAULT_REAP_INTERVAL = 60.0  # FARM_REAP_INTERVAL's default: how often a crawl heartbeats its keywords
Span = tuple[datetime, datetime]
ERROR_EXAMPLES = 3  # failing keywords named by name in a report


@dataclass(frozen=True)
class Limits:
    """The claim limits a report judges "done for the day" by (FARM_MAX_RETRIES, FARM_MAX_BLOCKED_CLAIMS)."""

    max_retries: int = 3
    max_blocked_claims: int = 5

    def exhausted(self) -> ColumnElement[bool]:
        """A failed row that no claim may take again today."""
        return and_(
            c.crawl_status == "failed",
            or_(c.retry_count >= self.max_retries, c.blocked_claims >= self.max_blocked_claims),
        )

    def done(self) -> ColumnElement[bool]:
        """A row done for the day (of a row requested that day): completed, or failed with no claim left."""
        return or_(c.crawl_status == "completed", self.exhausted())


def sources(conn: Connection) -> list[str]:
    """The sites a report counts: the registered ones (farm.sites: farm's three, then a project's own
    that farm.sites loaded), then any other the keyword table holds (a site whose project is not the
    one loaded here), by name."""
    known = list(known_sources())
    stored = conn.execute(select(c.source).distinct()).scalars()
    return known + sorted(set(stored) - set(known))


def progress(
    engine: Engine,
    stats: list[dict[str, Any]],
    *,
    now: datetime,
    tz: ZoneInfo,
    limits: Limits = Limits(),
    window_minutes: float = DEFAULT_WINDOW_MINUTES,
    lease_timeout: float = DEFAULT_LEASE_TIMEOUT,
    reap_interval: float = DEFAULT_REAP_INTERVAL,
) -> list[dict[str, Any]]:
    """``stats`` (KeywordStore.stats rows, one per source, all of one day) with the new fields added.

    Added to each row: ``pages``, ``done``, ``remaining``, ``recent`` (``window``, ``minutes``: those
    of the window the site's crawls ran, ``spans``: their times, ``keywords``, ``pages``,
    ``keywords_per_minute``, ``pages_per_minute``), ``crawlers_alive``, ``eta`` (ISO time in
    FARM_TIMEZONE, or None: nothing left, no rate, or no crawler alive) and ``eta_seconds``.
    """
    if not stats:
        return stats
    day = date.fromisoformat(stats[0]["date"])
    sources = [row["source"] for row in stats]
    since = now - timedelta(minutes=window_minutes)
    ended = c.crawl_status.in_(("completed", "failed"))
    # every status named: the day's rows are found through ix_keyword_status, not scanned for
    of_day = and_(c.source.in_(sources), c.crawl_status.in_(STATUSES), c.last_requested_date == day)
    done = limits.done()
    day_q = (
        select(
            c.source,
            func.coalesce(func.sum(c.last_completed_page), 0),
            func.coalesce(func.sum(case((done, 1), else_=0)), 0),
        )
        .where(of_day)
        .group_by(c.source)
    )
    recent_q = (
        select(c.source, func.count(), func.coalesce(func.sum(c.last_completed_page), 0))
        .where(of_day, ended, c.updated_at >= since, c.updated_at <= now)
        .group_by(c.source)
    )
    spans, alive, known = crawl_spans(engine, sources, since, now, lease_timeout, reap_interval)
    # a crawler that keeps no run row (the keyword API's workers) is alive while it heartbeats
    beating_q = (
        select(c.source, func.count())
        .where(c.source.in_(sources), c.crawl_status == "crawling")
        .where(c.heartbeat_at >= now - timedelta(seconds=lease_timeout), c.crawler_id.not_in(known))
        .group_by(c.source)
    )
    with engine.connect() as conn:
        per_day = {s: (int(p), int(d)) for s, p, d in conn.execute(day_q)}
        recent = {s: (int(n), int(p)) for s, n, p in conn.execute(recent_q)}
        beating = {s: int(n) for s, n in conn.execute(beating_q)}
    out = []
    for row in stats:
        source = row["source"]
        pages, done_count = per_day.get(source, (0, 0))
        keywords, recent_pages = recent.get(source, (0, 0))
        living = max(alive.get(source, 0), beating.get(source, 0))
        row = dict(row, pages=pages, done=done_count)
        out.append(_with_rate(row, keywords, recent_pages, window_minutes, spans.get(source), living, now, tz))
    return out


def crawl_spans(
    engine: Engine, sources: list[str], since: datetime, now: datetime, lease_timeout: float, reap_interval: float
) -> tuple[dict[str, list[Span]], dict[str, int], set[str]]:
    """Per source, the times from ``since`` to ``now`` its crawls ran (a run from its start to its end,
    or to now while alive; a run killed before its close not at all), how many of its runs are alive,
    and the crawler ids of those runs."""
    r = CrawlRun.__table__.c
    query = select(r.id, r.source, r.crawler_id, r.machine, r.started_at, r.ended_at).where(
        r.source.in_(sources), r.started_at <= now, or_(r.ended_at.is_(None), r.ended_at >= since)
    )
    with engine.connect() as conn:
        runs = list(conn.execute(query))
    living = alive_runs(engine, runs, now, lease_timeout, reap_interval)
    spans: dict[str, list[Span]] = {}
    alive: dict[str, int] = {}
    for run in runs:
        if run.ended_at is None and run.id not in living:
            continue
        if run.id in living:
            alive[run.source] = alive.get(run.source, 0) + 1
        start, end = max(run.started_at, since), min(run.ended_at or now, now)
        if end > start:
            spans.setdefault(run.source, []).append((start, end))
    return spans, alive, {run.crawler_id for run in runs}


def _union_minutes(spans: list[Span]) -> float:
    """The minutes the spans cover, an overlap counted once."""
    covered = 0.0
    current: Span | None = None
    for start, end in sorted(spans):
        if current is None or start > current[1]:
            if current is not None:
                covered += (current[1] - current[0]).total_seconds()
            current = (start, end)
        else:
            current = (current[0], max(current[1], end))
    if current is not None:
        covered += (current[1] - current[0]).total_seconds()
    return covered / 60


def _with_rate(
    row: dict[str, Any],
    keywords: int,
    pages: int,
    window: float,
    spans: list[Span] | None,
    alive: int,
    now: datetime,
    tz: ZoneInfo,
) -> dict[str, Any]:
    """The row with its rate over the minutes its crawls ran in the window (the whole window when no
    crawl left a run row), and an ETA while a crawler is alive."""
    row["remaining"] = max(0, row["total"] - row["done"])
    minutes = _union_minutes(spans) if spans else window
    per_minute = keywords / minutes if minutes > 0 else 0.0
    row["recent"] = {
        "window": window,
        "minutes": round(minutes, 3),
        "spans": [[start.isoformat(), end.isoformat()] for start, end in sorted(spans or [])],
        "keywords": keywords,
        "pages": pages,
        "keywords_per_minute": round(per_minute, 3),
        "pages_per_minute": round(pages / minutes, 3) if minutes > 0 else 0.0,
    }
    if alive:
        row["eta"], row["eta_seconds"] = eta(row["remaining"], per_minute, now, tz)
    else:
        row["eta"], row["eta_seconds"] = None, None
    row["crawlers_alive"] = alive
    return row


def eta(remaining: int, keywords_per_minute: float, now: datetime, tz: ZoneInfo) -> tuple[str | None, int | None]:
    """When the remaining keywords are done at this rate: (ISO time in ``tz``, seconds), or (None, None)."""
    if remaining <= 0 or keywords_per_minute <= 0:
        return None, None
    seconds = round(remaining / keywords_per_minute * 60)
    return (now + timedelta(seconds=seconds)).astimezone(tz).isoformat(timespec="seconds"), seconds


def total(rows: list[dict[str, Any]], now: datetime, tz: ZoneInfo) -> dict[str, Any]:
    """The rows of ``progress`` added up, as one more row with the source "all"."""
    summed = {"date": rows[0]["date"], "source": "all"}
    for name in ("total", "used", "unused", "jobs_found", "pages", "done"):
        summed[name] = sum(row[name] for row in rows)
    summed["crawl_status"] = {
        status: sum(row["crawl_status"][status] for row in rows) for status in rows[0]["crawl_status"]
    }
    window = rows[0]["recent"]["window"]
    keywords = sum(row["recent"]["keywords"] for row in rows)
    pages = sum(row["recent"]["pages"] for row in rows)
    spans = [
        (datetime.fromisoformat(start), datetime.fromisoformat(end))
        for row in rows
        for start, end in row["recent"]["spans"]
    ]
    alive = sum(row["crawlers_alive"] for row in rows)
    return _with_rate(summed, keywords, pages, window, spans, alive, now, tz)


# --- farm doctor ----------------------------------------------------------------


@dataclass(frozen=True)
class StaleLeases:
    count: int
    oldest_heartbeat: datetime | None
    crawlers: tuple[str, ...]


def stale_leases(engine: Engine, now: datetime, lease_timeout: int) -> StaleLeases:
    """Crawling rows whose holder sent no heartbeat for ``lease_timeout`` seconds (what `farm reap` frees)."""
    cutoff = now - timedelta(seconds=lease_timeout)
    stale = and_(c.crawl_status == "crawling", or_(c.heartbeat_at.is_(None), c.heartbeat_at < cutoff))
    with engine.connect() as conn:
        count, oldest = conn.execute(select(func.count(), func.min(c.heartbeat_at)).where(stale)).one()
        found = conn.execute(
            select(c.crawler_id).where(stale).group_by(c.crawler_id).order_by(c.crawler_id).limit(5)
        ).scalars()
        crawlers = tuple(str(crawler) for crawler in found)
    if oldest is not None and oldest.tzinfo is None:  # func.min returns the raw column
        oldest = oldest.replace(tzinfo=UTC)
    return StaleLeases(int(count), oldest, crawlers)


@dataclass(frozen=True)
class Failing:
    """Keywords whose last day ended failed for the day, and a few of them by name."""

    today: int  # failed today with no claim left today (retries or block claims exhausted)
    blocked_all_day: int  # of those, the ones failed for FARM_MAX_BLOCKED_CLAIMS blocks
    earlier: int  # failed on their last requested day, before today, and not claimed since
    examples: tuple[dict[str, Any], ...]


def failing_keywords(engine: Engine, today: date, limits: Limits) -> Failing:
    """What the table can tell of keywords that keep failing.

    It keeps each keyword's last requested day only: whether a keyword also
    failed on the days before that is not recorded.
    """
    exhausted = and_(c.last_requested_date == today, limits.exhausted())
    earlier = and_(c.crawl_status == "failed", c.last_requested_date < today)
    blocked = and_(exhausted, c.blocked_claims >= limits.max_blocked_claims)
    # both kinds are failed rows: read through an index on the status, not the whole table
    failed = c.crawl_status == "failed"
    with engine.connect() as conn:
        counts = conn.execute(
            select(
                func.coalesce(func.sum(case((exhausted, 1), else_=0)), 0),
                func.coalesce(func.sum(case((blocked, 1), else_=0)), 0),
                func.coalesce(func.sum(case((earlier, 1), else_=0)), 0),
            ).where(failed)
        ).one()
        rows = conn.execute(
            select(
                c.id, c.source, c.city, c.job, c.last_requested_date, c.retry_count, c.blocked_claims, c.error_message
            )
            .where(failed, or_(exhausted, earlier))
            .order_by(c.last_requested_date.desc(), c.id)
            .limit(ERROR_EXAMPLES)
        ).mappings()
        examples = tuple(dict(row) for row in rows)
    return Failing(int(counts[0]), int(counts[1]), int(counts[2]), examples)


def salary_unread(engine: Engine, day: date, tz: ZoneInfo) -> dict[str, dict[str, Any]]:
    """Per site, {"seen", "unread"}: the postings seen on ``day`` (first seen before its end, last
    seen at or after its start) and those of them whose salary text no rule reads (salary_unit NULL)."""
    P = JobPostingRow.__table__.c
    span = day_span(day, tz).utc()
    start, end = span.start, span.end
    unread = func.coalesce(func.sum(case((and_(P.salary_unit.is_(None), P.salary.is_not(None)), 1), else_=0)), 0)
    query = (
        select(P.source, func.count(), unread).where(P.last_seen_at >= start, P.first_seen_at < end).group_by(P.source)
    )
    with engine.connect() as conn:
        return {source: {"seen": int(seen), "unread": int(n)} for source, seen, n in conn.execute(query)}
