"""The zhilian spider against recorded 智联招聘 search pages (docs/sites.md §3.1)."""

import json
from urllib.parse import parse_qsl, urlsplit

import pytest

from farm.sites.zhilian.spider import ZhilianSpider, initial_state
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


def test_search_request_is_the_contracts_search_page():
    spider, _ = make_spider(ZhilianSpider)
    request = spider.page_request(make_lease("zhilian", city="深圳", job="Java"), 2)
    assert request.method == "GET"
    assert request.url == "https://www.zhaopin.com/sou/jl765?kw=Java&p=2"


def test_search_request_follows_base_url_and_encodes_the_keyword():
    spider, _ = make_spider(ZhilianSpider, FARM_ZHILIAN_BASE_URL="http://127.0.0.1:8913")
    request = spider.page_request(make_lease("zhilian", city="北京", job="C++ 前端/后端&测试"), 1)
    assert request.url == (
        "http://127.0.0.1:8913/sou/jl530?kw=C%2B%2B%20%E5%89%8D%E7%AB%AF%2F%E5%90%8E%E7%AB%AF%26%E6%B5%8B%E8%AF%95&p=1"
    )
    assert dict(parse_qsl(urlsplit(request.url).query))["kw"] == "C++ 前端/后端&测试"


@pytest.mark.parametrize(
    "city, code",
    [
        ("全国", "489"),
        ("北京", "530"),
        ("上海", "538"),
        ("广州", "763"),
        ("深圳", "765"),
        ("杭州", "653"),
        ("成都", "801"),
        ("武汉", "736"),
        ("南京", "635"),
        ("苏州", "639"),
        ("天津", "531"),
        ("重庆", "551"),
        ("西安", "854"),
        ("佛山", "768"),
        ("2013", "2013"),
    ],
)
def test_city_names_map_and_site_codes_pass_through(city, code):
    spider, _ = make_spider(ZhilianSpider)
    [request] = spider.crawl_paging.first_requests(make_lease("zhilian", city=city))
    assert urlsplit(request.url).path == f"/sou/jl{code}"


def test_unknown_city_fails_the_keyword():
    check_unknown_city(ZhilianSpider)


@pytest.mark.parametrize("name", page_fixtures("zhilian"))
def test_recorded_page(name):
    check_recorded_page(ZhilianSpider, name)


def test_max_pages_caps_the_follow_up_requests():
    spider, sent = make_spider(ZhilianSpider, FARM_ZHILIAN_MAX_PAGES=3)
    lease = make_lease("zhilian", city="深圳", job="Java")
    request = request_for(spider, lease, 1)
    results = list(spider.parse_search(response_for(request, fixtures("zhilian") / "page1.html")))
    assert [r.url for r in results if not hasattr(r, "fields")] == [
        "https://www.zhaopin.com/sou/jl765?kw=Java&p=2",
        "https://www.zhaopin.com/sou/jl765?kw=Java&p=3",
    ]
    assert spider.crawl_paging.registry.runs[lease.key].last == 3


def test_resumed_lease_requests_every_unfinished_page():
    spider, _ = make_spider(ZhilianSpider)
    lease = make_lease("zhilian", city="深圳", job="Java", start_page=4, total_pages=10, pages_ahead={6})
    assert [r.url for r in spider.crawl_paging.first_requests(lease)] == [
        f"https://www.zhaopin.com/sou/jl765?kw=Java&p={p}" for p in (4, 5, 7, 8, 9, 10)
    ]


@pytest.mark.parametrize(
    "html, state",
    [
        (
            '<script>__INITIAL_STATE__={"a":{"b":"}</script>"},"pages":2}</script>',
            {"a": {"b": "}</script>"}, "pages": 2},
        ),
        ('<script>window.__INITIAL_STATE__ = {"x": [1, {"y": 2}]};var z = {};</script>', {"x": [1, {"y": 2}]}),
        ('<script>if (window.__INITIAL_STATE__) {}</script><script>__INITIAL_STATE__={"k":1}</script>', {"k": 1}),
        ("<html><body>no state</body></html>", None),
        ('<script>__INITIAL_STATE__={"broken": </script>', None),
    ],
)
def test_initial_state_is_decoded_from_the_assignment(html, state):
    assert initial_state(html) == state


@pytest.mark.parametrize("case", block_cases("zhilian"), ids=lambda c: c["file"] or f"http_{c['status']}")
def test_block(case):
    check_block(ZhilianSpider, case)


@pytest.mark.parametrize(
    "body, reason",
    [
        (
            "<html><body>" + "一个改版后的页面，没有任何职位数据。" * 10 + "</body></html>",
            "zhilian: no __INITIAL_STATE__ object",
        ),
        (
            "<html><body>" + "长文本" * 40 + '<script>__INITIAL_STATE__={"pages": 1}</script></body></html>',
            "zhilian: no __INITIAL_STATE__.positionList",
        ),
        (
            "<html><body>"
            + "长文本" * 40
            + '<script>__INITIAL_STATE__={"positionList": [{"number": "CC1J2"}]}</script>'
            "</body></html>",
            "zhilian: neither pages nor positionCount in __INITIAL_STATE__",
        ),
    ],
)
def test_unparsable_body_fails_the_keyword(body, reason):
    check_unparsable(ZhilianSpider, body.encode(), "text/html; charset=utf-8", reason)


def _page_with_zero_totals(positions):
    """page1.html with its totals reading 0 (docs/sites.md §3.1: positionCount "can read 0") and
    ``positions`` copies of its posting."""
    html = (fixtures("zhilian") / "page1.html").read_text(encoding="utf-8")
    state = initial_state(html)
    first = state["positionList"][0]
    state.update(pages=0, positionCount=0, positionList=[{**first, "number": f"CC0J{n}"} for n in range(positions)])
    return f"<html><body><script>__INITIAL_STATE__={json.dumps(state, ensure_ascii=False)}</script></body></html>"


@pytest.mark.parametrize(
    "positions, next_urls, last_page",
    [
        (20, ["https://www.zhaopin.com/sou/jl765?kw=Java&p=2"], None),  # a full page: there may be more
        (7, [], 1),  # a short page is the last
    ],
)
def test_totals_that_read_zero_beside_postings_page_on_while_pages_are_full(positions, next_urls, last_page):
    spider, sent = make_spider(ZhilianSpider)
    lease = make_lease("zhilian", city="深圳", job="Java")
    request = request_for(spider, lease, 1)
    body = _page_with_zero_totals(positions).encode()
    results = list(spider.parse_search(response_for(request, body=body)))
    assert len([r for r in results if hasattr(r, "fields")]) == positions
    assert [r.url for r in results if not hasattr(r, "fields")] == next_urls
    assert sent[-1] == ("page_parsed", {**sent[-1][1], "postings": positions})
    assert spider.crawl_paging.registry.runs[lease.key].last == last_page


def test_a_total_told_on_page_2_after_page_1_read_zero_requests_the_pages_it_reveals():
    # page 1 said pages=0 beside a full page of postings; page 2 tells the truth: 5 pages
    spider, _ = make_spider(ZhilianSpider)
    lease = make_lease("zhilian", city="深圳", job="Java")
    first = request_for(spider, lease, 1)
    [second] = [
        r
        for r in spider.parse_search(response_for(first, body=_page_with_zero_totals(20).encode()))
        if not hasattr(r, "fields")
    ]
    spider.crawl_paging.registry.runs[lease.key].taken(2)
    html = (fixtures("zhilian") / "page1.html").read_text(encoding="utf-8")  # pages: 5
    results = list(spider.parse_search(response_for(second, body=html.encode())))
    assert [r.meta["farm_page"] for r in results if not hasattr(r, "fields")] == [3, 4, 5]
    assert spider.crawl_paging.registry.runs[lease.key].total_pages == 5


def test_the_page_state_is_decoded_once_for_the_block_check_and_the_parser(monkeypatch):
    import farm.sites.zhilian.spider as zhilian

    decoded = []
    monkeypatch.setattr(zhilian, "initial_state", lambda html: decoded.append(html) or initial_state(html))
    spider, _ = make_spider(ZhilianSpider)
    request = spider.page_request(make_lease("zhilian"), 1)
    response = response_for(request, fixtures("zhilian") / "page1.html")
    assert spider.block_reason(response) is None
    assert spider.parse_page(response).postings
    assert len(decoded) == 1


@pytest.mark.parametrize("case", malformed_cases("zhilian"), ids=lambda c: c["file"])
def test_malformed_page_fails_the_keyword_naming_the_field(case):
    check_malformed(ZhilianSpider, case)
