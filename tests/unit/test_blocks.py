"""Blocks and site trouble: retried with the site's back-off; an outage is not the keyword's fault."""

import pytest
from scrapy.http import HtmlResponse, TextResponse
from twisted.internet.error import ConnectionRefusedError, TimeoutError

from farm.crawl.keywordrun import Outcome
from farm.crawl.paging import KeywordBlocked, LeaseLost, SiteUnavailable
from farm.crawl.parts import CrawlParts
from farm.middlewares.blocks import SiteBlockMiddleware
from tests.unit.components import make_crawler

ROWS = [("qcwy", city, "python") for city in ("北京", "上海", "广州", "深圳")]
OK = b'{"status": "1", "resultbody": {"job": {"totalCount": 0, "items": []}}}'


@pytest.fixture
def crawler(sqlite_url):
    crawler = make_crawler(sqlite_url, ROWS, FARM_BLOCK_RETRIES=2, FARM_BLOCK_BASE_DELAY=1, FARM_BLOCK_MAX_DELAY=8)
    yield crawler
    crawler.get_extension(CrawlParts).close()


@pytest.fixture
def middleware(crawler):
    return SiteBlockMiddleware.from_crawler(crawler)


def page_requests(crawler, n=1):
    """Page 1 of ``n`` keywords the crawl holds."""
    leases = crawler.get_extension(CrawlParts).store.claim("qcwy", "test", n)
    return [crawler.spider.crawl_paging.first_requests(lease)[0] for lease in leases]


def answer(request, status=200, body=OK, content_type="application/json"):
    cls = TextResponse if "json" in content_type else HtmlResponse
    return cls(
        url=request.url,
        status=status,
        body=body,
        headers={"Content-Type": content_type},
        request=request,
        encoding="utf-8",
    )


def test_a_refused_connection_is_retried_with_the_site_backed_off_then_the_keyword_released(crawler, middleware):
    [request] = page_requests(crawler)
    pace = crawler.get_extension(CrawlParts).pace
    for attempt in (1, 2):
        request = middleware.process_exception(request, ConnectionRefusedError())
        assert request.meta["retry_times"] == attempt
    assert pace.penalty == 2.0  # 1, then 2
    with pytest.raises(SiteUnavailable, match="TimeoutError"):
        middleware.process_exception(request, TimeoutError())
    assert crawler.stats.get_value("farm/site/errors") == 3
    assert crawler.stats.get_value("farm/site/gave_up") == 1


def test_a_server_error_only_one_keyword_meets_is_the_keywords_fault(crawler, middleware):
    [request] = page_requests(crawler)
    for _ in range(2):
        request = middleware.process_response(request, answer(request, 500, b"oops", "text/html"))
    response = answer(request, 500, b"oops", "text/html")
    assert middleware.process_response(request, response) is response  # HttpError fails the keyword


def test_server_errors_across_keywords_are_the_sites_trouble(crawler, middleware):
    first, second, third = page_requests(crawler, 3)
    for other in (second, third):
        middleware.process_response(other, answer(other, 502, b"bad gateway", "text/html"))
    for _ in range(2):
        first = middleware.process_response(first, answer(first, 502, b"bad gateway", "text/html"))
    with pytest.raises(SiteUnavailable, match="HTTP 502"):
        middleware.process_response(first, answer(first, 502, b"bad gateway", "text/html"))


def test_a_block_is_retried_then_given_up(crawler, middleware):
    [request] = page_requests(crawler)
    waf = b"<html><script>var arg1='0123456789ABCDEF0123456789ABCDEF01234567';</script></html>"
    for _ in range(2):
        request = middleware.process_response(request, answer(request, 200, waf, "text/html"))
    with pytest.raises(KeywordBlocked, match="qcwy_waf_challenge"):
        middleware.process_response(request, answer(request, 200, waf, "text/html"))
    assert crawler.stats.get_value("farm/block/count") == 3
    assert crawler.stats.get_value("farm/block/retry/count") == 2


def test_a_page_of_an_ended_keyword_is_not_retried(crawler, middleware):
    [request] = page_requests(crawler)
    lease = request.meta["farm_lease"]
    run = crawler.spider.crawl_paging.registry.runs[lease.key]
    run.taken(1)
    run.outcome = Outcome("failed", "elsewhere")
    with pytest.raises(LeaseLost):
        middleware.process_exception(request, ConnectionRefusedError())
    assert 1 not in run.pending and not run.fetching


def test_a_good_answer_eases_the_back_off(crawler, middleware):
    [request] = page_requests(crawler)
    pace = crawler.get_extension(CrawlParts).pace
    pace.back_off()
    pace.back_off()
    response = answer(request)
    assert middleware.process_response(request, response) is response
    assert pace.penalty == 1.0


def test_a_block_quarantines_the_proxy_it_came_through(sqlite_url):
    from scrapy.exceptions import DownloadTimeoutError

    crawler = make_crawler(
        sqlite_url,
        ROWS,
        FARM_BLOCK_RETRIES=2,
        FARM_BLOCK_BASE_DELAY=1,
        FARM_BLOCK_MAX_DELAY=8,
        FARM_PROXIES="http://alice:s3cret@10.0.0.1:3128,http://10.0.0.2:3128",
    )
    try:
        middleware = SiteBlockMiddleware.from_crawler(crawler)
        pool = crawler.get_extension(CrawlParts).proxies
        first, second = page_requests(crawler, 2)
        for request in (first, second):
            assert pool.assign(request) == 0
        retry = middleware.process_response(first, answer(first, 403, b"Forbidden", "text/html"))
        assert retry.meta["retry_times"] == 1
        assert set(pool.until) == {first.meta["farm_proxy"]}
        assert crawler.stats.get_value("farm/proxy/quarantined") == 1
        # a timeout may be the site's: site trouble, the proxy kept
        middleware.process_exception(second, DownloadTimeoutError("took longer than 30 seconds"))
        assert set(pool.until) == {first.meta["farm_proxy"]}
    finally:
        crawler.get_extension(CrawlParts).close()


@pytest.mark.parametrize("kind", ["scrapy", "curl", "curl_proxy"])
def test_a_proxy_that_refuses_connections_is_quarantined_without_slowing_the_site(sqlite_url, kind):
    from curl_cffi.requests.exceptions import ConnectionError as CurlConnectionError
    from curl_cffi.requests.exceptions import ProxyError
    from scrapy.exceptions import DownloadConnectionRefusedError

    # Scrapy's handler's, and curl_cffi's for requests sent with a browser's fingerprint
    refused = {
        "scrapy": DownloadConnectionRefusedError("Connection was refused"),
        "curl": CurlConnectionError("curl: (7) Failed to connect to 10.0.0.1 port 3128"),
        "curl_proxy": ProxyError("curl: (97) proxy handshake failed"),
    }[kind]

    crawler = make_crawler(
        sqlite_url,
        ROWS,
        FARM_BLOCK_RETRIES=2,
        FARM_BLOCK_BASE_DELAY=1,
        FARM_BLOCK_MAX_DELAY=8,
        FARM_PROXIES="http://10.0.0.1:3128,http://10.0.0.2:3128",
    )
    try:
        middleware = SiteBlockMiddleware.from_crawler(crawler)
        runtime = crawler.get_extension(CrawlParts)
        [request] = page_requests(crawler)
        runtime.proxies.assign(request)
        retry = middleware.process_exception(request, refused)
        assert retry.meta["retry_times"] == 1
        assert set(runtime.proxies.until) == {request.meta["farm_proxy"]}
        assert runtime.pace.penalty == 0.0 and not crawler.stats.get_value("farm/site/errors")
        assert crawler.stats.get_value("farm/proxy/unreachable") == 1
    finally:
        crawler.get_extension(CrawlParts).close()


def test_a_tls_error_through_a_proxy_is_the_sites_trouble_not_the_proxys(sqlite_url):
    from curl_cffi.requests.exceptions import SSLError

    crawler = make_crawler(sqlite_url, ROWS, FARM_BLOCK_RETRIES=2, FARM_PROXIES="http://10.0.0.1:3128")
    try:
        middleware = SiteBlockMiddleware.from_crawler(crawler)
        runtime = crawler.get_extension(CrawlParts)
        [request] = page_requests(crawler)
        runtime.proxies.assign(request)
        retry = middleware.process_exception(request, SSLError("curl: (35) TLS connect error"))
        assert retry.meta["retry_times"] == 1 and not runtime.proxies.until
        assert crawler.stats.get_value("farm/site/errors") == 1
    finally:
        crawler.get_extension(CrawlParts).close()


def test_a_refusal_is_the_identitys_and_the_site_is_refusing_only_when_every_identity_is(sqlite_url, monkeypatch):
    from farm.middlewares.refusals import RefusalWatch

    crawler = make_crawler(
        sqlite_url,
        ROWS,
        FARM_BLOCK_RETRIES=100,
        FARM_QCWY_RATE=2,
        FARM_PROXY_QUARANTINE=0,
        FARM_PROXIES="http://alice:s3cret@10.0.0.1:3128,http://10.0.0.2:3128",
    )
    try:
        middleware = SiteBlockMiddleware.from_crawler(crawler)
        middleware.watch = RefusalWatch(after=100, least=3)
        closed = []
        monkeypatch.setattr(middleware, "close_crawl", closed.append)
        now = [1000.0]
        monkeypatch.setattr("farm.middlewares.blocks.time.monotonic", lambda: now[0])
        parts = crawler.get_extension(CrawlParts)
        refusing, answering = parts.identities.identities
        first, second = page_requests(crawler, 2)
        for request, identity in ((first, refusing), (second, answering)):
            request.meta["farm_identity"] = identity.id
        for _ in range(6):  # one identity refused for 240 s, the other answering between
            now[0] += 40
            middleware.process_response(first, answer(first, 403, b"Forbidden", "text/html"))
            assert middleware.process_response(second, answer(second)).status == 200
        assert closed == []  # one identity's pages are answers: the site does not refuse the crawl
        assert refusing.pace.learned == refusing.pace.floor and refusing.blocks == 6
        assert answering.pace.learned == 2.0 and answering.pace.penalty == 0 and answering.pages == 6
        assert parts.pace.penalty == 0  # nor is the site's own pace backed off
        for _ in range(4):  # then every identity refuses
            now[0] += 40
            for request in (first, second):
                middleware.process_response(request, answer(request, 403, b"Forbidden", "text/html"))
        assert closed == ["farm_site_refused"]
    finally:
        crawler.get_extension(CrawlParts).close()
