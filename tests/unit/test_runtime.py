"""The crawl's runtime: built in one place, its thread started when the crawl opens, nothing written in
later (its writer's process: tests/integration/test_writer_spawn.py)."""

import threading
from types import SimpleNamespace

import pytest_twisted
from scrapy.utils.test import get_crawler

from farm.crawl.parts import CrawlParts
from farm.crawl.scheduler import FarmScheduler
from farm.pipelines.sql import SqlPostingsPipeline
from farm.sites.qcwy.spider import QcwySpider
from farm.state.db import make_engine
from farm.state.store import KeywordStore
from tests.migrated import migrated
from tests.unit.components import farm_settings


def database_with_a_keyword(db_url):
    migrated(db_url)
    store = KeywordStore(make_engine(db_url))
    store.add_keywords([("qcwy", "北京", "python")])
    store.engine.dispose()


def built_crawler(db_url):
    database_with_a_keyword(db_url)
    crawler = get_crawler(QcwySpider, farm_settings(FARM_DB_URL=db_url, FARM_QCWY_BASE_URL="http://sandbox.invalid"))
    crawler.spider = QcwySpider.from_crawler(crawler)
    return crawler


def farm_threads():
    return [t for t in threading.enumerate() if "farm-db" in t.name]


@pytest_twisted.ensureDeferred
async def test_building_the_crawls_components_starts_no_process_and_no_thread(sqlite_url):
    before = farm_threads()
    crawler = built_crawler(sqlite_url)  # the extensions, the runtime among them, are built
    runtime = crawler.get_extension(CrawlParts)
    try:
        pipeline = SqlPostingsPipeline.from_crawler(crawler)
        scheduler = FarmScheduler.from_crawler(crawler)
        assert runtime.writer is None
        assert farm_threads() == before
        # every part is the runtime's own, handed to the components that use it
        assert pipeline.outbox is runtime.outbox and pipeline.progress is runtime.progress
        assert not hasattr(runtime, "postings")

        crawler.engine = SimpleNamespace(downloader=None)  # what Scrapy's queues look up when made
        scheduler.open(crawler.spider)  # the engine opens the scheduler first: the crawl starts here
        assert runtime.writer is not None and runtime.outbox.writer is runtime.writer
        assert len(farm_threads()) == len(before) + 1  # the DB thread
        assert await runtime.run(lambda: "answered") == "answered"
    finally:
        runtime.close()
    assert farm_threads() == before


def test_start_is_once(sqlite_url):
    crawler = built_crawler(sqlite_url)
    runtime = crawler.get_extension(CrawlParts)
    try:
        runtime.start()
        writer = runtime.writer
        runtime.start()  # a second call
        assert runtime.writer is writer
    finally:
        runtime.close()
