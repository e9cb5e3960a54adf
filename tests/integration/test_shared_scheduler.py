"""The shared scheduler's pump on the machine's real Redis: when it takes requests from the shared queue."""

import pytest
import pytest_twisted

import farm.shared.scheduler as shared_scheduler
from scrapy.crawler import CrawlerRunner

from farm.runtime import FarmRuntime
from farm.shared.scheduler import SharedScheduler
from farm.spiders.qcwy import QcwySpider
from farm.state.db import make_engine
from farm.state.migrate import upgrade
from farm.state.store import KeywordStore
from tests.unit.components import farm_settings, until
from tests.unit.spider_helpers import make_lease

pytestmark = pytest.mark.redis


def crawler_sharing_work(db_url, rows, redis_url, prefix):
    """A crawler in Redis mode, built in the order Scrapy's crawl builds one: the spider before the
    components (the shared queue is the spider's), unlike scrapy.utils.test.get_crawler."""
    upgrade(db_url)
    store = KeywordStore(make_engine(db_url))
    store.add_keywords(rows)
    store.engine.dispose()
    settings = farm_settings(FARM_DB_URL=db_url, FARM_QCWY_BASE_URL="http://sandbox.invalid", FARM_REDIS_URL=redis_url,
                             FARM_REDIS_PREFIX=prefix, REMOTE_CONTROL_ENABLED=False, TELNETCONSOLE_ENABLED=False)
    crawler = CrawlerRunner(settings).create_crawler(QcwySpider)
    crawler.spider = crawler._create_spider()
    crawler._apply_settings()
    FarmRuntime.of(crawler).start()  # as the scheduler does when a crawl opens
    return crawler


@pytest_twisted.ensureDeferred
async def test_a_workers_own_requests_are_taken_at_once_not_at_its_next_idle_poll(sqlite_url, shared, monkeypatch):
    # an empty shared queue is looked at again only after a minute here (0.05 s to 1 s in a crawl: at
    # the start of every crawl, its first pages waited for that poll after its claim had queued them)
    monkeypatch.setattr(shared_scheduler, "IDLE_POLLS", (60.0,))
    redis_url, prefix = shared
    crawler = crawler_sharing_work(sqlite_url, [("qcwy", "北京", "python")], redis_url, prefix)
    runtime = FarmRuntime.of(crawler)
    scheduler = SharedScheduler.from_crawler(crawler)
    try:
        assert scheduler.next_request() is None  # nothing in the buffer: a pop starts
        await until(lambda: crawler.stats.get_value("farm/shared/pops") == 1, 10, "the first pop, empty")
        assert not scheduler._buffer
        runtime.shared.push(crawler.spider.page_request(make_lease("qcwy"), 1))
        await until(lambda: len(scheduler._buffer) == 1, 10, "the request this worker queued to be taken")
    finally:
        scheduler.close("finished")
        runtime.close()
