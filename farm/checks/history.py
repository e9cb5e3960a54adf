"""The day against its history: pure functions over farm.runs.history's rows (tested without a database).

- postings_drop: a (site, city, keyword) completed today with fewer postings than (1 - share) of its
  median over the completed days before;
- coverage_drop: a site's postings carrying a field (salary parsed, company, city, published date) less
  often than on its median day, by more than a share;
- refusals_rise: a site's refusals, as a share of its requests, above its median day's by more than a share;
- site_crawled: a site with keywords on which no crawl ran that day;
- keywords_crawled: a site's keywords that no crawl of the day reached;
- keyword_partial: a keyword partial (or still crawling) at the end of the day;
- keyword_failed: a keyword that ended the day failed;
- run_unfinished: a run of the day or the day before with no end, whose crawler is gone (farm.runs.live)
  or which started longer ago than FARM_CHECK_RUN_HOURS.
"""

from collections import defaultdict
from datetime import date, datetime, timedelta
from statistics import median

from farm.checks.result import CheckResult
from farm.checks.thresholds import Thresholds
from farm.runs.history import KeptKeyword, KeptRun, SiteDay
from farm.runs.numbers import FIELDS

UNFINISHED = ("partial", "crawling")
NAMED = 5  # keywords never crawled named by name; then how many more


def postings_drop(keywords: list[KeptKeyword], day: date, limits: Thresholds) -> list[CheckResult]:
    before = defaultdict(list)
    for kept in keywords:
        if kept.day < day and kept.status == "completed":
            before[(kept.source, kept.city, kept.job)].append(kept.jobs_found)
    checks = []
    for kept in keywords:
        key = (kept.source, kept.city, kept.job)
        if kept.day != day or kept.status != "completed" or not before[key]:
            continue
        usual = median(before[key])
        if usual < limits.min_postings:
            continue
        ok = kept.jobs_found >= (1 - limits.postings_drop) * usual
        detail = f"{kept.jobs_found} postings, median {usual:g} over {len(before[key])} day(s) before"
        checks.append(CheckResult("postings_drop", f"{kept.source} {kept.city}/{kept.job}", ok, detail))
    return checks


def keyword_partial(keywords: list[KeptKeyword], day: date) -> list[CheckResult]:
    return [
        CheckResult("keyword_partial", f"{kept.source} {kept.city}/{kept.job}", False, f"ended {day} {kept.status}")
        for kept in keywords
        if kept.day == day and kept.status in UNFINISHED
    ]


def keyword_failed(keywords: list[KeptKeyword], day: date) -> list[CheckResult]:
    return [
        CheckResult("keyword_failed", f"{kept.source} {kept.city}/{kept.job}", False, f"ended {day} failed")
        for kept in keywords
        if kept.day == day and kept.status == "failed"
    ]


def site_crawled(sites: list[SiteDay], runs: list[KeptRun], day: date) -> list[CheckResult]:
    """A site with keywords and no run that started on ``day`` fails; no keyword at all fails too."""
    if not any(site.keywords for site in sites):
        return [CheckResult("site_crawled", "every site", False, f"no keyword to crawl on {day}, no crawl ran")]
    ran = defaultdict(int)
    for run in runs:
        if run.day == day:
            ran[run.source] += 1
    return [
        CheckResult(
            "site_crawled",
            site.source,
            bool(ran[site.source]),
            f"{ran[site.source]} run(s) on {day}" if ran[site.source] else f"no crawl ran on {day}",
        )
        for site in sites
        if site.keywords
    ]


def keywords_crawled(sites: list[SiteDay], runs: list[KeptRun], day: date) -> list[CheckResult]:
    """A site that ran on ``day`` fails when some of its keywords were neither kept nor requested that day."""
    ran = {run.source for run in runs if run.day == day}
    checks = []
    for site in sites:
        if site.source not in ran or not site.keywords:
            continue  # site_crawled says it
        missed = site.uncrawled
        if not missed:
            detail = f"all {site.keywords} keywords crawled on {day}"
        else:
            named = ", ".join(missed[:NAMED]) + (f" and {len(missed) - NAMED} more" if len(missed) > NAMED else "")
            detail = f"{len(missed)} of {site.keywords} keywords never crawled on {day}: {named}"
        checks.append(CheckResult("keywords_crawled", site.source, not missed, detail))
    return checks


def _by_source_day(runs: list[KeptRun]) -> dict:
    grouped = defaultdict(list)
    for run in runs:
        if run.ended_at is not None:
            grouped[(run.source, run.day)].append(run)
    return grouped


def coverage_drop(runs: list[KeptRun], day: date, limits: Thresholds) -> list[CheckResult]:
    shares = defaultdict(dict)  # (source, field) -> {day: share}
    for (source, when), group in _by_source_day(runs).items():
        items = sum(run.coverage.get("items", 0) for run in group)
        if items:
            for name in FIELDS:
                shares[(source, name)][when] = sum(run.coverage.get(name, 0) for run in group) / items
    checks = []
    for (source, name), by_day in sorted(shares.items()):
        earlier = [share for when, share in by_day.items() if when < day]
        if day not in by_day or not earlier:
            continue
        usual, now = median(earlier), by_day[day]
        ok = now >= usual - limits.coverage_drop
        checks.append(
            CheckResult("coverage_drop", f"{source} {name}", ok, f"on {now:.0%} of postings, median {usual:.0%}")
        )
    return checks


def refusals_rise(runs: list[KeptRun], day: date, limits: Thresholds) -> list[CheckResult]:
    shares = defaultdict(dict)  # source -> {day: share}
    for (source, when), group in _by_source_day(runs).items():
        refused = sum(sum(run.refusals.values()) for run in group)
        asked = refused + sum(run.pages for run in group)
        if asked:
            shares[source][when] = refused / asked
    checks = []
    for source, by_day in sorted(shares.items()):
        earlier = [share for when, share in by_day.items() if when < day]
        if day not in by_day or not earlier:
            continue
        usual, now = median(earlier), by_day[day]
        ok = now <= usual + limits.refusals_rise
        checks.append(CheckResult("refusals_rise", source, ok, f"{now:.0%} of requests refused, median {usual:.0%}"))
    return checks


def run_unfinished(
    runs: list[KeptRun], day: date, now: datetime, limits: Thresholds, alive: set[int] | None = None
) -> list[CheckResult]:
    """A run with no end that started on ``day`` or the day before (a run killed late in the evening is
    told the next day) fails when its crawler is gone (not in ``alive``, farm.runs.live) or it started
    longer ago than FARM_CHECK_RUN_HOURS."""
    late = now - timedelta(hours=limits.run_hours)
    checks = []
    for run in runs:
        if run.ended_at is not None or run.day not in (day, day - timedelta(days=1)):
            continue
        gone = alive is not None and run.id not in alive
        if not gone and run.started_at >= late:
            continue
        why = "its crawler is gone (killed before its close)" if gone else f"running for over {limits.run_hours} h"
        checks.append(
            CheckResult(
                "run_unfinished",
                f"{run.source} run {run.id}",
                False,
                f"started {run.day} ({run.started_at:%Y-%m-%d %H:%M} UTC) on {run.machine}, never ended: {why}",
            )
        )
    return checks
