"""Request signing at send time: each attempt of a qcwy request, retries included, carries a fresh sign."""

import hashlib
import hmac
from types import SimpleNamespace
from urllib.parse import parse_qsl, urlsplit

import pytest
from scrapy.downloadermiddlewares.retry import get_retry_request
from scrapy.exceptions import NotConfigured
from scrapy.settings.default_settings import DOWNLOADER_MIDDLEWARES_BASE
from scrapy.utils.misc import build_from_crawler

from farm import addon as farm_addon
from farm.crawl.meta import SIGNED
from farm.crawl.scheduler import FarmScheduler
from farm.middlewares.signing import RequestSigningMiddleware
from farm.sites.boss.spider import BossSpider
from farm.sites.qcwy.sandbox import sign as sandbox_sign
from farm.sites.qcwy.spider import QcwySpider
from tests.unit.spider_helpers import make_lease, make_spider
from tests.unit.test_scheduler import MemoryBackend, Parts

KEY = b"abfc8f9dcf8c3f3d8aa294ac5f2cf2cc7767e5592590f39c3f503271dd68562b"  # docs/sites.md §2.1


class Clock:
    def __init__(self, now):
        self.now = now

    def __call__(self):
        return self.now


def signing(spidercls, clock=None):
    spider, _ = make_spider(spidercls)
    if clock is not None:
        spider.clock = clock
    spider.crawler.spider = spider
    return spider, build_from_crawler(RequestSigningMiddleware, spider.crawler)


def timestamp_of(request):
    return dict(parse_qsl(urlsplit(request.url).query, keep_blank_values=True))["timestamp"]


def assert_signed(request):
    """The sign header is the contract's HMAC over exactly the path and query sent."""
    parts = urlsplit(request.url)
    target = f"{parts.path}?{parts.query}"
    sent = request.headers["sign"].decode()
    assert sent == hmac.new(KEY, target.encode(), hashlib.sha256).hexdigest()
    assert sent == sandbox_sign(target)


def sent(middleware, request):
    """The attempt that goes out: the signed copy the middleware returns, through it once more as
    the scheduler sends it back (the first attempt of ``request`` when nothing was signed)."""
    signed = middleware.process_request(request)
    if signed is None:
        return request
    assert signed.meta[SIGNED] and middleware.process_request(signed) is None  # it passes as it is
    assert SIGNED not in signed.meta  # taken: a retry copied from it is signed anew
    return signed


def test_a_retry_minutes_later_carries_a_new_timestamp_and_a_valid_sign():
    clock = Clock(1750000000.4)
    spider, middleware = signing(QcwySpider, clock)
    request = sent(middleware, spider.page_request(make_lease("qcwy", city="上海", job="C++ 开发/测试"), 2))
    assert timestamp_of(request) == "1750000000"
    assert_signed(request)
    first_url, first_sign = request.url, request.headers["sign"]

    clock.now += 600  # the site blocked it; the back-off took ten minutes
    retry = get_retry_request(request, spider=spider, reason="farm_block/qcwy_throttled", max_retry_times=5)
    assert retry.meta["retry_times"] == 1
    assert timestamp_of(retry) == "1750000000"  # the copy Scrapy made is stale...
    retry = sent(middleware, retry)
    assert timestamp_of(retry) == "1750000600"  # ...until it goes out
    assert_signed(retry)
    assert retry.headers["sign"] != first_sign
    # only the timestamp changed; the rest of the query and what the request carries are the same
    assert retry.url == first_url.replace("timestamp=1750000000", "timestamp=1750000600")
    assert retry.meta["farm_page"] == 2 and retry.callback == spider.parse_search and retry.dont_filter
    assert retry.meta["retry_times"] == 1 and retry.headers["From-Domain"] == b"51job_web"
    assert spider.crawler.stats.get_value("farm/sign/signed") == 2


def test_the_signed_copy_goes_out_at_once_past_the_pace_and_the_queue():
    # Scrapy hands a Request returned by process_request back to the scheduler: the copy must not
    # wait in the queue (or go to another worker through Redis), nor take a second turn of the pace
    clock = Clock(1750000000)
    spider, middleware = signing(QcwySpider, clock)
    parts = Parts(window=1, rate=0.5)
    backend = MemoryBackend()
    scheduler = FarmScheduler(backend, parts)
    lease = SimpleNamespace(key=(1, 1))
    first = spider.page_request(make_lease("qcwy"), 1).replace(meta={"farm_lease": lease, "farm_page": 1})
    scheduler.enqueue_request(first)
    scheduler.enqueue_request(first.replace(meta={"farm_lease": lease, "farm_page": 2}))
    assert scheduler.next_request() is first  # its turn of the pace taken, in the window
    clock.now = 1750000042
    signed = middleware.process_request(first)
    assert scheduler.enqueue_request(signed) and len(backend) == 1  # page 2 alone is queued
    assert scheduler.next_request() is signed  # at once: the pace (one every 2 s) and the full window aside
    assert middleware.process_request(signed) is None
    assert timestamp_of(signed) == "1750000042"
    assert_signed(signed)


def test_requests_the_hook_does_not_sign_pass_unchanged():
    spider, middleware = signing(QcwySpider, Clock(1750000000))
    other = spider.page_request(make_lease("qcwy"), 1).replace(url="https://we.51job.com/robots.txt", headers={})
    assert middleware.process_request(other) is None
    assert other.url == "https://we.51job.com/robots.txt" and "sign" not in other.headers


def test_off_for_a_spider_without_a_sign_hook():
    spider, _ = make_spider(BossSpider)
    with pytest.raises(NotConfigured):
        RequestSigningMiddleware.from_crawler(spider.crawler)


def test_sits_after_the_lease_middleware_and_before_scrapys_retry():
    priorities = farm_addon.DOWNLOADER_MIDDLEWARES
    signing_at = priorities["farm.middlewares.signing.RequestSigningMiddleware"]
    retry_at = DOWNLOADER_MIDDLEWARES_BASE["scrapy.downloadermiddlewares.retry.RetryMiddleware"]
    assert priorities["farm.crawl.leases.KeywordLeaseMiddleware"] < signing_at < retry_at


def test_in_a_crawl_that_signs_at_send_a_request_is_made_unsigned_and_signed_once_as_it_goes_out():
    spider, _ = make_spider(QcwySpider, DOWNLOADER_MIDDLEWARES=farm_addon.DOWNLOADER_MIDDLEWARES)
    spider.clock = Clock(1750000000)
    spider.crawler.spider = spider
    assert spider.signed_when_sent
    request = spider.page_request(make_lease("qcwy"), 1)
    assert timestamp_of(request) == "" and "sign" not in request.headers  # no sign made only to be made again
    middleware = build_from_crawler(RequestSigningMiddleware, spider.crawler)
    request = sent(middleware, request)
    assert timestamp_of(request) == "1750000000"
    assert_signed(request)
    assert request.meta["verbatim_url"]  # sent exactly as signed: Scrapy escapes it no further


def test_a_crawl_without_the_signing_middleware_signs_a_request_when_it_is_made():
    disabled = {**farm_addon.DOWNLOADER_MIDDLEWARES, "farm.middlewares.signing.RequestSigningMiddleware": None}
    spider, _ = make_spider(QcwySpider, clock=1750000000, DOWNLOADER_MIDDLEWARES=disabled)
    assert not spider.signed_when_sent
    request = spider.page_request(make_lease("qcwy"), 1)
    assert timestamp_of(request) == "1750000000"
    assert_signed(request)
