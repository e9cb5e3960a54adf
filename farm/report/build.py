"""Write the day's report page: its figures read, drawn and laid out."""

from datetime import date
from pathlib import Path
from zoneinfo import ZoneInfo

from sqlalchemy.engine import Engine

from farm.checks.thresholds import Thresholds
from farm.openings.stored import update_if_allowed
from farm.report.checked import read_checks
from farm.report.figures import DayFigures, gather
from farm.report.openings import read_openings
from farm.report.page import render
from farm.salary.monthly import Conversion
from farm.state.clock import utcnow
from farm.state.tallies import Limits


def write_report(
    engine: Engine,
    out: Path,
    day: date,
    tz: ZoneInfo,
    days: int = 30,
    gone_after: int = 7,
    database: str = "",
    conversion: Conversion | None = None,
    caps: dict[str, int] | None = None,
    limits: Thresholds | None = None,
    claim_limits: Limits | None = None,
) -> DayFigures:
    """Read the figures of ``day`` and write the page to ``out``; the figures. Salaries of monthly
    pay alone, or of every pay period through ``conversion``; what the page caps (``caps``: source ->
    pages) left behind; the day's checks by ``limits`` (FARM_CHECK_*); the keywords left to crawl by
    ``claim_limits`` (FARM_MAX_RETRIES, FARM_MAX_BLOCKED_CLAIMS); the openings, once the postings
    in none yet are put in one where the account may write (farm.openings.stored)."""
    figures = gather(engine, day, tz, days, gone_after, conversion, caps, claim_limits)
    if figures.keywords_stored or figures.postings_stored:
        update_if_allowed(engine)  # the day's postings into the openings stored, where the account may write
        figures.checks = read_checks(engine, day, tz, limits or Thresholds(), utcnow())
        figures.openings = read_openings(engine, day, tz, gone_after)
    out.write_text(render(figures, utcnow().astimezone(tz), database), encoding="utf-8")
    return figures
