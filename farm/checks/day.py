"""One day's checks, per run (the Spidermon monitors) and over history, read from the run table."""

from datetime import date, datetime, timedelta
from zoneinfo import ZoneInfo

from sqlalchemy.engine import Engine

from farm.checks import history
from farm.checks.monitors import run_monitors
from farm.checks.result import CheckResult
from farm.checks.thresholds import Thresholds
from farm.config import default
from farm.runs.history import kept_keywords, kept_runs, site_days
from farm.runs.live import alive_runs


def check_day(
    engine: Engine,
    day: date,
    tz: ZoneInfo,
    limits: Thresholds,
    now: datetime,
    lease_timeout: float = default("lease_timeout"),
    reap_interval: float = default("reap_interval"),
) -> list[CheckResult]:
    """Every check of ``day``: whether each site ran and reached its keywords, the monitors of each run
    that ended, then the history checks. A run with no end is judged by FARM_LEASE_TIMEOUT and
    FARM_REAP_INTERVAL (farm.runs.live)."""
    first = day - timedelta(days=limits.history_days)
    keywords = kept_keywords(engine, first, day)
    runs = kept_runs(engine, first, day, tz)
    sites = site_days(engine, day, tz)
    checks = history.site_crawled(sites, runs, day)
    checks += history.keywords_crawled(sites, runs, day)
    for run in runs:
        if run.day == day and run.ended_at is not None:
            checks += run_monitors(run.stats, limits, f"{run.source} run {run.id}")
    checks += history.run_unfinished(
        runs, day, now, limits, alive_runs(engine, runs, now, lease_timeout, reap_interval)
    )
    checks += history.keyword_partial(keywords, day)
    checks += history.keyword_failed(keywords, day)
    checks += history.postings_drop(keywords, day, limits)
    checks += history.coverage_drop(runs, day, limits)
    checks += history.refusals_rise(runs, day, limits)
    return checks
