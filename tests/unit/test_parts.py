"""The crawl's parts are one Scrapy extension, built once and reached through Scrapy: every component
and the spider find the same parts with ``crawler.get_extension``, and nothing is written into them
or into the spider once they are built."""

from types import SimpleNamespace

import pytest
import scrapy
from scrapy.crawler import CrawlerRunner
from scrapy.exceptions import NotConfigured
from scrapy.utils.request import request_from_dict
from scrapy.utils.test import get_crawler

from farm.crawl.leases import KeywordLeaseMiddleware
from farm.crawl.parts import CrawlParts
from farm.crawl.scheduler import FarmScheduler
from farm.extensions.logstats import FarmLogStats
from farm.extensions.reaper import LeaseReaper
from farm.middlewares.blocks import SiteBlockMiddleware
from farm.pipelines.sql import SqlPostingsPipeline
from farm.sites.qcwy.spider import QcwySpider
from farm.state.db import make_engine
from farm.state.store import KeywordStore
from tests.migrated import migrated
from tests.unit.components import farm_settings, make_crawler

ROWS = [("qcwy", "北京", "python")]


class PlainSpider(scrapy.Spider):
    name = "plain"


@pytest.fixture
def crawler(sqlite_url):
    crawler = make_crawler(sqlite_url, ROWS)
    yield crawler
    crawler.get_extension(CrawlParts).close()


def test_the_parts_are_one_extension_every_component_reaches_through_scrapy(crawler):
    parts = crawler.get_extension(CrawlParts)
    assert isinstance(parts, CrawlParts)
    assert parts in crawler.extensions.middlewares
    leases = KeywordLeaseMiddleware.from_crawler(crawler)
    assert leases.registry is parts.registry and leases.backend is parts.backend and leases.outbox is parts.outbox
    assert leases.claim == parts.claim and leases.close_crawl == parts.close_crawl  # the parts' own, bound
    blocks = SiteBlockMiddleware.from_crawler(crawler)
    assert blocks.pace is parts.pace and blocks.identities is parts.identities and blocks.registry is parts.registry
    assert blocks.close_crawl == parts.close_crawl
    assert not hasattr(leases, "parts") and not hasattr(blocks, "parts")  # handed what they use, not the parts
    assert FarmScheduler.from_crawler(crawler).parts is parts
    pipeline = SqlPostingsPipeline.from_crawler(crawler)
    assert pipeline.outbox is parts.outbox and pipeline.progress is parts.progress
    assert crawler.get_extension(LeaseReaper).parts is parts
    assert crawler.get_extension(FarmLogStats).parts is parts


def test_the_spider_finds_the_crawls_paging_itself_and_nothing_writes_it_into_it(crawler):
    spider = crawler.spider
    parts = crawler.get_extension(CrawlParts)
    crawler.engine = SimpleNamespace(downloader=None)  # what Scrapy's queues look up when made
    FarmScheduler.from_crawler(crawler).open(spider)  # the parts start here, the crawl's one place
    assert "crawl_paging" not in vars(spider)
    assert spider.crawl_paging is parts.paging
    assert parts.paging.registry is parts.registry and parts.paging.progress is parts.progress


def test_built_in_scrapys_order_the_spider_reaches_the_parts_built_after_it(sqlite_url):
    migrated(sqlite_url)
    KeywordStore(make_engine(sqlite_url)).add_keywords(ROWS)
    settings = farm_settings(FARM_DB_URL=sqlite_url, FARM_QCWY_BASE_URL="http://sandbox.invalid")
    crawler = CrawlerRunner({**settings, "REMOTE_CONTROL_ENABLED": False}).create_crawler(QcwySpider)
    crawler.spider = crawler._create_spider()  # the spider first, then the extensions, as Scrapy's crawl
    crawler._apply_settings()
    parts = crawler.get_extension(CrawlParts)
    try:
        assert crawler.spider.crawl_paging is parts.paging
    finally:
        parts.close()


def test_a_spider_not_of_farms_gets_no_parts_and_scrapys_own_scheduler_queues(sqlite_url):
    crawler = get_crawler(PlainSpider, farm_settings(FARM_DB_URL=sqlite_url))
    with pytest.raises(NotConfigured, match="LeaseSpider"):
        CrawlParts.from_crawler(crawler)
    assert crawler.get_extension(CrawlParts) is None
    for component in (KeywordLeaseMiddleware, SiteBlockMiddleware, SqlPostingsPipeline):
        with pytest.raises(NotConfigured):
            component.from_crawler(crawler)
    assert FarmScheduler.from_crawler(crawler).parts is None


def test_a_farm_spider_without_farms_parts_can_be_inspected_and_its_requests_stored_as_scrapy_does():
    """Scrapy's disk queues and scrapy-redis store a request with ``Request.to_dict``, which finds its
    callback's name by reading every member of the spider (inspect.getmembers, which passes over only
    an AttributeError): a farm spider run without farm's parts must let it, and say what is missing
    when its parts are asked for."""
    crawler = get_crawler(QcwySpider, farm_settings(EXTENSIONS={"farm.crawl.parts.CrawlParts": None}))
    spider = QcwySpider.from_crawler(crawler)
    crawler.spider = spider
    assert crawler.get_extension(CrawlParts) is None
    request = spider.search_request("010000", "python", 1)
    request.callback, request.errback = spider._page_callback, spider._page_errback

    again = request_from_dict(request.to_dict(spider=spider), spider=spider)

    assert (again.url, again.callback, again.errback) == (request.url, spider.parse_search, spider.page_error)
    with pytest.raises(AttributeError, match="CrawlParts is not in EXTENSIONS: enable farm with its add-on"):
        spider.crawl_paging  # noqa: B018
    assert not hasattr(spider, "crawl_paging")
