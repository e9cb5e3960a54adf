"""One identity record: client hints derived as Chromium derives them, requests of their kind, and a plain
client that claims nothing; judged by the sandbox's own, separately drawn, reading of what Chrome sends."""

import pytest
from scrapy.downloadermiddlewares.useragent import UserAgentMiddleware

from farm.crawl.parts import CrawlParts
from farm.sandbox.coherence import chromium_brands, judge
from farm.sessions.identity import FETCH, NAVIGATE, ClientIdentity, brand_list, grease, in_order, sec_ch_ua
from farm.sessions.middleware import SessionMiddleware
from farm.sites.boss.spider import BossSpider
from farm.sites.zhilian.spider import ZhilianSpider
from tests.unit.components import make_crawler
from tests.unit.loop_helpers import run_loop

ENGINE = "156.0.8078.114"  # Debian's Chromium here
CASEY = {"sec-ch-ua", "sec-ch-ua-mobile", "sec-ch-ua-platform"}


def test_the_grease_brand_and_its_version_come_from_the_major_version_as_in_chromium():
    assert grease(152) == ("Not?A_Brand", "24")
    assert grease(156) == ("Not:A-Brand", "8")
    # what Debian's Chromium 156 itself reports (navigator.userAgentData, its sec-ch-ua)
    assert sec_ch_ua(brand_list(156, "156")) == '"Not:A-Brand";v="8", "Chromium";v="156"'
    assert brand_list(156, ENGINE) == [("Not:A-Brand", "8.0.0.0"), ("Chromium", ENGINE)]
    assert sec_ch_ua(brand_list(152, "152", "Google Chrome")).count('"Not?A_Brand";v="24"') == 1


@pytest.mark.parametrize("vendor", [None, "Google Chrome"])
def test_the_sandbox_s_separate_derivation_agrees_for_every_major(vendor):
    for major in range(90, 260):
        assert sec_ch_ua(brand_list(major, str(major), vendor)) == chromium_brands(major, vendor), major


def test_the_identity_is_the_engine_s_and_its_requests_are_coherent_of_their_kind():
    identity = ClientIdentity.of("chrome", ENGINE)
    assert "Chrome/156.0.0.0" in identity.user_agent and "Headless" not in identity.user_agent
    assert identity.accept_language == "zh-CN,zh;q=0.9"
    assert identity.ua_metadata()["fullVersion"] == ENGINE
    fetch = {**identity.headers(FETCH), "Accept": "application/json", "Referer": "https://www.zhipin.com/web/geek/jobs"}
    assert (fetch["Sec-Fetch-Mode"], fetch["Sec-Fetch-Dest"], fetch["Priority"]) == ("cors", "empty", "u=1, i")
    assert "Upgrade-Insecure-Requests" not in fetch and "Sec-Fetch-User" not in fetch
    assert judge("boss", fetch) == []
    page = identity.headers(NAVIGATE)
    assert (page["Sec-Fetch-Mode"], page["Sec-Fetch-Dest"], page["Priority"]) == ("navigate", "document", "u=0, i")
    assert judge("zhilian", page) == []
    ordered = [name for name, _ in in_order([*fetch.items(), ("X-Requested-With", "XMLHttpRequest")], FETCH)]
    assert ordered[:5] == ["sec-ch-ua-platform", "User-Agent", "Accept", "sec-ch-ua", "X-Requested-With"]


def test_the_headers_farm_sent_before_are_what_a_waf_flags():
    before = {
        "User-Agent": "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) "
        "Chrome/152.0.0.0 Safari/537.36",
        "sec-ch-ua": '"Chromium";v="152", "Google Chrome";v="152", "Not.A/Brand";v="99"',
        "sec-ch-ua-mobile": "?0",
        "sec-ch-ua-platform": '"Windows"',
        "Sec-Fetch-Site": "none",
        "Sec-Fetch-Mode": "navigate",
        "Sec-Fetch-User": "?1",
        "Sec-Fetch-Dest": "document",
        "Upgrade-Insecure-Requests": "1",
        "Priority": "u=0, i",
        "Accept": "application/json, text/plain, */*",
        "Referer": "https://www.zhipin.com/web/geek/jobs",
    }
    why = judge("boss", before)
    assert "brands_not_chrome_152" in why and "fetch_metadata_none_navigate_document_on_a_fetch" in why
    assert {"upgrade-insecure-requests_on_a_fetch", "sec-fetch-user_on_a_fetch", "priority_not_a_fetch_s"} <= set(why)
    linux = {**before, "sec-ch-ua-platform": '"Linux"'}
    assert "platform_not_the_user_agent_s" in judge("boss", linux)


@pytest.fixture
def crawler_of(sqlite_url):
    made = []

    def make(spidercls, **settings):
        crawler = make_crawler(
            sqlite_url,
            [(spidercls.name, "北京", "python")],
            spidercls=spidercls,
            FARM_BROWSER_EXECUTABLE="no-such-chromium",
            **{f"FARM_{spidercls.name.upper()}_BASE_URL": "http://site.invalid"},
            **settings,
        )
        made.append(crawler)
        return crawler

    yield make
    for crawler in made:
        crawler.get_extension(CrawlParts).close()


def page_request(crawler):
    [lease] = crawler.get_extension(CrawlParts).store.claim(crawler.spidercls.name, "test", 1)
    request = crawler.spider.crawl_paging.first_requests(lease)[0]
    UserAgentMiddleware.from_crawler(crawler).process_request(request)  # Scrapy's, before farm's
    run_loop(lambda: SessionMiddleware.from_crawler(crawler).process_request(request))
    return {name.decode(): value[-1].decode() for name, value in request.headers.items()}


def test_a_page_request_goes_out_as_a_request_of_its_kind(crawler_of):
    api = page_request(crawler_of(BossSpider))
    assert (api["Sec-Fetch-Mode"], api["Accept"], api["X-Requested-With"]) == (
        "cors",
        "application/json, text/plain, */*",
        "XMLHttpRequest",
    )
    assert judge("boss", {name.lower() if name.lower() in CASEY else name: v for name, v in api.items()}) == []
    page = page_request(crawler_of(ZhilianSpider))
    assert page["Sec-Fetch-Mode"] == "navigate" and page["Accept"].startswith("text/html")


def test_scrapy_s_own_client_claims_no_chrome(crawler_of):
    sent = page_request(crawler_of(BossSpider, FARM_IMPERSONATE=""))
    assert not [name for name in sent if name.lower().startswith(("sec-ch-", "sec-fetch-"))]
    assert "Chrome" not in sent.get("User-Agent", "")


def test_doctor_names_each_tell_a_page_sees():
    from farm.cli.botcheck import tells_of

    identity = ClientIdentity.of("chrome", ENGINE)
    person = {
        "agent": identity.user_agent,
        "webdriver": False,
        "platform": identity.navigator_platform,
        "hintsPlatform": "Linux",
        "brands": [list(b) for b in identity.brands],
        "languages": ["zh-CN", "zh"],
        "timezone": "Asia/Shanghai",
        "locale": "zh-CN",
    }
    assert tells_of(person, identity) == []
    bot = {**person, "agent": identity.user_agent.replace("Chrome/", "HeadlessChrome/"), "webdriver": True}
    bot.update(languages=["zh-CN"], brands=[["Chromium", "156"], ["Google Chrome", "156"], ["Not.A/Brand", "99"]])
    told = tells_of(bot, identity)
    assert "navigator.webdriver is true" in told and "HeadlessChrome in the User-Agent" in told
    assert any(t.startswith("brands ") for t in told) and any(t.startswith("languages ") for t in told)
