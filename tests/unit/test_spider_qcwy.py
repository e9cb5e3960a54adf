"""The qcwy spider against recorded 51job answers (docs/sites.md §2)."""

import hashlib
import hmac
import json
import re
from urllib.parse import parse_qsl, urlsplit

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from farm.crawl.keywordrun import Outcome
from farm.sites.qcwy.spider import QcwySpider, _strip_req, _strip_req_parsed
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

KEY = b"abfc8f9dcf8c3f3d8aa294ac5f2cf2cc7767e5592590f39c3f503271dd68562b"
SEARCH_QUERY = (
    "api_key=51job&timestamp=1750000000&keyword=python&searchType=2&function=&industry=&jobArea=010000&jobArea2="
    "&landmark=&metro=&salary=&workYear=&degree=&companyType=&companySize=&jobType=&issueDate=&sortType=0"
    "&pageNum={}&requestId=&keywordType=&pageSize=20&source=1&accountId=&pageCode=sou%7Csou%7Csoulb&scene=7"
)


def sign_of(query):
    return hmac.new(KEY, f"/api/job/search-pc?{query}".encode(), hashlib.sha256).hexdigest()


def test_search_request_is_the_contracts_signed_get():
    spider, _ = make_spider(QcwySpider, clock=1750000000.7)
    request = spider.page_request(make_lease("qcwy"), 3)
    assert request.method == "GET"
    assert request.url == "https://we.51job.com/api/job/search-pc?" + SEARCH_QUERY.format(3)
    assert request.headers["From-Domain"] == b"51job_web"
    assert b"Origin" not in request.headers  # a same-origin GET's fetch sends none
    assert request.headers["Referer"].decode().startswith("https://we.51job.com/pc/search?keyword=")
    assert request.headers["Accept"] == b"application/json, text/plain, */*"
    assert request.headers["sign"].decode() == sign_of(SEARCH_QUERY.format(3))


@pytest.mark.parametrize("job", ["C++ 开发/测试", "前端（Vue|React）", "a+b&c=d%20e", "产品经理 ~*'()!"])
def test_sign_covers_exactly_the_query_scrapy_sends(job):
    spider, _ = make_spider(QcwySpider, clock=1750000000, FARM_QCWY_BASE_URL="http://127.0.0.1:8912")
    request = spider.page_request(make_lease("qcwy", city="上海", job=job), 1)
    parts = urlsplit(request.url)
    assert (parts.netloc, parts.path) == ("127.0.0.1:8912", "/api/job/search-pc")
    params = dict(parse_qsl(parts.query, keep_blank_values=True))
    assert (params["keyword"], params["jobArea"], params["timestamp"]) == (job, "020000", "1750000000")
    assert request.headers["sign"].decode() == sign_of(parts.query)


def test_timestamp_comes_from_the_clock():
    spider, _ = make_spider(QcwySpider, clock=1760000123)
    request = spider.page_request(make_lease("qcwy"), 1)
    assert dict(parse_qsl(urlsplit(request.url).query))["timestamp"] == "1760000123"


@pytest.mark.parametrize(
    "city, code",
    [
        ("全国", "000000"),
        ("北京", "010000"),
        ("上海", "020000"),
        ("广州", "030200"),
        ("深圳", "040000"),
        ("杭州", "080200"),
        ("广东省", "030000"),
        ("江苏", "070000"),
        ("浙江", "080000"),
        ("天津", "050000"),
        ("重庆", "060000"),
        ("成都", "090200"),
        ("070300", "070300"),
    ],
)
def test_city_names_map_and_site_codes_pass_through(city, code):
    spider, _ = make_spider(QcwySpider)
    [request] = spider.crawl_paging.first_requests(make_lease("qcwy", city=city))
    assert dict(parse_qsl(urlsplit(request.url).query, keep_blank_values=True))["jobArea"] == code


def test_unknown_city_fails_the_keyword():
    check_unknown_city(QcwySpider)


@pytest.mark.parametrize("name", page_fixtures("qcwy"))
def test_recorded_page(name):
    check_recorded_page(QcwySpider, name)


def test_max_pages_caps_the_follow_up_requests():
    spider, sent = make_spider(QcwySpider, clock=1750000000, FARM_QCWY_MAX_PAGES=3)
    lease = make_lease("qcwy", city="南京", job="电工")
    request = request_for(spider, lease, 1)
    results = list(spider.parse_search(response_for(request, fixtures("qcwy") / "page1.json")))
    pages = [r.meta["farm_page"] for r in results if not hasattr(r, "fields")]
    assert pages == [2, 3]
    assert spider.crawl_paging.registry.runs[lease.key].last == 3


def _page1_saying(total_count, items=True):
    body = json.loads((fixtures("qcwy") / "page1.json").read_bytes())
    body["resultbody"]["job"]["totalCount"] = total_count
    if not items:
        body["resultbody"]["job"]["items"] = []
    return json.dumps(body, ensure_ascii=False).encode()


def test_a_larger_total_on_a_later_page_requests_the_pages_it_reveals():
    spider, _ = make_spider(QcwySpider, clock=1750000000)
    lease = make_lease("qcwy", city="南京", job="电工")
    first = request_for(spider, lease, 1)
    later = [
        r.meta["farm_page"]
        for r in spider.parse_search(response_for(first, body=_page1_saying(50)))
        if not hasattr(r, "fields")
    ]
    assert later == [2, 3]  # page 1 (stale) said 50 postings: 3 pages
    second = request_for(spider, lease, 2)
    revealed = [
        r.meta["farm_page"]
        for r in spider.parse_search(response_for(second, body=_page1_saying(130)))
        if not hasattr(r, "fields")
    ]
    assert revealed == [4, 5, 6, 7]  # page 2 says 130: 7 pages; 3 was asked for already
    assert spider.crawl_paging.registry.runs[lease.key].total_pages == 7


def test_a_smaller_total_on_a_later_page_keeps_the_pages_asked_for():
    spider, _ = make_spider(QcwySpider, clock=1750000000)
    lease = make_lease("qcwy", city="南京", job="电工")
    first = request_for(spider, lease, 1)
    list(spider.parse_search(response_for(first, body=_page1_saying(100))))  # 5 pages
    second = request_for(spider, lease, 2)
    assert [
        r for r in spider.parse_search(response_for(second, body=_page1_saying(30))) if not hasattr(r, "fields")
    ] == []
    run = spider.crawl_paging.registry.runs[lease.key]
    assert (run.last, run.total_pages) == (2, 5)  # completion still waits for pages 3..5


def test_an_empty_page_past_the_real_end_ends_the_keyword_before_it_whatever_its_total_says():
    spider, _ = make_spider(QcwySpider, clock=1750000000)
    lease = make_lease("qcwy", city="南京", job="电工")
    request_for(spider, lease, 1, asked=range(1, 6))
    fourth = request_for(spider, lease, 4)
    assert [r for r in spider.parse_search(response_for(fourth, body=_page1_saying(100, items=False)))] == []
    assert spider.crawl_paging.registry.runs[lease.key].last == 3


def test_resumed_lease_requests_every_unfinished_page():
    spider, sent = make_spider(QcwySpider, clock=1750000000)
    lease = make_lease("qcwy", start_page=4, total_pages=10, pages_ahead={6})
    requests = spider.crawl_paging.first_requests(lease)
    assert [r.url for r in requests] == [
        "https://we.51job.com/api/job/search-pc?" + SEARCH_QUERY.format(p) for p in (4, 5, 7, 8, 9, 10)
    ]
    assert sent == []


def test_resumed_lease_with_nothing_left_is_exhausted():
    spider, sent = make_spider(QcwySpider)
    lease = make_lease("qcwy", start_page=4, total_pages=5, pages_ahead={4, 5})
    assert spider.crawl_paging.first_requests(lease) == []
    assert sent == [
        (
            "end",
            {"lease": lease, "outcome": Outcome("completed", "no page left to fetch")},
        )
    ]


@pytest.mark.parametrize("case", block_cases("qcwy"), ids=lambda c: c["file"] or f"http_{c['status']}")
def test_block(case):
    check_block(QcwySpider, case)


@pytest.mark.parametrize(
    "body, content_type, reason",
    [
        (b"{not json", "application/json", "qcwy: response is not JSON"),
        (b'{"status": "1", "resultbody": {}}', "application/json", "qcwy: no resultbody.job"),
        (
            b'{"status": "1", "resultbody": {"job": {"items": []}}}',
            "application/json",
            "qcwy: resultbody.job.totalCount is None",
        ),
    ],
)
def test_unparsable_body_fails_the_keyword(body, content_type, reason):
    check_unparsable(QcwySpider, body, content_type, reason)


@pytest.mark.parametrize("case", malformed_cases("qcwy"), ids=lambda c: c["file"])
def test_malformed_page_fails_the_keyword_naming_the_field(case):
    check_malformed(QcwySpider, case)


# hrefs from pieces a real jobHref has and pieces a hostile one may have
_HREF_PIECES = st.sampled_from(
    [
        "a",
        "Z",
        "9",
        "_",
        ".",
        "~",
        "-",
        "=",
        "&",
        "req",
        "req=",
        "?",
        "#",
        "%",
        "%20",
        "%7E",
        "+",
        " ",
        "/",
        ":",
        ";",
        "[",
        "]",
        "@",
        "\t",
        "\n",
        "\x00",
        "\u202e",
        "é",
        "北京",
    ]
)


@given(
    st.sampled_from(["https://jobs.51job.com", "http://jobs.51job.com:8080", "HTTPS://x.y", "https://", "//h", ""]),
    st.lists(_HREF_PIECES, max_size=24).map("".join),
    st.lists(_HREF_PIECES, max_size=24).map("".join),
)
@settings(max_examples=1500, deadline=None)
def test_a_jobhref_loses_its_req_pair_exactly_as_a_full_parse_would_drop_it(start, path, query):
    href = f"{start}/{path}?{query}" if query else f"{start}/{path}"
    try:
        expected = _strip_req_parsed(href)
    except ValueError as exc:
        with pytest.raises(ValueError, match=re.escape(str(exc))):
            _strip_req(href)
    else:
        assert _strip_req(href) == expected


@pytest.mark.parametrize(
    "href, stripped",
    [
        (
            "https://jobs.51job.com/bj/1.html?s=sou_sou_soulb&t=0_0&req=1a2b",
            "https://jobs.51job.com/bj/1.html?s=sou_sou_soulb&t=0_0",
        ),
        ("https://jobs.51job.com/bj/1.html?req=1a2b", "https://jobs.51job.com/bj/1.html"),
        ("https://jobs.51job.com/bj/1.html?s=1&req=1a2b&t=0", "https://jobs.51job.com/bj/1.html?s=1&t=0"),
        ("https://jobs.51job.com/bj/1.html?s=a%20b&req=1", "https://jobs.51job.com/bj/1.html?s=a+b"),
        ("https://jobs.51job.com/bj/1.html?prereq=1&req=2", "https://jobs.51job.com/bj/1.html?prereq=1"),
        ("https://jobs.51job.com/bj/1.html", "https://jobs.51job.com/bj/1.html"),
        ("", None),
    ],
)
def test_a_jobhref_loses_its_req_pair_and_only_that(href, stripped):
    assert _strip_req(href) == stripped
