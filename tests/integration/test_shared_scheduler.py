"""A worker's round trips to the shared queue on the machine's real Redis: when its scheduler takes requests,
when it sends its own."""

import threading

import pytest
import pytest_twisted
from scrapy.crawler import CrawlerRunner
from twisted.internet import reactor
from twisted.internet.task import deferLater

import farm.shared.scheduler as shared_scheduler
from farm.keywordrun import KeywordRun
from farm.runtime import FarmRuntime
from farm.shared.scheduler import SharedScheduler
from farm.spiders.qcwy import QcwySpider
from farm.state.db import make_engine
from farm.state.migrate import upgrade
from farm.state.store import KeywordStore
from tests.unit.components import farm_settings, until
from tests.unit.spider_helpers import make_lease

pytestmark = pytest.mark.redis
WAIT = 30  # seconds any one wait on Redis may take before it fails the test


def crawler_sharing_work(db_url, rows, redis_url, prefix):
    """A crawler in Redis mode, built in the order Scrapy's crawl builds one: the spider before the
    components (the shared queue is the spider's), unlike scrapy.utils.test.get_crawler."""
    upgrade(db_url)
    store = KeywordStore(make_engine(db_url))
    store.add_keywords(rows)
    store.engine.dispose()
    settings = farm_settings(FARM_DB_URL=db_url, FARM_QCWY_BASE_URL="http://sandbox.invalid", FARM_REDIS_URL=redis_url,
                             FARM_REDIS_PREFIX=prefix, FARM_QCWY_RATE=0, REMOTE_CONTROL_ENABLED=False,
                             TELNETCONSOLE_ENABLED=False)  # fmt: skip
    crawler = CrawlerRunner(settings).create_crawler(QcwySpider)
    crawler.spider = crawler._create_spider()
    crawler._apply_settings()
    FarmRuntime.of(crawler).start()  # as the scheduler does when a crawl opens
    return crawler


@pytest.fixture
def worker(sqlite_url, shared):
    """(crawler, its runtime, its shared scheduler) of a worker in Redis mode, not crawling."""
    redis_url, prefix = shared
    crawler = crawler_sharing_work(sqlite_url, [("qcwy", "北京", "python")], redis_url, prefix)
    runtime = FarmRuntime.of(crawler)
    scheduler = SharedScheduler.from_crawler(crawler)
    yield crawler, runtime, scheduler
    scheduler.close("finished")
    runtime.close()


def pops(crawler):
    return crawler.stats.get_value("farm/shared/pops")


@pytest_twisted.ensureDeferred
async def test_a_workers_own_requests_are_taken_at_once_not_at_its_next_idle_poll(worker, monkeypatch):
    # an empty shared queue is looked at again only after a minute here (0.05 s to 1 s in a crawl: at
    # the start of every crawl, its first pages waited for that poll after its claim had queued them)
    monkeypatch.setattr(shared_scheduler, "IDLE_POLLS", (60.0,))
    crawler, runtime, scheduler = worker
    assert scheduler.next_request() is None  # nothing in the buffer: a pop starts
    await until(lambda: pops(crawler) == 1, WAIT, "the first pop, empty")
    assert not scheduler._buffer
    runtime.shared.push(crawler.spider.page_request(make_lease("qcwy"), 1))
    await until(lambda: len(scheduler._buffer) == 1, 10, "the request this worker queued to be taken")


@pytest_twisted.ensureDeferred
async def test_a_pop_that_leaves_the_buffer_over_half_full_is_not_topped_up_at_once(worker):
    # each pop is a round trip on the Redis thread under the crawl's GIL: topping the buffer up after
    # every pop made pops of one or two requests; it is refilled when half of it is served
    crawler, runtime, scheduler = worker
    half = scheduler.prefetch // 2
    lease = make_lease("qcwy")
    runtime.runs[lease.key] = KeywordRun(lease)  # held here: its requests are still wanted
    for page in range(1, half * 2 + 9):
        runtime.shared.push(crawler.spider.page_request(lease, page))
    await runtime.shared.flush().addTimeout(WAIT, reactor)
    assert scheduler.next_request() is None  # a pop starts
    await until(lambda: len(scheduler._buffer) == half * 2, WAIT, "the buffer to fill")
    served = [scheduler.next_request() for _ in range(half + 1)]  # down to under half: a pop
    assert all(served)
    await until(lambda: pops(crawler) >= 2, WAIT, "the second pop")
    assert len(scheduler._buffer) == half - 1 + 8  # the rest of the queue: over half full
    await deferLater(reactor, 0, lambda: None)  # a top-up would be asked for now,
    await runtime.shared.link.run(lambda: None).addTimeout(WAIT, reactor)  # and made before this (first in, first out)
    assert pops(crawler) == 2


@pytest_twisted.ensureDeferred
async def test_acknowledgements_made_while_a_send_is_on_its_way_go_together_in_the_next(worker):
    # one send a reactor turn made sends of one or two acknowledgements, each a round trip
    crawler, runtime, _ = worker
    work = runtime.shared
    release = threading.Event()
    sends = []
    send = work._send
    work._send = lambda batches: sends.append(batches) or send(batches)
    busy = work.link.run(release.wait, WAIT)  # the link's thread is busy: the first send waits behind it
    try:
        work.ack("1")
        await until(lambda: crawler.stats.get_value("farm/shared/sends") == 1, WAIT, "the first send")
        for request_id in "2345":
            work.ack(request_id)
            await deferLater(reactor, 0, lambda: None)  # a reactor turn each
    finally:
        release.set()
    assert await busy.addTimeout(WAIT, reactor)
    await until(lambda: len(sends) >= 2, WAIT, "the second send")
    await deferLater(reactor, 0, lambda: None)
    await work.link.run(lambda: None).addTimeout(WAIT, reactor)  # any other send would be made before this
    assert sends == [[("ack", ["1"])], [("ack", ["2", "3", "4", "5"])]]
    assert crawler.stats.get_value("farm/shared/sends") == 2 and not work._ops
