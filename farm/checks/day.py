"""One day's checks, per run (the Spidermon monitors) and over history, read from the run table."""

from datetime import date, datetime, timedelta
from zoneinfo import ZoneInfo

from sqlalchemy.engine import Engine

from farm.checks import history
from farm.checks.monitors import run_monitors
from farm.checks.result import CheckResult
from farm.checks.thresholds import Thresholds
from farm.runs.history import kept_keywords, kept_runs


def check_day(engine: Engine, day: date, tz: ZoneInfo, limits: Thresholds, now: datetime) -> list[CheckResult]:
    """Every check of ``day``: the monitors of each run that ended, then the history checks."""
    first = day - timedelta(days=limits.history_days)
    keywords = kept_keywords(engine, first, day)
    runs = kept_runs(engine, first, day, tz)
    checks = []
    for run in runs:
        if run.day == day and run.ended_at is not None:
            checks += run_monitors(run.stats, limits, f"{run.source} run {run.id}")
    checks += history.run_unfinished(runs, day, now, limits)
    checks += history.keyword_partial(keywords, day)
    checks += history.postings_drop(keywords, day, limits)
    checks += history.coverage_drop(runs, day, limits)
    checks += history.refusals_rise(runs, day, limits)
    return checks
