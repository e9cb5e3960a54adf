"""The day's checks as pure functions (farm.checks.history, .monitors, .thresholds, .alerts)."""

from datetime import UTC, date, datetime, timedelta

import pytest

from farm.checks import history
from farm.checks.alerts import database_name, message, send, services
from farm.checks.monitors import run_monitors
from farm.checks.result import CheckResult
from farm.checks.thresholds import Thresholds, thresholds_from
from farm.errors import BadSetting
from farm.runs.history import KeptKeyword, KeptRun, SiteDay

DAY = date(2026, 5, 8)
LIMITS = Thresholds()


def kept(days_back, found, status="completed", job="python"):
    return KeptKeyword(DAY - timedelta(days=days_back), "qcwy", "北京", job, status, found)


def run(days_back, items=100, salary=95, pages=10, refused=0, ended=True, run_id=1):
    started = datetime(2026, 5, 8, 1, tzinfo=UTC) - timedelta(days=days_back)
    coverage = {"items": items, "salary": salary, "company": items, "city": items, "published_at": items}
    end = started + timedelta(hours=1) if ended else None
    return KeptRun(
        run_id, "qcwy", "vm", started.date(), started, end, "finished", pages, items, {"captcha": refused}, coverage, {}
    )


def test_postings_drop_fails_below_the_share_of_the_completed_days_median_only():
    keywords = [kept(3, 40), kept(2, 44), kept(1, 5, "partial"), kept(0, 23)]
    (check,) = history.postings_drop(keywords, DAY, LIMITS)
    assert check == CheckResult(
        "postings_drop", "qcwy 北京/python", False, "23 postings, median 42 over 2 day(s) before"
    )
    (held,) = history.postings_drop([*keywords[:3], kept(0, 26)], DAY, LIMITS)
    assert held.ok


def test_postings_drop_leaves_small_keywords_and_unfinished_days_alone():
    assert history.postings_drop([kept(1, 8), kept(0, 1)], DAY, LIMITS) == []
    assert history.postings_drop([kept(1, 40), kept(0, 3, "partial")], DAY, LIMITS) == []


def test_a_keyword_partial_at_the_end_of_the_day_fails():
    checks = history.keyword_partial([kept(0, 3, "partial"), kept(0, 9, job="java"), kept(1, 1, "partial")], DAY)
    assert [(c.subject, c.ok, c.detail) for c in checks] == [("qcwy 北京/python", False, "ended 2026-05-08 partial")]


def test_coverage_drop_and_refusals_rise_compare_the_site_with_its_median_day():
    runs = [run(2), run(1), run(0, salary=50, refused=2)]
    coverage = {c.subject: c for c in history.coverage_drop(runs, DAY, LIMITS)}
    assert not coverage["qcwy salary"].ok and coverage["qcwy company"].ok
    assert coverage["qcwy salary"].detail == "on 50% of postings, median 95%"
    (refusals,) = history.refusals_rise(runs, DAY, LIMITS)
    assert refusals.ok and refusals.detail == "17% of requests refused, median 0%"
    (risen,) = history.refusals_rise([run(1), run(0, refused=30)], DAY, LIMITS)
    assert not risen.ok


def test_a_run_with_no_end_fails_once_it_is_older_than_the_setting():
    runs = [run(0, ended=False, run_id=7), run(0, run_id=8)]
    started = runs[0].started_at
    assert history.run_unfinished(runs, DAY, started + timedelta(hours=11), LIMITS) == []
    (late,) = history.run_unfinished(runs, DAY, started + timedelta(hours=13), LIMITS)
    assert (late.subject, late.ok) == ("qcwy run 7", False)


def test_the_spidermon_monitors_fail_a_run_that_did_not_finish_its_keywords():
    stats = {
        "finish_reason": "shutdown",
        "farm/lease/claimed/fresh": 3,
        "farm/keyword/completed": 2,
        "farm/progress/pages": 8,
        "farm/block/captcha": 2,
        "farm/runs/coverage/items": 10,
        "farm/runs/coverage/company": 10,
        "farm/runs/coverage/city": 5,
        "farm/runs/coverage/salary": 10,
    }
    checks = {c.name: c for c in run_monitors(stats, LIMITS, "qcwy run 3")}
    assert checks["run_finished"].detail == "the run ended 'shutdown', not 'finished'"
    assert checks["run_keywords_ended"].detail == "3 keywords claimed, 2 ended"
    assert checks["run_coverage"].detail == "city on 50% of 10 postings (below 80%)"
    assert checks["run_refusals"].ok and not any(c.ok for n, c in checks.items() if n != "run_refusals")


def test_thresholds_come_from_the_settings_and_a_bad_one_is_named():
    assert thresholds_from({"FARM_CHECK_POSTINGS_DROP": "0.3"}).postings_drop == 0.3
    with pytest.raises(BadSetting, match="^FARM_CHECK_HISTORY_DAYS='x' cannot be used: it takes a whole number"):
        thresholds_from({"FARM_CHECK_HISTORY_DAYS": "x"})
    with pytest.raises(BadSetting, match="^FARM_CHECK_MIN_COVERAGE='2' cannot be used: it takes a share from 0 to 1"):
        thresholds_from({"FARM_CHECK_MIN_COVERAGE": 2})


def test_an_unknown_alert_url_is_named_by_its_place_and_scheme_never_its_secret():
    with pytest.raises(BadSetting) as raised:
        services(["json://127.0.0.1/x", "nosuch://s3cret-token@host"])
    assert str(raised.value.message) == "alert URL 2 (scheme 'nosuch') is not a service apprise knows"
    assert [s.service_name for s in services(["dingtalk://abcdefghijklmnop/", "wecombot://key123"])] == [
        "DingTalk",
        "WeCom Bot",
    ]


def test_the_alert_names_the_failures_the_day_and_the_database_never_its_password():
    title, body = message(
        [CheckResult("a", "x", True, "held"), CheckResult("postings_drop", "qcwy 北京/java", False, "20")],
        DAY,
        database_name("mysql+pymysql://farm:s3cret@db.example:3306/farm?charset=utf8mb4"),
    )
    assert title == "farm check 2026-05-08 on mysql db.example:3306/farm: 1 of 2 checks failed"
    assert body == "FAIL postings_drop      qcwy 北京/java: 20"
    assert database_name("sqlite:////srv/farm.db") == "sqlite /srv/farm.db"


def test_a_send_that_fails_names_the_service_and_why_without_its_secret():
    url = "json://farm:s3cret-pass@127.0.0.1:9/hook"  # the discard port: nothing listens
    sent = send(
        services([url]), [CheckResult("keyword_failed", "qcwy 北京/java", False, "ended failed")], DAY, "x", [url]
    )
    assert not sent.delivered and sent.services == ["JSON"]
    ((service, why),) = sent.unsent.items()
    assert service == "JSON (1)" and "Connection error" in why and "s3cret" not in why


def site(source="qcwy", keywords=3, uncrawled=()):
    return SiteDay(source, keywords, tuple(uncrawled))


def test_a_site_with_keywords_and_no_crawl_that_day_fails_naming_the_site_and_the_day():
    checks = history.site_crawled([site(), site("zhilian")], [run(0), run(1)], DAY)
    assert [(c.subject, c.ok, c.detail) for c in checks] == [
        ("qcwy", True, "1 run(s) on 2026-05-08"),
        ("zhilian", False, "no crawl ran on 2026-05-08"),
    ]
    (nothing,) = history.site_crawled([site(keywords=0)], [], DAY)
    assert (nothing.ok, nothing.detail) == (False, "no keyword to crawl on 2026-05-08, no crawl ran")


def test_keywords_no_crawl_of_the_day_reached_fail_named():
    missed = [f"北京/job{n}" for n in range(7)]
    (check,) = history.keywords_crawled([site(keywords=9, uncrawled=missed), site("boss")], [run(0)], DAY)
    assert (check.subject, check.ok) == ("qcwy", False)
    assert check.detail == (
        "7 of 9 keywords never crawled on 2026-05-08: 北京/job0, 北京/job1, 北京/job2, 北京/job3, 北京/job4 and 2 more"
    )
    (held,) = history.keywords_crawled([site()], [run(0)], DAY)
    assert held.ok and held.detail == "all 3 keywords crawled on 2026-05-08"


def test_a_keyword_that_ended_the_day_failed_fails():
    (check,) = history.keyword_failed([kept(0, 0, "failed"), kept(0, 9, job="java"), kept(1, 0, "failed")], DAY)
    assert (check.name, check.subject, check.ok, check.detail) == (
        "keyword_failed",
        "qcwy 北京/python",
        False,
        "ended 2026-05-08 failed",
    )


def test_a_run_whose_crawler_is_gone_fails_at_once_and_again_the_next_day():
    killed = run(0, ended=False, run_id=7)
    soon = killed.started_at + timedelta(minutes=5)
    assert history.run_unfinished([killed], DAY, soon, LIMITS, alive={7}) == []
    (gone,) = history.run_unfinished([killed], DAY, soon, LIMITS, alive=set())
    assert gone.subject == "qcwy run 7" and "killed before its close" in gone.detail
    assert "2026-05-08" in gone.detail
    (next_day,) = history.run_unfinished([killed], DAY + timedelta(days=1), soon, LIMITS, alive=set())
    assert next_day.subject == "qcwy run 7"
