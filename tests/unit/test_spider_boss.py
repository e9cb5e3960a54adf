"""The boss spider against recorded Boss直聘 answers (docs/sites.md §1)."""

from urllib.parse import parse_qsl, urlsplit

import pytest

from farm.sites.boss.spider import BossSpider
from tests.unit.spider_helpers import (
    block_cases,
    check_block,
    check_malformed,
    check_recorded_page,
    check_unknown_city,
    check_unparsable,
    fixtures,
    make_lease,
    make_spider,
    malformed_cases,
    page_fixtures,
    request_for,
    response_for,
)

CLOCK = 1750000000
SEARCH = (
    "https://www.zhipin.com/wapi/zpgeek/search/joblist.json?page={}&pageSize=15&city=101010100&expectInfo="
    "&query=python&multiSubway=&multiBusinessDistrict=&position=&jobType=&salary=&experience=&degree=&industry="
    "&scale=&stage=&scene=1&_=1750000000000"
)


def test_search_request_is_the_contracts_xhr():
    spider, _ = make_spider(BossSpider, clock=CLOCK)
    request = spider.page_request(make_lease("boss"), 2)
    assert request.method == "GET"
    assert request.url == SEARCH.format(2)
    assert request.headers["Referer"] == b"https://www.zhipin.com/web/geek/jobs?query=python&city=101010100"
    assert request.headers["Accept"] == b"application/json, text/plain, */*"
    assert request.headers["X-Requested-With"] == b"XMLHttpRequest"
    assert request.meta["farm_page"] == 2 and request.dont_filter


def test_search_request_follows_base_url_and_encodes_the_keyword():
    spider, _ = make_spider(BossSpider, FARM_BOSS_BASE_URL="http://127.0.0.1:8911/")
    request = spider.page_request(make_lease("boss", city="深圳", job="C++ 前端/后端"), 1)
    parts = urlsplit(request.url)
    assert (parts.scheme, parts.netloc, parts.path) == ("http", "127.0.0.1:8911", "/wapi/zpgeek/search/joblist.json")
    assert "&city=101280600&expectInfo=&query=C%2B%2B%20%E5%89%8D%E7%AB%AF%2F%E5%90%8E%E7%AB%AF&" in request.url
    assert dict(parse_qsl(parts.query, keep_blank_values=True))["query"] == "C++ 前端/后端"
    assert request.headers["Referer"].decode().startswith("http://127.0.0.1:8911/web/geek/jobs?query=C%2B%2B")


@pytest.mark.parametrize(
    "city, code",
    [
        ("全国", "100010000"),
        ("北京", "101010100"),
        ("上海", "101020100"),
        ("广州", "101280100"),
        ("深圳", "101280600"),
        ("杭州", "101210100"),
        ("成都", "101270100"),
        ("武汉", "101200100"),
        ("南京", "101190100"),
        ("101230200", "101230200"),
    ],
)
def test_city_names_map_and_site_codes_pass_through(city, code):
    spider, _ = make_spider(BossSpider)
    [request] = spider.crawl_paging.first_requests(make_lease("boss", city=city))
    assert dict(parse_qsl(urlsplit(request.url).query, keep_blank_values=True))["city"] == code


def test_unknown_city_fails_the_keyword():
    check_unknown_city(BossSpider)


@pytest.mark.parametrize("name", page_fixtures("boss"))
def test_recorded_page(name):
    check_recorded_page(BossSpider, name)


def test_max_page_stops_even_with_has_more():
    spider, sent = make_spider(BossSpider, FARM_BOSS_MAX_PAGES=3)
    lease = make_lease("boss")
    request = request_for(spider, lease, 3, asked=(1, 2))
    results = list(spider.parse_search(response_for(request, fixtures("boss") / "page2.json")))
    assert [r["job_id"] for r in results] == ["0c1d2e3f4a5b6c7d1Hd_0tu9FVY~"]  # items, no request for page 4
    assert spider.crawl_paging.registry.runs[lease.key].last == 3


def test_resumed_lease_asks_one_page_at_a_time():
    spider, _ = make_spider(BossSpider, clock=CLOCK)
    lease = make_lease("boss", start_page=2, total_pages=3)
    assert [r.url for r in spider.crawl_paging.first_requests(lease)] == [SEARCH.format(2)]


@pytest.mark.parametrize("case", block_cases("boss"), ids=lambda c: c["file"] or f"http_{c['status']}")
def test_block(case):
    check_block(BossSpider, case)


@pytest.mark.parametrize(
    "body, content_type, reason",
    [
        (b"<html><body>Bad gateway of some proxy</body></html>", "text/html", "boss: response is not JSON"),
        (b'{"code": 0, "message": "Success"}', "application/json", "boss: code 0 without zpData, not a page"),
        (
            b'{"message": "Success", "zpData": {"jobList": []}}',
            "application/json",
            "boss: no code in the answer, not a page",
        ),
        (
            b'{"code": 0, "zpData": {"jobList": {}}}',
            "application/json",
            "boss: zpData.jobList is an object, not a list",
        ),
    ],
)
def test_unparsable_body_fails_the_keyword(body, content_type, reason):
    check_unparsable(BossSpider, body, content_type, reason)


@pytest.mark.parametrize("case", malformed_cases("boss"), ids=lambda c: c["file"])
def test_malformed_page_fails_the_keyword_naming_the_field(case):
    check_malformed(BossSpider, case)
