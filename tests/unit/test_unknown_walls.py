"""Walls no spider names: which answers farm tries in the browser, when the browser has passed one, and how the
session it earns is proven by its first answer."""

import json

import pytest
from aiohttp.test_utils import make_mocked_request

from farm.crawl.parts import CrawlParts
from farm.sandbox.strangewalls import FORMS, StrangeConfig, StrangeWalls
from farm.sessions.middleware import SessionMiddleware
from farm.sessions.pool import SessionPool
from farm.sessions.wall import CAPTCHA_MARKERS, Wall
from farm.sessions.watch import QUIET, STILL, WallWatch
from farm.sites.boss.spider import BossSpider
from farm.sites.qcwy.spider import QcwySpider
from farm.sites.zhilian.sandbox import SHELL
from farm.sites.zhilian.spider import ZhilianSpider
from tests.unit.components import make_crawler
from tests.unit.loop_helpers import run_loop
from tests.unit.spider_helpers import fixtures, make_lease, make_spider, response_for

SPIDERS = {"boss": BossSpider, "qcwy": QcwySpider, "zhilian": ZhilianSpider}

# What farm makes of the recorded wall pages (farm/sites/<site>/fixtures/blocks, and the public capture of 51job's
# slider): "known" (the spider's own wall), "unknown" (tried in the browser), None (a refusal: not tried).
RECORDED = [
    ("boss", "code37.json", {}, "known"),
    ("boss", "security_check.html", {}, "unknown"),  # the security page itself, served in place of the data
    ("boss", "security_check_js.html", {}, "unknown"),  # a script that sends the visitor to it
    ("boss", "verify_slider.html", {}, None),
    ("boss", "passport_verify.html", {}, None),
    ("boss", "page_403.html", {}, None),
    ("boss", "wall_frequent.html", {}, None),
    ("boss", "wall_abnormal.html", {}, None),
    ("qcwy", "waf_challenge.html", {}, "known"),
    ("qcwy", "waf_slider.html", {}, None),
    ("qcwy", "waf_slider_text_only.html", {}, None),
    ("qcwy", "aliyun_waf.html", {"status": 405}, None),
    ("qcwy", "non_json.html", {}, "unknown"),  # HTML with a script where JSON was due
    ("qcwy", "../captures/waf_slider_shanghai_p1.html", {}, None),  # a public capture of 51job's slider
    ("zhilian", "geetest.html", {}, None),
    ("zhilian", "nc_wrapper.html", {}, None),
    ("zhilian", "waf_slider.html", {}, None),
    ("zhilian", "login_wall.html", {}, None),
    ("zhilian", "login_more.html", {}, None),
    ("zhilian", "security_verification.html", {}, None),  # no script: nothing a browser would run
    ("zhilian", "blank.html", {}, "unknown"),  # a script and under 80 characters of text
]


def answer(site, path=None, body=b"", **kwargs):
    spider, _ = make_spider(SPIDERS[site], **{f"FARM_{site.upper()}_BASE_URL": "http://site.invalid"})
    request = spider.page_request(make_lease(site), 1)
    return spider, response_for(request, path, body=body, **kwargs)


@pytest.mark.parametrize(("site", "name", "extra", "kind"), RECORDED)
def test_recorded_walls_are_known_tried_or_refused(site, name, extra, kind):
    spider, response = answer(site, fixtures(site) / "blocks" / name, **extra)
    wall = spider.wall_of(response)
    assert (None if wall is None else "known" if wall.known else "unknown") == kind
    if kind == "unknown":
        assert wall.name == f"{site}_unknown_wall" and wall.url == response.request.url
        assert wall.asks_data(response.request.url) and not wall.asks_data("http://site.invalid/verify/x")


def test_a_redirect_away_from_the_data_is_a_wall_and_one_within_its_part_of_the_site_is_followed():
    spider, away = answer("zhilian", status=302, headers={"Location": "/_waf/hop?c=1"})
    assert spider.wall_of(away).url == away.request.url
    for location in ("/sou/jl530/kwpython", "https://www.zhaopin.com/sou/jl530?kw=python"):
        _, canonical = answer("zhilian", status=301, headers={"Location": location})
        assert spider.wall_of(canonical) is None
    _, login = answer("zhilian", status=302, headers={"Location": "https://passport.site.invalid/login?r=/sou"})
    assert spider.wall_of(login) is None


def test_a_captcha_of_a_kind_no_spider_names_is_not_tried_and_its_refusal_says_captcha():
    page = b"<html><script src='https://turing.captcha.qcloud.com/TCaptcha.js'></script><div id=t></div></html>"
    spider, response = answer("boss", body=page)
    assert spider.wall_of(response) is None
    assert spider.refusal(response).startswith("boss_captcha (TCaptcha) boss_unrecognised")
    # 智联 answering its search with a page that loads Tencent's captcha, as a public crawler's notes describe
    spider, response = answer("zhilian", body=page)
    assert spider.wall_of(response) is None and spider.refusal(response).startswith("zhilian_captcha (TCaptcha)")
    login = b"<html><form><input type='password' name=p></form><script>init()</script></html>"
    spider, response = answer("qcwy", body=login)
    assert spider.wall_of(response) is None


@pytest.mark.parametrize("form", FORMS)
@pytest.mark.parametrize("site", ["boss", "qcwy", "zhilian"])
def test_each_strange_wall_is_tried_and_its_puzzle_is_not(site, form):
    walls = StrangeWalls(StrangeConfig(forms=(form,), slider_keywords=("java",)))
    for keyword, tried in (("python", True), ("java", False)):
        served = walls.guard(site, make_mocked_request("GET", f"/data?kw={keyword}"), keyword)
        headers = dict(served.headers)
        spider, response = answer(site, body=served.body or b"", status=served.status, headers=headers)
        wall = spider.wall_of(response)
        if form == "chain":  # a redirect: its puzzle shows only in the browser, which names it
            assert wall is not None and wall.sliders == CAPTCHA_MARKERS
        else:
            assert (wall is not None) == tried, served.text


def clock():
    now = [0.0]
    return now, lambda: now[0]


UNKNOWN = Wall(
    "zhilian_unknown_wall",
    "http://site.invalid/sou/jl530?kw=x",
    (),
    data=("/sou/jl530",),
    markers=("<title>安全验证</title>",),
)


def test_an_unknown_wall_is_passed_when_its_page_asks_for_the_data_again():
    now, at = clock()
    watch = WallWatch(UNKNOWN, at)
    watch.request(UNKNOWN.url, navigation=True)  # the browser opens it
    assert not watch.passed({}, UNKNOWN.url, "")
    watch.request("http://site.invalid/_v/answer", navigation=True)
    assert not watch.passed({"a": "1"}, UNKNOWN.url, "<html><title>x</title></html>")
    watch.request(UNKNOWN.url, navigation=True)  # a reload, a redirect or a form's answer back to the data
    assert watch.passed({"a": "1"}, UNKNOWN.url, "")


def test_an_unknown_wall_is_passed_when_its_markers_go_and_not_before_they_show():
    now, at = clock()
    watch = WallWatch(UNKNOWN, at)
    assert not watch.passed({}, UNKNOWN.url, "<html><title>another page</title></html>")  # never the wall yet
    assert not watch.passed({}, UNKNOWN.url, "<html><title>安全验证</title><script>go()</script></html>")
    assert watch.passed({}, UNKNOWN.url, "<html><body>chrome error</body></html>")


def test_an_unknown_wall_is_passed_by_new_cookies_on_a_page_that_stopped_changing():
    now, at = clock()
    watch = WallWatch(UNKNOWN, at)
    watch.answered(["tracking=t; Path=/; HttpOnly\nlang=zh; Path=/"])  # the wall's answer's own cookies
    page = "<html><title>安全验证</title><script>set()</script></html>"
    assert not watch.passed({"tracking": "t", "lang": "zh"}, UNKNOWN.url, "")
    now[0] = 5.0
    assert not watch.passed({"tracking": "t", "lang": "zh"}, UNKNOWN.url, page)  # no new cookie: never passed
    now[0] = 5.2
    cookies = {"tracking": "t", "lang": "zh", "_sv_x": "v"}
    assert not watch.passed(cookies, UNKNOWN.url, page)  # a new cookie: wait for the page to settle
    now[0] = 5.2 + STILL
    assert watch.passed(cookies, UNKNOWN.url, page)
    # a cookie the page's script set before the browser's first look is new too: the answer did not set it
    quick = WallWatch(UNKNOWN, at)
    quick.answered([])
    assert not quick.passed({"_sv_y": "v"}, UNKNOWN.url, page)
    now[0] += STILL
    assert quick.passed({"_sv_y": "v"}, UNKNOWN.url, page)


def test_an_unknown_wall_whose_page_changes_nothing_is_given_up_and_a_known_one_waits_for_its_cookie():
    now, at = clock()
    watch = WallWatch(UNKNOWN, at)
    watch.passed({}, UNKNOWN.url, "<html><title>安全验证</title></html>")
    now[0] = QUIET - 0.1
    assert not watch.given_up()
    now[0] = QUIET
    assert watch.given_up()
    known = WallWatch(Wall("qcwy_acw_sc__v2", "http://site.invalid/pc/search", ("acw_sc__v2",)), at)
    assert not known.passed({"acw_tc": "1"}, "", "") and known.passed({"acw_sc__v2": "x"}, "", "")
    assert not known.given_up()


@pytest.fixture
def zhilian_crawler(sqlite_url):
    crawler = make_crawler(
        sqlite_url,
        [("zhilian", "北京", "python")],
        spidercls=ZhilianSpider,
        FARM_ZHILIAN_BASE_URL="http://site.invalid",
        FARM_BROWSER_EXECUTABLE="no-such-chromium",  # the identity is the target's: no browser version read
    )
    yield crawler
    crawler.get_extension(CrawlParts).close()


def test_a_session_of_an_unknown_wall_is_proven_by_its_first_answer_or_retired_and_the_wall_not_passed(
    zhilian_crawler,
):
    earned = []

    async def earn(wall, identity, proxy):
        earned.append(wall)
        return {"_sv_1": "v"}

    middleware = SessionMiddleware.from_crawler(zhilian_crawler)
    middleware.pool = SessionPool(earn, max_age=600, max_uses=0, cooldown=60)
    middleware.pool.on_earned = lambda session, seconds: None
    [lease] = zhilian_crawler.get_extension(CrawlParts).store.claim("zhilian", "test", 1)
    request = zhilian_crawler.spider.crawl_paging.first_requests(lease)[0]
    wall_page = b"<html><head><title>verify</title></head><body><script>document.cookie='a=1';</script></body></html>"

    def met(req):
        run_loop(lambda: middleware.process_request(req))
        return response_for(req, body=wall_page)

    again = run_loop(lambda: middleware.process_response(request, met(request)))
    assert again.meta["farm_session_fresh"] and earned[0].name == "zhilian_unknown_wall" and not earned[0].known
    # the site answers the session's first request with the wall again: no pass
    refused = met(again)
    assert run_loop(lambda: middleware.process_response(again, refused)) is refused
    assert again.meta["farm_wall_refused"] == "zhilian_unknown_wall_unproven"
    assert zhilian_crawler.stats.get_value("farm/wall/not_passed/unproven") == 1
    assert middleware.pool.retired == {"unproven": 1}
    # the browser cools down for the site: the next wall met is a block at once, named as not passed
    later = request.replace(meta={**request.meta, "retry_times": 1})
    blocked = met(later)
    assert run_loop(lambda: middleware.process_response(later, blocked)) is blocked and len(earned) == 1
    assert later.meta["farm_wall_refused"] == "zhilian_unknown_wall_unproven"

    # a session whose first answer is data is proven, and kept
    middleware.pool = SessionPool(earn, max_age=600, max_uses=0, cooldown=60)
    middleware.pool.on_earned = lambda session, seconds: None
    retry = request.replace(meta={**request.meta, "retry_times": 2})
    fresh = run_loop(lambda: middleware.process_response(retry, met(retry)))
    run_loop(lambda: middleware.process_request(fresh))
    page = (fixtures("zhilian") / "page1.html").read_bytes()
    data = response_for(fresh, body=page)
    assert run_loop(lambda: middleware.process_response(fresh, data)) is data
    session = middleware.pool.current(("zhilian", ""))
    assert session is not None and session.proven and session.cookies == {"_sv_1": "v"}


def test_strange_walls_config_names_a_bad_field():
    with pytest.raises(ValueError, match="forms"):
        StrangeConfig.from_json({"forms": ["teleport"]})
    with pytest.raises(ValueError, match="unknown strange walls field 'colour'"):
        StrangeConfig.from_json({"colour": 1})
    assert StrangeConfig.from_json(json.loads(json.dumps(StrangeConfig().to_json()))) == StrangeConfig()


def test_the_sites_own_page_with_its_navigation_is_not_a_wall():
    spider, response = answer("zhilian", body=SHELL.format(tag="1a2b3c4d").encode())  # the client-rendered shell
    assert spider.refusal(response).split()[0] == "zhilian_shell" and spider.wall_of(response) is None


# Aliyun WAF's JS challenge as public write-ups of it describe it (TapTap, 雷速体育, 华能 and others behind the
# same WAF): a hidden renderData textarea, the aliyun_waf_aa meta and a script named aliyunwaf_…; this page is
# drawn after those descriptions, not copied from a capture.
ALIYUN_CHALLENGE = (
    '<!DOCTYPE html><html><head><meta name="aliyun_waf_aa" content="a1b2c3"></head><body>'
    '<textarea id="renderData" style="display:none">{"_waf_bd8ce2ce37":"U2ns52ozMjDjI9DQ"}</textarea>'
    '<script name="aliyunwaf_6a6f5ea8">var _0x4818=["\\x63\\x73"];(function(){})();</script></body></html>'
)


@pytest.mark.parametrize("site", ["qcwy", "zhilian"])
def test_aliyuns_js_challenge_without_var_arg1_is_tried_though_its_script_name_is_a_slider_marker(site):
    spider, response = answer(site, body=ALIYUN_CHALLENGE.encode())
    assert "waf_slider" in spider.block_reason(response)  # the spider's own marker names it a slider
    wall = spider.wall_of(response)
    assert wall is not None and wall.name == f"{site}_unknown_wall"
