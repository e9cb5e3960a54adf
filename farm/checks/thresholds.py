"""The checks' thresholds: Scrapy settings (``-s``-able in a crawl, a project's settings.py), their
defaults here, checked once; a bad one is one line naming it."""

from dataclasses import dataclass

from farm.errors import BadSetting

# setting name -> (field, default, lowest, highest)
SETTINGS = {
    "FARM_CHECK_HISTORY_DAYS": ("history_days", 7, 1, 366),
    "FARM_CHECK_POSTINGS_DROP": ("postings_drop", 0.4, 0.0, 1.0),
    "FARM_CHECK_MIN_POSTINGS": ("min_postings", 10, 0, 10**9),
    "FARM_CHECK_COVERAGE_DROP": ("coverage_drop", 0.1, 0.0, 1.0),
    "FARM_CHECK_MIN_COVERAGE": ("min_coverage", 0.8, 0.0, 1.0),
    "FARM_CHECK_REFUSALS_RISE": ("refusals_rise", 0.2, 0.0, 1.0),
    "FARM_CHECK_MAX_REFUSALS": ("max_refusals", 0.5, 0.0, 1.0),
    "FARM_CHECK_RUN_HOURS": ("run_hours", 12.0, 0.0, 24.0 * 366),
}


@dataclass(frozen=True)
class Thresholds:
    history_days: int = 7  # the days before the checked one that make its history
    postings_drop: float = 0.4  # a keyword's postings fallen by more than this share of their median: fail
    min_postings: int = 10  # a keyword whose median is below this is too small to judge
    coverage_drop: float = 0.1  # a field's share of postings fallen by more than this (absolute): fail
    min_coverage: float = 0.8  # a run whose postings carry company, city or salary less often: fail
    refusals_rise: float = 0.2  # refusals' share of a site's requests risen by more than this: fail
    max_refusals: float = 0.5  # a run refused more often than this: fail
    run_hours: float = 12.0  # a run started this long ago with no end never finished


def thresholds_from(settings) -> Thresholds:
    """The thresholds in ``settings`` (Scrapy's Settings, or any mapping); BadSetting names a bad one."""
    values = {}
    for name, (attribute, default, low, high) in SETTINGS.items():
        raw = settings.get(name, default)
        kind = int if isinstance(default, int) else float
        try:
            value = kind(raw)
        except (TypeError, ValueError):
            raise BadSetting(f"{name}={raw!r} is not a number; give one from {low} to {high}") from None
        if not low <= value <= high:
            raise BadSetting(f"{name}={raw!r} is out of range; give one from {low} to {high}")
        values[attribute] = value
    return Thresholds(**values)
