"""Redis lost everything (FLUSHALL, on a redis-server of the test's own): the shared queue is rebuilt from
the keyword table, whichever worker joined meanwhile, and a crawl finishes its rebuild before it closes."""

import threading

import pytest
import pytest_twisted
import redis
from twisted.internet import reactor

from farm.crawl.backends.redis.queue import SharedQueue
from farm.crawl.parts import CrawlParts
from farm.crawl.scheduler import FarmScheduler
from farm.state.reads import LeaseProgress
from tests.e2e.test_shared import private_redis  # noqa: F401 (a fixture)
from tests.integration.test_shared_scheduler import WAIT, crawler_sharing_work
from tests.unit.components import until
from tests.unit.spider_helpers import make_lease

pytestmark = pytest.mark.redis


@pytest.fixture
def flushed_worker(sqlite_url, private_redis):
    """(crawler, runtime, scheduler, a client of the private Redis) of a worker that joined the shared work."""
    url, _ = private_redis
    crawler = crawler_sharing_work(sqlite_url, [("qcwy", "北京", "python")], url, "farm")
    runtime = crawler.get_extension(CrawlParts)
    scheduler = FarmScheduler.from_crawler(crawler)
    client = redis.Redis.from_url(url)
    yield crawler, runtime, scheduler, client
    client.close()
    scheduler.close("finished")
    runtime.close()


async def flush_seen(crawler):
    """The worker's heartbeat seeing that Redis lost everything."""
    work = crawler.get_extension(CrawlParts).backend.work
    await until(lambda: work._heartbeat() or crawler.stats.get_value("farm/shared/epoch_lost"), WAIT, "the flush seen")


@pytest_twisted.ensureDeferred
async def test_a_worker_rebuilding_the_queue_neither_finishes_nor_closes_before_it_is_rebuilt(flushed_worker):
    # an empty Redis said the shared work was done: the worker that had taken the rebuild lock closed,
    # its link with it, and the rebuild never ended; the others waited on its lock, and the pages it was
    # to queue again came back only once a look at their keyword found nothing open
    crawler, runtime, scheduler, client = flushed_worker
    work = runtime.backend.work
    await work.start().addTimeout(WAIT, reactor)
    assert work.epoch
    release = threading.Event()
    database = runtime.run(release.wait, WAIT)  # the database thread busy: the rebuild waits behind it
    try:
        client.flushall()
        await flush_seen(crawler)
        await until(lambda: client.get(work.queue.k("rebuild")), WAIT, "the rebuild lock")
        assert not work.busy  # Redis is empty,
        assert not scheduler.backend.is_finished()  # but the work left is in the keyword table
        closed = work.closing()
        assert not closed.called
    finally:
        release.set()
    assert await database.addTimeout(WAIT, reactor)
    await closed.addTimeout(WAIT, reactor)  # once rebuilt
    epoch = client.get(work.queue.k("epoch"))
    assert epoch and epoch.decode() == work.epoch and not client.get(work.queue.k("rebuild"))
    assert not work._rebuilding and scheduler.backend.is_finished()


@pytest_twisted.ensureDeferred
async def test_a_closing_worker_leaves_the_rebuild_to_the_others(flushed_worker):
    # its link closes with its crawl: a rebuild it began would be cut short, the lock held
    crawler, runtime, _, client = flushed_worker
    work = runtime.backend.work
    await work.start().addTimeout(WAIT, reactor)
    await work.closing().addTimeout(WAIT, reactor)
    client.flushall()
    await work.link.run(lambda: None).addTimeout(WAIT, reactor)
    work._heartbeat()
    await work._beating.addTimeout(WAIT, reactor)
    await work.link.run(lambda: None).addTimeout(WAIT, reactor)  # a lock taken would be by now
    assert not client.get(work.queue.k("rebuild")) and not work.adopting


@pytest_twisted.ensureDeferred
async def test_an_epoch_made_by_a_worker_joining_after_the_flush_does_not_pass_for_a_rebuild(flushed_worker):
    # a worker that joined after Redis lost everything (its join held up by the same outage) made an
    # epoch: the worker that held work under the old one took it for a rebuild, and nothing was queued
    # again (the pages it held came back only once a look at their keyword found nothing open)
    crawler, runtime, _, client = flushed_worker
    work = runtime.backend.work
    await work.start().addTimeout(WAIT, reactor)
    before = work.epoch
    client.flushall()
    joined = SharedQueue(client, crawler.spider, work.queue.key, "joiner", work.queue.dupefilter).start_epoch()
    await flush_seen(crawler)
    await until(lambda: not work.adopting, WAIT, "the rebuild")
    epoch = client.get(work.queue.k("epoch")).decode()
    assert epoch not in (before, joined) and epoch == work.epoch  # rebuilt, under an epoch of its own
    assert crawler.stats.get_value("farm/shared/rebuilt_keywords") == 0  # none held in the keyword table
    assert not client.get(work.queue.k("rebuild"))


@pytest_twisted.ensureDeferred
async def test_a_rebuild_keeps_a_keywords_done_pages_from_being_queued_again(flushed_worker):
    # a worker handling a page of another's keyword asks for all its pages, and the keyword's fingerprints
    # alone keep the done ones out: those went with the state Redis lost, and a page done before was
    # fetched a second time
    crawler, runtime, _, client = flushed_worker
    work = runtime.backend.work
    await work.start().addTimeout(WAIT, reactor)
    spider = crawler.spider
    lease = make_lease("qcwy", total_pages=10)
    progress = LeaseProgress(watermark=3, total_pages=10, pages_ahead=frozenset({5}))
    client.flushall()
    await work._requeue_held([(lease, work.queue.worker, progress)]).addTimeout(WAIT, reactor)
    assert sorted(int(page) for page in client.smembers(work.queue.dupefilter.lease_key(lease.name))) == list(
        range(1, 11)
    )
    _, taken = work.queue.pop_many(20)
    assert sorted(t.request.meta["farm_page"] for t in taken) == [4, 6, 7, 8, 9, 10]
    asked_by_another = [spider.page_request(lease, page) for page in range(1, 11)]
    assert work.queue.push_many(asked_by_another) == [False] * 10
