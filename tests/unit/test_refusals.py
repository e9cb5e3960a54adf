"""Fail closed: an answer farm does not understand is a refusal, retried with the back-off, never the end."""

import json
from datetime import UTC, datetime
from email.utils import format_datetime

import pytest
from scrapy.http import TextResponse

from farm.crawl.paging import KeywordBlocked
from farm.crawl.parts import CrawlParts
from farm.items import JobPosting
from farm.middlewares.blocks import SiteBlockMiddleware, retry_after
from farm.middlewares.refusals import RefusalWatch
from farm.sites.boss.spider import BossSpider
from farm.sites.qcwy.spider import QcwySpider
from farm.sites.zhilian.spider import ZhilianSpider
from tests.unit.components import make_crawler
from tests.unit.spider_helpers import make_lease, make_spider, request_for, response_for

ROWS = [("qcwy", "上海", "python")]


def qcwy_answer(total, items=0, status="1"):
    job = {"totalCount": total, "items": [{"jobId": f"j{i}", "jobName": "x"} for i in range(items)]}
    return json.dumps({"status": status, "resultbody": {"job": job}}).encode()


def answer_to(spidercls, page, body, content_type="application/json"):
    spider, _ = make_spider(spidercls)
    request = request_for(spider, make_lease(spidercls.name), page, asked=range(1, page))
    return spider, response_for(request, body=body, headers={"Content-Type": content_type})


@pytest.mark.parametrize(
    "page, total, expected",
    [
        (1, 100, "qcwy_empty_page"),  # the soft block: status 1, no items, the count says 100
        (3, 100, "qcwy_empty_page"),  # page 3 of 5
        (5, 100, "qcwy_empty_page"),
        (6, 100, None),  # past the count: the real end
        (1, 0, None),  # the count itself says none: the real end
        (7, 60, None),  # a stale count corrected on a later page: past it, the end
        (51, 5000, None),  # past the 50 pages 51job serves, whatever its count says: the end
    ],
)
def test_an_empty_51job_page_is_the_end_only_past_its_count(page, total, expected):
    spider, response = answer_to(QcwySpider, page, qcwy_answer(total))
    reason = spider.refusal(response)
    assert (reason.split()[0] if reason else None) == expected


@pytest.mark.parametrize("code", [9, 17, 121, 122, 200404, "121"])
def test_an_unknown_boss_code_is_a_refusal_named_by_its_code(code):
    spider, response = answer_to(BossSpider, 1, json.dumps({"code": code, "message": "非法请求"}).encode())
    assert spider.refusal(response).split()[0] == f"boss_code_{code}"


def test_an_empty_boss_list_that_says_more_follow_is_a_refusal_and_without_more_the_end():
    body = {"code": 0, "zpData": {"hasMore": True, "jobList": []}}
    spider, response = answer_to(BossSpider, 2, json.dumps(body).encode())
    assert spider.refusal(response).split()[0] == "boss_empty_page"
    body["zpData"]["hasMore"] = False
    spider, response = answer_to(BossSpider, 2, json.dumps(body).encode())
    assert spider.refusal(response) is None


def test_a_zhilian_shell_without_state_or_cards_is_a_refusal():
    nav = "".join(f"<a href='/c{i}'>智联招聘 职位搜索 第{i}个导航链接</a>" for i in range(10))
    shell = f"<html><body><div id='root'></div>{nav}<script src='/app.js'></script></body></html>"
    spider, response = answer_to(ZhilianSpider, 1, shell.encode(), "text/html; charset=utf-8")
    assert spider.refusal(response).split()[0] == "zhilian_shell"


def test_the_page_is_parsed_once_for_the_refusal_check_and_the_callback():
    spider, response = answer_to(QcwySpider, 1, qcwy_answer(2, items=2))
    calls = []
    parse = spider.parse_page
    spider.parse_page = lambda r: calls.append(r) or parse(r)
    assert spider.refusal(response) is None
    postings = [item for item in spider.parse_search(response) if isinstance(item, JobPosting)]
    assert len(postings) == 2 and len(calls) == 1


@pytest.fixture
def crawler(sqlite_url):
    crawler = make_crawler(sqlite_url, ROWS, FARM_BLOCK_RETRIES=2, FARM_BLOCK_BASE_DELAY=1, FARM_BLOCK_MAX_DELAY=8)
    yield crawler
    crawler.get_extension(CrawlParts).close()


def first_page(crawler):
    [lease] = crawler.get_extension(CrawlParts).store.claim("qcwy", "test", 1)
    return crawler.spider.crawl_paging.first_requests(lease)[0]


def test_a_soft_block_is_retried_with_the_back_off_and_leaves_the_keyword_blocked_not_completed(crawler):
    middleware = SiteBlockMiddleware.from_crawler(crawler)
    request = first_page(crawler)
    identities = crawler.get_extension(CrawlParts).identities
    assert identities.take(request) == 0  # through this machine's own address
    [identity] = identities
    pace = identity.pace
    for attempt in range(2):
        retry = middleware.process_response(request, TextResponse(request.url, body=qcwy_answer(100), request=request))
        assert retry.url == request.url and retry.meta["retry_times"] == attempt + 1
        request = retry
    assert pace.penalty > 0
    with pytest.raises(KeywordBlocked, match="qcwy_empty_page"):
        middleware.process_response(request, TextResponse(request.url, body=qcwy_answer(100), request=request))
    assert crawler.stats.get_value("farm/block/qcwy_empty_page") == 3


def test_a_wall_the_browser_could_not_pass_names_the_block(crawler):
    middleware = SiteBlockMiddleware.from_crawler(crawler)
    request = first_page(crawler)
    request.meta["farm_wall_refused"] = "qcwy_acw_sc__v2_slider"
    body = b"<html><script>var arg1='AB12';</script></html>"
    response = TextResponse(request.url, body=body, headers={"Content-Type": "text/html"}, request=request)
    middleware.process_response(request, response)
    assert crawler.stats.get_value("farm/block/qcwy_acw_sc__v2_slider") == 1


def test_a_site_that_refuses_every_answer_for_long_enough_closes_the_crawl(crawler, monkeypatch):
    middleware = SiteBlockMiddleware.from_crawler(crawler)
    middleware.watch = RefusalWatch(after=100, least=3)
    closed = []
    monkeypatch.setattr(middleware, "close_crawl", closed.append)
    now = [1000.0]
    monkeypatch.setattr("farm.middlewares.blocks.time.monotonic", lambda: now[0])
    request = first_page(crawler)
    for step in range(4):
        now[0] += 40
        request.meta.pop("retry_times", None)
        middleware.process_response(request, TextResponse(request.url, body=qcwy_answer(100), request=request))
        # refused at 1040, 1080, 1120, 1160: the third is too soon (80 s), the fourth concludes
        assert closed == ([] if step < 3 else ["farm_site_refused"])
    assert crawler.stats.get_value("farm/site/refused") == "qcwy_empty_page ×4"


def test_the_watch_needs_the_time_and_the_count_and_a_page_clears_it():
    watch = RefusalWatch(after=60, least=3)
    assert not watch.refused("a", 0) and not watch.refused("a", 70)  # two: too few
    watch.page()
    assert not watch.refused("a", 100) and not watch.refused("b", 110) and not watch.refused("b", 150)
    assert watch.refused("b", 160)
    assert watch.summary() == "b ×3, a ×1"
    assert not RefusalWatch(after=0, least=1).refused("a", 10**6)  # 0: never


def test_retry_after_is_read_in_seconds_and_as_an_http_date():
    def answer(value):
        return TextResponse("http://x.invalid/", status=429, headers={"Retry-After": value})

    now = datetime(2026, 12, 4, 9, 0, 0, tzinfo=UTC)
    assert retry_after(answer("120")) == 120
    later = format_datetime(datetime(2026, 12, 4, 9, 1, 30, tzinfo=UTC), usegmt=True)
    assert retry_after(answer(later), now=now.timestamp()) == 90
    assert retry_after(answer("soon")) is None
    assert retry_after(TextResponse("http://x.invalid/", status=429)) is None
