"""Spidermon monitors over one run: did it finish, end every keyword it claimed, carry the fields,
get through the sites' refusals.

They read the crawl's stats and farm/runs/coverage/* (farm.extensions.runs sets those at the close).
`farm check` runs :class:`RunMonitors` over each of the day's runs, from the stats the run table kept;
a project that runs Spidermon's extension runs them in the crawl itself:

    SPIDERMON_ENABLED = True
    EXTENSIONS = {"spidermon.contrib.scrapy.extensions.Spidermon": 500}
    SPIDERMON_SPIDER_CLOSE_MONITORS = ("farm.checks.monitors.RunMonitors",)

The thresholds are the FARM_CHECK_* settings (farm.checks.thresholds): from the crawl's settings in a
crawl, from the project's in `farm check`.
"""

from spidermon import Monitor, MonitorSuite, monitors
from spidermon import settings as spidermon_settings
from spidermon.runners import MonitorRunner

from farm.checks.result import CheckResult
from farm.checks.thresholds import Thresholds, thresholds_from
from farm.runs.numbers import run_numbers

COVERAGE_PREFIX = "farm/runs/coverage/"
# a run's postings must carry these often enough (published_at is not checked: boss gives none)
COVERED = ("company", "city", "salary")


def coverage_of(stats) -> dict:
    return {
        name.removeprefix(COVERAGE_PREFIX): value for name, value in stats.items() if name.startswith(COVERAGE_PREFIX)
    }


class RunMonitor(Monitor):
    """What each monitor reads: the run's numbers and the thresholds."""

    @property
    def numbers(self):
        stats = dict(self.data.stats)
        return run_numbers(stats, coverage_of(stats))

    @property
    def thresholds(self) -> Thresholds:
        given = self.data.get("thresholds")
        if given is not None:
            return given
        return thresholds_from(self.data.crawler.settings)


@monitors.name("run")
class RunEnded(RunMonitor):
    @monitors.name("finished")
    def test_finished(self):
        reason = self.data.stats.get("finish_reason")
        self.assertEqual(reason, "finished", msg=f"the run ended {reason!r}, not 'finished'")

    @monitors.name("keywords_ended")
    def test_every_claimed_keyword_ended(self):
        numbers = self.numbers
        self.assertEqual(
            numbers.keywords_ended,
            numbers.keywords_claimed,
            msg=f"{numbers.keywords_claimed} keywords claimed, {numbers.keywords_ended} ended",
        )


@monitors.name("run")
class RunFields(RunMonitor):
    @monitors.name("coverage")
    def test_fields_carried(self):
        coverage = self.numbers.coverage
        items = coverage.get("items", 0)
        if not items:
            return
        low = {name: coverage.get(name, 0) / items for name in COVERED}
        short = {name: share for name, share in low.items() if share < self.thresholds.min_coverage}
        self.assertFalse(
            short,
            msg=", ".join(f"{name} on {share:.0%} of {items} postings" for name, share in short.items())
            + f" (below {self.thresholds.min_coverage:.0%})",
        )


@monitors.name("run")
class RunRefusals(RunMonitor):
    @monitors.name("refusals")
    def test_refusals_share(self):
        numbers = self.numbers
        refused = sum(numbers.refusals.values())
        asked = refused + numbers.pages
        share = refused / asked if asked else 0.0
        self.assertLessEqual(
            share,
            self.thresholds.max_refusals,
            msg=f"{refused} of {asked} requests refused ({share:.0%}, above {self.thresholds.max_refusals:.0%})",
        )


class RunMonitors(MonitorSuite):
    monitors = [RunEnded, RunFields, RunRefusals]


def run_monitors(stats: dict, thresholds: Thresholds, subject: str) -> list[CheckResult]:
    """RunMonitors over one run's stats, outside a crawl; a CheckResult a monitor."""
    result = MonitorRunner().run(RunMonitors(), stats=stats, thresholds=thresholds)
    checks = []
    for outcome in result.monitor_results:
        ok = outcome.status == spidermon_settings.MONITOR.STATUS.SUCCESS
        detail = "held" if ok else _first_line(outcome.error)
        checks.append(CheckResult(outcome.monitor.name.replace("/", "_"), subject, ok, detail))
    return checks


def _first_line(error) -> str:
    """unittest's failure text ends with the monitor's message: keep that."""
    text = str(error or "").strip().splitlines()
    last = text[-1] if text else "failed"
    return last.split(" : ", 1)[-1]
