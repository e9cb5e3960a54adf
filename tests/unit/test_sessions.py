"""Sessions: earned once per wall however many requests meet it, carried on plain requests, renewed on refusal."""

import asyncio
import json

import orjson
import pytest
from scrapy import Request
from scrapy.http import TextResponse

from farm.crawl.backends.redis.codec import encode
from farm.crawl.parts import CrawlParts
from farm.crawl.proxies import Proxy
from farm.crawl.scheduler import FarmScheduler
from farm.errors import SettingError, WallNotPassed
from farm.sessions.browser import Browser
from farm.sessions.identity import ClientIdentity, check_target, chrome_targets
from farm.sessions.memory import MEASURE_EVERY
from farm.sessions.middleware import SessionMiddleware
from farm.sessions.pool import SessionPool
from farm.sessions.wall import Wall
from farm.sites.boss.spider import BossSpider
from farm.sites.qcwy.spider import QcwySpider
from farm.sites.zhilian.spider import ZhilianSpider
from tests.unit.components import make_crawler
from tests.unit.loop_helpers import run_loop
from tests.unit.spider_helpers import make_lease, make_spider, request_for, response_for

WALL = Wall("boss_security_check", "http://site.invalid/check", ("__zp_stoken__",))
IDENTITY = ClientIdentity.of("chrome")
CODE_37 = json.dumps(
    {"code": 37, "message": "您的访问行为异常.", "zpData": {"seed": "s+/=", "ts": 1, "name": "ab12cd34"}}
)


class Earner:
    """Earns sessions as a browser would, counting the pages it opens; ``fail`` makes it refuse."""

    def __init__(self, fail=None):
        self.calls = []
        self.fail = fail

    async def __call__(self, wall, identity, proxy):
        self.calls.append((wall.name, proxy))
        await asyncio.sleep(0)  # others arrive while it earns
        if self.fail:
            raise WallNotPassed(wall.name, self.fail, "a slider")
        return {"__zp_stoken__": f"token{len(self.calls)}"}


def pool_with(earner, clock=lambda: 0.0, max_age=600, max_uses=0, cooldown=60):
    return SessionPool(earner, max_age=max_age, max_uses=max_uses, cooldown=cooldown, clock=clock)


def test_requests_meeting_one_wall_at_once_earn_one_session():
    earner = Earner()
    pool = pool_with(earner)

    async def many():
        return await asyncio.gather(*(pool.renew(("boss", ""), WALL, IDENTITY, None) for _ in range(5)))

    sessions = run_loop(many)
    assert len(earner.calls) == 1 and len({id(s) for s in sessions}) == 1
    assert sessions[0].cookies == {"__zp_stoken__": "token1"}
    assert pool.current(("boss", "")) is sessions[0] and sessions[0].uses == 1


def test_a_refused_session_is_replaced_but_a_newer_one_is_kept():
    earner = Earner()
    pool = pool_with(earner)

    async def refusals():
        first = await pool.renew(("boss", ""), WALL, IDENTITY, None)
        second = await pool.renew(("boss", ""), WALL, IDENTITY, first)  # the site refused the first
        third = await pool.renew(("boss", ""), WALL, IDENTITY, first)  # a late answer to the first: keep the second
        return first, second, third

    first, second, third = run_loop(refusals)
    assert second is third and second is not first and first.retired == "refused"
    assert len(earner.calls) == 2 and pool.retired == {"refused": 1}


def test_sessions_are_per_proxy():
    earner = Earner()
    pool = pool_with(earner)

    async def two():
        await pool.renew(("boss", "http://p1:8080"), WALL, IDENTITY, None)
        await pool.renew(("boss", "http://p2:8080"), WALL, IDENTITY, None)

    run_loop(two)
    assert earner.calls == [(WALL.name, "http://p1:8080"), (WALL.name, "http://p2:8080")]
    assert pool.current(("boss", "")) is None


def test_a_session_is_retired_by_age_and_by_uses():
    now = [0.0]
    pool = pool_with(Earner(), clock=lambda: now[0], max_age=100, max_uses=2)
    run_loop(lambda: pool.renew(("boss", ""), WALL, IDENTITY, None))
    assert pool.current(("boss", "")) and pool.current(("boss", ""))
    assert pool.current(("boss", "")) is None and pool.retired == {"uses": 1}
    run_loop(lambda: pool.renew(("boss", ""), WALL, IDENTITY, None))
    now[0] = 100.0
    assert pool.current(("boss", "")) is None and pool.retired == {"uses": 1, "age": 1}


def test_a_wall_the_browser_cannot_pass_is_not_tried_again_until_the_cooldown_ends():
    now = [0.0]
    earner = Earner(fail="slider")
    pool = pool_with(earner, clock=lambda: now[0], cooldown=60)

    async def attempt():
        try:
            await pool.renew(("boss", ""), WALL, IDENTITY, None)
        except WallNotPassed as exc:
            return exc

    for at in (0.0, 30.0, 61.0):
        now[0] = at
        assert run_loop(attempt).kind == "slider"
    assert len(earner.calls) == 2  # at 0 and after the cooldown, at 61


class SlowEarner:
    """Earns a session per call once released, counting the passes under way at once, by proxy."""

    def __init__(self):
        self.calls = []
        self.under_way = 0
        self.most_at_once = 0
        self.release = asyncio.Event()

    async def __call__(self, wall, identity, proxy):
        self.calls.append(proxy)
        self.under_way += 1
        self.most_at_once = max(self.most_at_once, self.under_way)
        await self.release.wait()
        self.under_way -= 1
        return {"__zp_stoken__": f"{proxy or 'direct'}-{len(self.calls)}"}


def test_sessions_used_up_faster_than_a_pass_are_earned_several_at_once_bounded_and_each_for_its_proxy():
    now = [0.0]
    earner = SlowEarner()
    pool = SessionPool(earner, max_age=600, max_uses=0, cooldown=60, clock=lambda: now[0], most_ahead=3)
    key, other = ("boss", "http://p1:8080"), ("boss", "http://p2:8080")

    async def crawl():
        first = asyncio.ensure_future(pool.renew(key, WALL, IDENTITY, None))
        await asyncio.sleep(0.01)
        now[0] = 2.0  # a pass takes two seconds
        earner.release.set()
        session = await first
        earner.release.clear()
        for _ in range(10):  # it serves ten pages in half a second, then the site's count runs out
            assert pool.current(key) is session
            pool.answered(session)
        now[0] = 2.5
        assert pool.ran_out(session)
        # four sessions are used up in the time of a pass: as many as FARM_SESSIONS_AHEAD allows are earned at once
        assert pool.wanted() == 3
        waiting = asyncio.ensure_future(pool.renew(key, WALL, IDENTITY, session))
        await asyncio.sleep(0.01)
        for _ in range(5):
            pool.current(key)  # nothing current yet: none earned ahead from here
        assert earner.under_way == 1
        now[0] = 4.5
        earner.release.set()
        renewed = await waiting
        earner.release.clear()
        for _ in range(5):
            assert pool.current(key) is renewed
            await asyncio.sleep(0)
        at_once = earner.under_way
        # another proxy's sessions are its own: earned through it, never served for the first
        other_session = asyncio.ensure_future(pool.renew(other, WALL, IDENTITY, None))
        await asyncio.sleep(0.01)
        earner.release.set()
        await other_session
        await asyncio.sleep(0.01)
        return renewed, at_once, other_session.result()

    renewed, at_once, other_session = run_loop(crawl)
    assert at_once == 3 and earner.most_at_once == 3 + 1  # three ahead of the first proxy, one of the other
    assert earner.calls.count("http://p1:8080") == 5 and earner.calls.count("http://p2:8080") == 1
    assert other_session.key == other and other_session.cookies["__zp_stoken__"].startswith("http://p2:8080-")
    assert all(s.key == key for s in [renewed, *pool._ready[key]]) and len(pool._ready[key]) == 3
    assert pool.current(other) is other_session and pool.ahead == 3


def test_a_session_earned_ahead_waits_ready_and_takes_over_at_the_shortest_learned_life():
    now = [0.0]
    earner = Earner()
    pool = SessionPool(earner, max_age=600, max_uses=0, cooldown=60, clock=lambda: now[0], most_ahead=1)
    key = ("boss", "")

    async def crawl():
        first = await pool.renew(key, WALL, IDENTITY, None)
        for _ in range(4):
            pool.current(key)
            pool.answered(first)
        now[0] = 100.0
        assert pool.ran_out(first)  # four pages in a hundred seconds: a session of four uses
        second = await pool.renew(key, WALL, IDENTITY, first)
        for _ in range(3):  # at 0.6 of its learned uses the next is earned in the background, and waits
            assert pool.current(key) is second
        await asyncio.sleep(0.01)
        third = pool._ready[key][0]
        assert pool.current(key) is second  # its fourth use: as many as the learned life
        return second, third, pool.current(key)

    second, third, taking_over = run_loop(crawl)
    assert taking_over is third and second.retired == "renewed" and len(earner.calls) == 3


class HeldEarner(Earner):
    """Earns as Earner does once ``hold`` is set: a pass under way for as long as the test says."""

    def __init__(self):
        super().__init__()
        self.hold = None

    async def __call__(self, wall, identity, proxy):
        if self.hold is not None:
            await self.hold.wait()
        return await super().__call__(wall, identity, proxy)


def test_a_request_due_after_the_learned_end_waits_for_the_session_under_way_rather_than_meet_the_wall():
    now = [0.0]
    earner = HeldEarner()
    pool = SessionPool(earner, max_age=600, max_uses=0, cooldown=60, clock=lambda: now[0], most_ahead=1)
    key = ("boss", "")

    async def crawl():
        first = await pool.renew(key, WALL, IDENTITY, None)
        for _ in range(4):
            pool.current(key)
            pool.answered(first)
        now[0] = 100.0
        assert pool.ran_out(first)  # a session of four uses
        second = await pool.renew(key, WALL, IDENTITY, first)
        earner.hold = asyncio.Event()  # the next pass takes its time
        seen = []
        for _ in range(4):
            seen.append((pool.current(key), pool.due(key)))
        await asyncio.sleep(0.01)
        under_way = pool.due(key)  # four uses sent, none ready: the fifth would meet the wall
        assert under_way is not None and not under_way.done()
        earner.hold.set()
        third = await under_way
        return second, third, seen, pool.due(key), pool.current(key)

    second, third, seen, due_after, taking_over = run_loop(crawl)
    # within its learned life a session is sent at once; past it, the request waits for the next one
    assert [session for session, _ in seen] == [second] * 4 and all(due is None for _, due in seen[:3])
    assert due_after is None and taking_over is third and second.retired == "renewed"


def test_a_session_that_ran_out_within_seconds_ran_out_by_its_uses_so_one_that_waited_ready_serves_them_all():
    now = [0.0]
    earner = Earner()
    pool = SessionPool(earner, max_age=600, max_uses=0, cooldown=60, clock=lambda: now[0], most_ahead=2)
    key = ("boss", "")

    async def crawl():
        first = await pool.renew(key, WALL, IDENTITY, None)
        for _ in range(60):  # sixty pages in half a second, then the site's wall
            pool.current(key)
            pool.answered(first)
        now[0] = 0.5
        assert pool.ran_out(first)
        second = await pool.renew(key, WALL, IDENTITY, first)
        sent = [pool.current(key) for _ in range(40)]  # past 0.6 of its learned uses the next is earned ahead ...
        await asyncio.sleep(0.01)
        assert pool._ready[key]
        now[0] = 3.0  # ... and waits ready longer than the first session lived
        sent += [pool.current(key) for _ in range(20)]
        return second, sent, pool.current(key)

    second, sent, sixty_first = run_loop(crawl)
    # the second serves its sixty pages (as many as the first), though it is older than the first lived
    assert all(session is second for session in sent) and sixty_first is not second
    assert second.retired == "renewed"


def test_with_no_sessions_ahead_none_is_earned_before_the_wall_answers():
    now = [0.0]
    earner = Earner()
    pool = SessionPool(earner, max_age=600, max_uses=0, cooldown=60, clock=lambda: now[0], most_ahead=0)

    async def crawl():
        first = await pool.renew(("boss", ""), WALL, IDENTITY, None)
        pool.answered(first)
        now[0] = 10.0
        pool.ran_out(first)
        await pool.renew(("boss", ""), WALL, IDENTITY, first)
        for _ in range(20):
            pool.current(("boss", ""))
            await asyncio.sleep(0)

    run_loop(crawl)
    assert len(earner.calls) == 2 and pool.ahead == 0


def test_an_identity_is_one_chrome_its_user_agent_and_client_hints_agree():
    newest = chrome_targets()[-1]
    identity = ClientIdentity.of("chrome")
    major = newest.removeprefix("chrome")
    assert identity.impersonate == newest and f"Chrome/{major}.0.0.0" in identity.user_agent
    assert f'v="{major}"' in identity.headers("fetch")["sec-ch-ua"]
    assert ClientIdentity.of("").impersonate == ""
    assert check_target(" Chrome146 ") == "chrome146"
    with pytest.raises(ValueError):
        check_target("firefox135")


@pytest.fixture
def boss_crawler(sqlite_url):
    crawler = make_crawler(
        sqlite_url,
        [("boss", "北京", "python")],
        spidercls=BossSpider,
        FARM_BOSS_BASE_URL="http://site.invalid",
        FARM_BROWSER_EXECUTABLE="no-such-chromium",  # the identity is the target's: no browser version read
    )
    yield crawler
    crawler.get_extension(CrawlParts).close()


def middleware_of(crawler, earner):
    middleware = SessionMiddleware.from_crawler(crawler)
    middleware.pool = SessionPool(earner, max_age=600, max_uses=0, cooldown=60)
    middleware.pool.on_earned = lambda session, seconds: None
    return middleware


def boss_page(crawler):
    [lease] = crawler.get_extension(CrawlParts).store.claim("boss", "test", 1)
    return crawler.spider.crawl_paging.first_requests(lease)[0]


def test_a_page_request_goes_out_as_the_identity_and_a_passable_wall_earns_a_session_and_goes_again(boss_crawler):
    earner = Earner()
    middleware = middleware_of(boss_crawler, earner)
    request = boss_page(boss_crawler)
    run_loop(lambda: middleware.process_request(request))
    assert request.meta["impersonate"] == middleware.identity.impersonate
    assert request.headers[b"User-Agent"].decode() == middleware.identity.user_agent
    assert b"Cookie" not in request.headers and request.meta["farm_session"] is None

    wall = TextResponse(
        request.url, body=CODE_37.encode(), headers={"Content-Type": "application/json"}, request=request
    )
    again = run_loop(lambda: middleware.process_response(request, wall))
    assert (
        isinstance(again, Request) and again.meta["farm_session_fresh"] and again.meta["farm_session_sends"] == (0, 1)
    )
    assert earner.calls == [("boss_security_check", "")]
    run_loop(lambda: middleware.process_request(again))
    assert again.headers[b"Cookie"] == b"__zp_stoken__=token1" and again.meta["dont_merge_cookies"]
    # the meta names the session by its serial: a request written out (Redis, a checkpoint) holds no session
    assert again.meta["farm_session"] == 1
    meta = orjson.loads(encode(again, boss_crawler.spider))["meta"]
    assert meta["farm_session"] == 1 and "token1" not in orjson.dumps(meta).decode()
    assert boss_crawler.stats.get_value("farm/wall/met/boss_security_check") == 1

    # the site answers the new session with its wall on its first use: the browser is sent to this request's
    # own wall (it may be a wall shown to one page); the next session refused on its first use too is the
    # site refusing the client: the answer goes on as a block named so, and no browser page is spent meanwhile
    third = run_loop(lambda: middleware.process_response(again, wall.replace(request=again)))
    run_loop(lambda: middleware.process_request(third))
    assert third.headers[b"Cookie"] == b"__zp_stoken__=token2" and third.meta["farm_session_sends"] == (0, 2)
    assert run_loop(lambda: middleware.process_response(third, wall.replace(request=third))).status == 200
    assert third.meta["farm_wall_refused"] == "boss_security_check_refused"
    assert boss_crawler.stats.get_value("farm/session/refused_at_first_use") == 1
    retry = third.replace(meta={**third.meta, "retry_times": 1})
    run_loop(lambda: middleware.process_request(retry))
    assert b"Cookie" not in retry.headers
    assert run_loop(lambda: middleware.process_response(retry, wall.replace(request=retry))).status == 200
    assert retry.meta["farm_wall_refused"] == "boss_security_check_refused" and len(earner.calls) == 2


def test_a_session_that_ran_out_after_serving_pages_is_earned_again_and_the_next_one_ahead_of_its_end(boss_crawler):
    earner = Earner()
    middleware = middleware_of(boss_crawler, earner)
    ok = json.dumps({"code": 0, "zpData": {"hasMore": False, "jobList": []}}).encode()

    async def answer(request, body):
        await middleware.process_request(request)
        response = TextResponse(request.url, body=body, headers={"Content-Type": "application/json"}, request=request)
        return await middleware.process_response(request, response)

    async def crawl():
        first = await answer(boss_page(boss_crawler), CODE_37.encode())
        for _ in range(3):  # it serves three pages, then the site's count of its uses runs out
            assert (await answer(first.replace(), ok)).status == 200
        again = await answer(first.replace(), CODE_37.encode())
        assert isinstance(again, Request) and "farm_wall_refused" not in again.meta and len(earner.calls) == 2
        # its life is learned: the next session is earned in the background before the current one runs out
        for _ in range(2):
            await middleware.process_request(first.replace())
        await asyncio.sleep(0.01)

    run_loop(crawl)
    assert boss_crawler.stats.get_value("farm/session/refused_at_first_use") is None
    assert len(earner.calls) == 3 and middleware.pool.ahead == 1


def test_a_wall_the_browser_cannot_pass_goes_on_as_a_block_named_after_it(boss_crawler):
    middleware = middleware_of(boss_crawler, Earner(fail="slider"))
    request = boss_page(boss_crawler)
    run_loop(lambda: middleware.process_request(request))
    wall = TextResponse(
        request.url, body=CODE_37.encode(), headers={"Content-Type": "application/json"}, request=request
    )
    assert run_loop(lambda: middleware.process_response(request, wall)) is wall
    assert request.meta["farm_wall_refused"] == "boss_security_check_slider"
    assert boss_crawler.stats.get_value("farm/wall/not_passed/slider") == 1


def test_cookies_the_site_sets_on_a_plain_answer_stay_in_the_session(boss_crawler):
    middleware = middleware_of(boss_crawler, Earner())
    session = run_loop(lambda: middleware.pool.renew(("boss", ""), WALL, IDENTITY, None))
    request = boss_page(boss_crawler)
    run_loop(lambda: middleware.process_request(request))
    ok = json.dumps({"code": 0, "zpData": {"hasMore": False, "jobList": []}}).encode()
    headers = {"Content-Type": "application/json", "Set-Cookie": "acw_tc=abc; Path=/; HttpOnly"}
    response = TextResponse(request.url, body=ok, headers=headers, request=request)
    assert run_loop(lambda: middleware.process_response(request, response)) is response
    assert session.cookies == {"__zp_stoken__": "token1", "acw_tc": "abc"}


def test_a_request_with_a_fresh_session_leaves_ahead_of_the_pace(boss_crawler):
    scheduler = FarmScheduler.from_crawler(boss_crawler)
    parts = boss_crawler.get_extension(CrawlParts)
    request = boss_page(boss_crawler)
    parts.window.enter(request.meta["farm_lease"].key, request.meta["farm_page"])
    parts.pace.back_off(60)  # a minute's back-off: a session may not live that long
    again = request.replace(meta={**request.meta, "farm_session_fresh": True})
    assert scheduler.enqueue_request(again)
    assert scheduler.next_request() is again
    retry = request.replace(meta={**request.meta, "retry_times": 1})
    assert scheduler.enqueue_request(retry) and scheduler.next_request() is None  # a retry waits its turn


def test_a_bad_per_site_impersonation_is_one_line_naming_it(sqlite_url):
    with pytest.raises(SettingError, match="FARM_BOSS_IMPERSONATE='netscape4'"):
        crawler = make_crawler(
            sqlite_url,
            [],
            spidercls=BossSpider,
            FARM_BOSS_BASE_URL="http://site.invalid",
            FARM_BOSS_IMPERSONATE="netscape4",
        )
        try:
            SessionMiddleware.from_crawler(crawler)
        finally:
            crawler.get_extension(CrawlParts).close()


def test_each_spider_names_the_page_that_passes_its_wall():
    spider, _ = make_spider(BossSpider, FARM_BOSS_BASE_URL="http://site.invalid")
    request = request_for(spider, make_lease("boss", city="101010100", job="数据 分析"), 1)
    wall = spider.browser_wall(
        response_for(request, body=CODE_37.encode(), headers={"Content-Type": "application/json"})
    )
    assert wall.cookies == ("__zp_stoken__",)
    assert wall.url.startswith("http://site.invalid/web/common/security-check.html?seed=s%2B%2F%3D&name=ab12cd34&ts=1")
    assert "callbackUrl=%2Fweb%2Fgeek%2Fjob%3Fquery%3D%25E6%2595%25B0" in wall.url

    spider, _ = make_spider(QcwySpider, FARM_QCWY_BASE_URL="http://site.invalid")
    request = request_for(spider, make_lease("qcwy", city="020000", job="python"), 1)
    challenge = b"<html><script>var arg1='3A5F';</script></html>"
    wall = spider.browser_wall(response_for(request, body=challenge))
    assert wall.url == "http://site.invalid/pc/search?keyword=python&searchType=2&jobArea=020000"
    slider = b"<html><div id='nc_1_n1z'></div><script>var arg1='3A5F';</script></html>"
    assert spider.browser_wall(response_for(request, body=slider)) is None

    spider, _ = make_spider(ZhilianSpider, FARM_ZHILIAN_BASE_URL="http://site.invalid")
    request = request_for(spider, make_lease("zhilian", city="530", job="java"), 1)
    redirect = response_for(request, status=302, headers={"Location": "/verify/security?return=%2Fsou%2Fjl530"})
    wall = spider.browser_wall(redirect)
    assert wall.url == request.url and "zp_verify" in wall.cookies
    assert spider.refusal(redirect).startswith("zhilian_verification")


def test_sessions_and_the_pages_they_serve_are_counted_per_identity_under_its_masked_label(sqlite_url):
    from scrapy.downloadermiddlewares.httpproxy import HttpProxyMiddleware

    proxies = ["http://alice:s3cret@127.0.0.1:9", "http://127.0.0.1:10"]
    crawler = make_crawler(
        sqlite_url,
        [("boss", "北京", "python"), ("boss", "上海", "java")],
        spidercls=BossSpider,
        FARM_BOSS_BASE_URL="http://site.invalid",
        FARM_BROWSER_EXECUTABLE="no-such-chromium",
        FARM_PROXIES=",".join(proxies),
    )
    try:
        earner = Earner()
        middleware = middleware_of(crawler, earner)
        middleware.pool.on_earned = middleware.session_earned
        parts = crawler.get_extension(CrawlParts)
        ok = json.dumps({"code": 0, "zpData": {"hasMore": False, "jobList": []}}).encode()

        async def answer(request, body):
            await middleware.process_request(request)
            HttpProxyMiddleware().process_request(request)  # the proxy's credentials become a header
            response = TextResponse(request.url, body=body, headers={"Content-Type": "application/json"})
            return await middleware.process_response(request, response.replace(request=request))

        async def crawl(through, pages):
            request = boss_page(crawler)
            parts.identities.by_id[through.id].pace.interval = 0  # no wait for its turn
            parts.identities._next = parts.identities.identities.index(parts.identities.by_id[through.id])
            assert parts.identities.take(request) == 0 and request.meta["farm_proxy"] == through.id
            again = await answer(request, CODE_37.encode())
            assert isinstance(again, Request)
            for _ in range(pages):
                assert (await answer(again.replace(), ok)).status == 200

        secret, plain = (parts.identities.by_id[Proxy.of(url).id].proxy for url in proxies)
        run_loop(lambda: crawl(secret, 3))
        run_loop(lambda: crawl(plain, 1))
    finally:
        crawler.get_extension(CrawlParts).close()
    stats = crawler.stats.get_stats()
    # each session earned through its own proxy, the credentials given to the browser, not to the stats
    assert [proxy for _, proxy in earner.calls] == proxies
    assert {name: value for name, value in stats.items() if "/session" in name and "identity" in name} == {
        "farm/identity/http://alice:***@127.0.0.1:9/sessions": 1,
        "farm/identity/http://alice:***@127.0.0.1:9/session_pages": 3,
        "farm/identity/http://127.0.0.1:10/sessions": 1,
        "farm/identity/http://127.0.0.1:10/session_pages": 1,
    }
    assert "s3cret" not in json.dumps(stats, default=str)


def test_the_browsers_memory_is_read_every_few_seconds_of_passes_and_at_the_close():
    # a reading walks /proc and the page tables of every Chromium process, on the crawl's own thread
    browser = Browser("", 1, 5.0)
    readings = []
    browser.resident_bytes = lambda: readings.append(len(readings)) or 100 * len(readings)
    for _ in range(50):  # fifty passes within a few seconds
        browser.measure()
    assert readings == []
    browser._measured_at -= MEASURE_EVERY  # the next pass, seconds later
    for _ in range(50):
        browser.measure()
    assert readings == [0] and browser.rss_max == 100
    browser.measure(now=True)  # the crawl closes
    assert len(readings) == 2 and browser.rss_max == 200
