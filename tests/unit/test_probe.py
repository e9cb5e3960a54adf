"""`farm probe`'s parts without a crawl: the verdict read from a child's report, the settings a probe
changes, and the command's checks of its arguments (before any process is started)."""

import pytest
from click.testing import CliRunner
from scrapy.settings import Settings

from farm import settings as farm_settings
from farm.cli import farm
from farm.probe.plan import RETRIES, Probe, default_city, overrides
from farm.probe.verdict import Ended, judge

FINISHED = {"finish_reason": "finished"}


def report(stats=None, keyword=None, **more):
    return {"site": "boss", "city": "北京", "job": "python", "stats": {**FINISHED, **(stats or {})}, **more} | {
        "keyword": keyword or {"crawl_status": "partial", "last_completed_page": 0}
    }


@pytest.mark.parametrize(
    ("target", "door"),
    [("chrome146", "a browser's fingerprint, chrome146"), ("", "Scrapy's own client: impersonation off")],
)
def test_a_completed_page_is_ok_with_its_postings_and_the_client_it_went_out_as(target, door):
    done = report(keyword={"crawl_status": "completed", "last_completed_page": 1}, postings=15, impersonate=target)
    verdict = judge("boss", done, Ended(0), 90)
    assert verdict.line() == f"boss     ok: 15 postings on page 1 (plain, with {door})"
    assert (verdict.ok, verdict.postings, verdict.wall) == (True, 15, None)


def test_a_wall_the_browser_passed_is_named_with_its_seconds():
    done = report(
        {"farm/wall/met/qcwy_acw_sc__v2": 1, "farm/session/earned": 1},
        {"crawl_status": "completed", "last_completed_page": 1},
        postings=20,
        passes=[{"wall": "qcwy_acw_sc__v2", "seconds": 1.44}],
    )
    verdict = judge("qcwy", done, Ended(0), 90)
    assert verdict.what == "20 postings on page 1; wall qcwy_acw_sc__v2 passed by the browser in 1.4 s"
    assert (verdict.wall, verdict.seconds) == ("qcwy_acw_sc__v2", 1.44)


def test_sessions_the_site_refuses_after_the_browser_earned_them_are_a_block_not_a_slider():
    stats = {"farm/wall/met/boss_security_check": 4, "farm/session/earned": 2, "farm/block/boss_37": 3}
    verdict = judge("boss", report(stats), Ended(0), 90)
    assert verdict.status == "blocked"
    assert verdict.what == (
        "boss_37 ×3, although the browser passed boss_security_check (2 sessions): the site refused the sessions "
        "it earned"
    )


@pytest.mark.parametrize(
    ("kind", "fix"),
    [
        ("browser", "install Chromium (apt-get install chromium), or set FARM_BROWSER_EXECUTABLE"),
        ("timeout", "raise FARM_BROWSER_TIMEOUT (the probe gave it 26 s)"),
    ],
)
def test_a_wall_the_browser_could_not_pass_names_why_and_the_setting(kind, fix):
    stats = {"farm/wall/met/zhilian_verification": 1, f"farm/wall/not_passed/{kind}": 1}
    stats[f"farm/block/zhilian_verification_{kind}"] = 3
    why = [{"wall": "zhilian_verification", "why": "no browser: chromium not found"}]
    verdict = judge("zhilian", report(stats, not_passed=why, browser_timeout=26), Ended(0), 90)
    assert verdict.line() == f"zhilian  wall: zhilian_verification not passed: no browser: chromium not found — {fix}"


def test_a_wall_met_with_no_browser_allowed_names_farm_browser_pages():
    verdict = judge("boss", report({"farm/wall/met/boss_security_check": 3, "farm/block/boss_37": 3}), Ended(0), 90)
    assert (verdict.status, verdict.fix) == ("wall", "set FARM_BROWSER_PAGES above 0")


@pytest.mark.parametrize(
    ("blocks", "status", "fix"),
    [
        ({"qcwy_empty_page": 3}, "refused", "an answer farm does not understand; see docs/sites.md"),
        ({"boss_code_121": 3}, "refused", "an answer farm does not understand; see docs/sites.md"),
        ({"http_429": 3}, "blocked", "lower FARM_QCWY_RATE, use FARM_PROXIES, or try later"),
        ({"qcwy_waf_slider": 3}, "slider", "lower FARM_QCWY_RATE, use FARM_PROXIES, or try later"),
    ],
)
def test_refusals_are_told_by_their_shape(blocks, status, fix):
    stats = {f"farm/block/{shape}": n for shape, n in blocks.items()} | {"farm/block/count": 3}
    stats |= {"farm/block/retry/count": 2, "downloader/response_status_count/200": 3}
    verdict = judge("qcwy", report(stats), Ended(0), 90)
    assert (verdict.status, verdict.what, verdict.fix, verdict.blocks) == (
        status,
        f"cannot pass ({next(iter(blocks))})" if status == "slider" else f"{next(iter(blocks))} ×3",
        fix,
        blocks,
    )


def test_a_search_answered_404_points_at_the_base_url():
    stats = {"farm/block/boss_unrecognised": 3, "downloader/response_status_count/404": 3}
    verdict = judge("boss", report(stats), Ended(0), 90)
    assert verdict.line() == (
        "boss     refused: boss_unrecognised ×3: the site answered HTTP 404 to the search — check FARM_BOSS_BASE_URL"
    )


def test_no_answer_is_no_network_with_the_error_as_stored_without_its_url_and_curls_boilerplate():
    error = (
        "site unavailable: ConnectionError: Failed to perform, curl: (7) Failed to connect to proxy.example "
        "port 3128: Connection refused. See https://curl.se/libcurl/c/libcurl-errors.html first for more details. "
        "at https://www.zhipin.com/wapi/zpgeek/search/joblist.json?query=python (still failing after 2 retries)"
    )
    stats = {"farm/site/errors": 3, "downloader/exception_type_count/curl_cffi.requests.exceptions.ConnectionError": 3}
    verdict = judge("boss", report(stats, {"crawl_status": "partial", "error_message": error}), Ended(0), 90)
    assert verdict.line() == (
        "boss     no network: ConnectionError: curl: (7) Failed to connect to proxy.example port 3128: Connection "
        "refused. — check FARM_BOSS_BASE_URL and the proxy (FARM_PROXIES)"
    )


def test_a_crawl_out_of_time_without_an_answer_names_the_errors_by_kind():
    stats = {
        "finish_reason": "closespider_timeout",
        "farm/site/errors": 2,
        "downloader/exception_type_count/curl_cffi.requests.exceptions.DNSError": 2,
    }
    row = {"crawl_status": "partial", "error_message": "crawl closed before the keyword was done (closespider_timeout)"}
    verdict = judge("qcwy", report(stats, row, crawl_seconds=13.3), Ended(0), 20)
    assert (verdict.status, verdict.what) == ("no network", "DNSError ×2; no answer within 13.3 s")


def test_a_child_stopped_at_the_deadline_without_a_report_is_a_timeout():
    verdict = judge("zhilian", None, Ended(None), 30)
    assert verdict.line() == (
        "zhilian  timeout: no outcome within 30 s — raise --timeout, or check FARM_ZHILIAN_BASE_URL and the proxy "
        "(FARM_PROXIES)"
    )


def test_a_child_that_died_says_its_last_words_without_secrets():
    ended = Ended(1, "Traceback ...\nOSError: cannot reach mysql://farm:hunter2@db/farm\n")
    verdict = judge("boss", None, ended, 90)
    assert verdict.status == "error"
    assert (
        verdict.what
        == "the probe's crawl ended (exit 1) without a report: OSError: cannot reach mysql://farm:***@db/farm"
    )


def test_a_probe_keeps_off_the_users_state_and_fits_its_waits_in_its_time():
    settings = Settings()
    settings.setmodule(farm_settings)
    probe = Probe("qcwy", "北京", "python", 90)
    changed = overrides(probe, "qcwy", settings, "sqlite:////tmp/x/probe.db", "/tmp/x/crawl.log")
    assert (changed["FARM_DB_URL"], changed["FARM_REDIS_URL"], changed["JOBDIR"]) == (
        "sqlite:////tmp/x/probe.db",
        "",
        "",
    )
    assert (changed["FARM_METRICS_PORT"], changed["FARM_QCWY_MAX_PAGES"], changed["FARM_MAX_BLOCKED_CLAIMS"]) == (
        0,
        1,
        1,
    )
    crawl = changed["CLOSESPIDER_TIMEOUT"]
    assert crawl < probe.timeout
    # every attempt's download, and the back-off between them, fit in the crawl's time
    assert (RETRIES + 1) * changed["DOWNLOAD_TIMEOUT"] + RETRIES * changed["FARM_BLOCK_MAX_DELAY"] <= crawl
    assert changed["FARM_BROWSER_TIMEOUT"] <= crawl / 3


def test_the_default_city_is_beijing_where_the_site_has_it():
    assert {default_city(site) for site in ("boss", "qcwy", "zhilian")} == {"北京"}


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["nosuch"], "unknown site 'nosuch' (expected one of: boss, qcwy, zhilian"),
        (["boss", "--city", "Atlantis"], "unknown city 'Atlantis' for boss"),
        (["--timeout", "1"], "'--timeout': 1.0 is not in the range 5<=x<=3600"),
    ],
)
def test_bad_arguments_are_one_line_before_anything_runs(args, message):
    result = CliRunner().invoke(farm, ["probe", *args])
    assert result.exit_code == 2
    assert message in result.output
