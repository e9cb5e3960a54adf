"""A worker's round trips to the shared queue on the machine's real Redis: when its scheduler takes requests,
when it sends its own."""

import threading
from urllib.parse import urlsplit

import pytest
import pytest_twisted
import redis
from scrapy.crawler import CrawlerRunner
from twisted.internet import reactor
from twisted.internet.task import deferLater

import farm.crawl.backends.redis.backend as shared_scheduler
from farm.crawl.backends.redis.queue import SharedQueue
from farm.crawl.backends.redis.rebuild import REBUILD_LOCK_SECONDS
from farm.crawl.backends.redis.sends import SEND_BATCHES
from farm.crawl.parts import CrawlParts
from farm.crawl.scheduler import FarmScheduler
from farm.sites.qcwy.spider import QcwySpider
from farm.state.db import make_engine
from farm.state.store import KeywordStore
from tests.migrated import migrated
from tests.relay import ReplyDropper
from tests.unit.components import farm_settings, until
from tests.unit.spider_helpers import make_lease

pytestmark = pytest.mark.redis
WAIT = 30  # seconds any one wait on Redis may take before it fails the test


def crawler_with_parts(db_url, rows, redis_url, prefix, **settings):
    """A crawler whose parts are built (the extensions), in the order Scrapy's crawl builds one: the
    spider before the components (the shared queue is the spider's), unlike scrapy.utils.test.get_crawler.
    Not started, not crawling; ``settings`` over farm's test settings."""
    migrated(db_url)
    store = KeywordStore(make_engine(db_url))
    store.add_keywords(rows)
    store.engine.dispose()
    settings = farm_settings(
        FARM_DB_URL=db_url,
        FARM_QCWY_BASE_URL="http://sandbox.invalid",
        FARM_REDIS_URL=redis_url,
        FARM_REDIS_PREFIX=prefix,
        FARM_QCWY_RATE=0,
        REMOTE_CONTROL_ENABLED=False,
        TELNETCONSOLE_ENABLED=False,
        **settings,
    )
    crawler = CrawlerRunner(settings).create_crawler(QcwySpider)
    crawler.spider = crawler._create_spider()
    crawler._apply_settings()
    return crawler


def crawler_sharing_work(db_url, rows, redis_url, prefix):
    """A crawler in Redis mode (``crawler_with_parts``), its parts and its Redis link started."""
    crawler = crawler_with_parts(db_url, rows, redis_url, prefix)
    parts = crawler.get_extension(CrawlParts)
    parts.start()  # as the scheduler does when a crawl opens,
    parts.backend.work.link.start()  # and the Redis backend's open, without joining the shared work
    return crawler


@pytest.fixture
def worker(sqlite_url, shared):
    """(crawler, its runtime, its shared scheduler) of a worker in Redis mode, not crawling."""
    redis_url, prefix = shared
    crawler = crawler_sharing_work(sqlite_url, [("qcwy", "北京", "python")], redis_url, prefix)
    runtime = crawler.get_extension(CrawlParts)
    scheduler = FarmScheduler.from_crawler(crawler)
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
    assert not scheduler.backend._buffer
    runtime.backend.work.push(crawler.spider.page_request(make_lease("qcwy"), 1))
    await until(lambda: len(scheduler.backend._buffer) == 1, 10, "the request this worker queued to be taken")


@pytest_twisted.ensureDeferred
async def test_a_pop_that_leaves_the_buffer_over_half_full_is_not_topped_up_at_once(worker):
    # each pop is a round trip on the Redis thread under the crawl's GIL: topping the buffer up after
    # every pop made pops of one or two requests; it is refilled when half of it is served
    crawler, runtime, scheduler = worker
    half = scheduler.backend.prefetch // 2
    lease = make_lease("qcwy")
    runtime.registry.add(lease)  # held here: its requests are still wanted
    for page in range(1, half * 2 + 9):
        runtime.backend.work.push(crawler.spider.page_request(lease, page))
    await runtime.backend.work.flush().addTimeout(WAIT, reactor)
    assert scheduler.next_request() is None  # a pop starts
    await until(lambda: len(scheduler.backend._buffer) == half * 2, WAIT, "the buffer to fill")
    served = [scheduler.next_request() for _ in range(half + 1)]  # down to under half: a pop
    assert all(served)
    await until(lambda: pops(crawler) >= 2, WAIT, "the second pop")
    assert len(scheduler.backend._buffer) == half - 1 + 8  # the rest of the queue: over half full
    await deferLater(reactor, 0, lambda: None)  # a top-up would be asked for now,
    await runtime.backend.work.link.run(lambda: None).addTimeout(
        WAIT, reactor
    )  # and made before this (first in, first out)
    assert pops(crawler) == 2


@pytest_twisted.ensureDeferred
async def test_acknowledgements_made_while_a_send_is_on_its_way_go_together_in_the_next(worker):
    # one send a reactor turn made sends of one or two acknowledgements, each a round trip
    crawler, runtime, _ = worker
    work = runtime.backend.work
    release = threading.Event()
    sends = []
    send = work._send
    work._send = lambda batches, calls: sends.append(batches) or send(batches, calls)
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


# --- a lost reply ---------------------------------------------------------------------------------
# Redis ran the command, the worker never heard back (a stall past the socket timeout, a reset): the
# link makes the call again, and it must neither strand nor repeat what the first one did.


@pytest.fixture
def dropper(shared):
    """A relay in front of the tests' Redis that loses one reply when told; the scripts loaded first
    (else the reply lost would be Redis asking for the script)."""
    redis_url, _ = shared
    address = urlsplit(redis_url)
    relay = ReplyDropper((address.hostname, address.port or 6379)).start()
    yield relay
    relay.stop()


@pytest.fixture
def worker_losing_a_reply(sqlite_url, shared, dropper):
    """A worker as ``worker``'s, talking to Redis through ``dropper``."""
    redis_url, prefix = shared
    address = urlsplit(redis_url)
    crawler = crawler_sharing_work(
        sqlite_url, [("qcwy", "北京", "python")], f"redis://127.0.0.1:{dropper.port}{address.path}", prefix
    )
    runtime = crawler.get_extension(CrawlParts)
    scheduler = FarmScheduler.from_crawler(crawler)
    client = redis.Redis.from_url(redis_url)
    for script in runtime.backend.work.queue.scripts.values():
        client.script_load(script.script)
    yield crawler, runtime, scheduler, client
    client.close()
    scheduler.close("finished")
    runtime.close()


def sha(queue, name) -> bytes:
    return queue.scripts[name].sha.encode()


@pytest_twisted.ensureDeferred
async def test_a_pop_whose_reply_is_lost_strands_nothing_in_the_workers_in_flight_set(worker_losing_a_reply, dropper):
    crawler, runtime, scheduler, client = worker_losing_a_reply
    work, queue = runtime.backend.work, runtime.backend.work.queue
    lease = make_lease("qcwy")
    runtime.registry.add(lease)
    for page in (1, 2, 3):
        work.push(crawler.spider.page_request(lease, page))
    await work.flush().addTimeout(WAIT, reactor)
    dropper.drop_reply_to(sha(queue, "pop"))
    assert scheduler.next_request() is None  # a pop starts; its reply is lost, and it is made again
    await until(
        lambda: len(scheduler.backend._buffer) == 3, 10, "the three requests the pop took, after its lost reply"
    )
    assert dropper.dropped.is_set()
    in_flight = {rid.decode() for rid in client.zrange(queue.k("taken:" + queue.worker), 0, -1)}
    assert in_flight == set(work.taken.values()) and len(in_flight) == 3 and not client.zcard(queue.k("queue"))


@pytest_twisted.ensureDeferred
async def test_a_push_and_an_acknowledgement_whose_replies_are_lost_queue_once_and_settle_once(
    worker_losing_a_reply, dropper, monkeypatch
):
    crawler, runtime, scheduler, client = worker_losing_a_reply
    work, queue = runtime.backend.work, runtime.backend.work.queue
    lease = make_lease("qcwy")
    runtime.registry.add(lease)
    dropper.drop_reply_to(sha(queue, "send"))
    for page in (1, 2):
        request = crawler.spider.page_request(lease, page)
        request.meta["farm_again"] = True  # asked for anew: no fingerprint would stop a second copy
        work.push(request)
    await work.flush().addTimeout(WAIT, reactor)
    assert dropper.dropped.is_set()
    assert client.zcard(queue.k("queue")) == 2 and queue.open_requests(lease.name) == 2
    assert scheduler.next_request() is None
    await until(lambda: len(scheduler.backend._buffer) == 2, 10, "the two requests")
    # the acknowledgement that leaves the keyword with nothing open: its reply lost, the keyword is
    # still looked at (else it stays crawling with nothing on its way)
    stalls = []
    monkeypatch.setattr(work, "check_stall", stalls.append)
    dropper.drop_reply_to(sha(queue, "send"))
    for page in (1, 2):
        work.settled(lease.key, page)
    await until(lambda: stalls, 10, "the keyword with nothing open to be looked at")
    assert dropper.dropped.is_set() and stalls == [lease.name]
    assert queue.open_requests(lease.name) == 0 and not client.zcard(queue.k("taken:" + queue.worker))


@pytest_twisted.ensureDeferred
async def test_an_inbox_read_and_an_adoption_whose_replies_are_lost_are_answered_again(worker_losing_a_reply, dropper):
    crawler, runtime, _, client = worker_losing_a_reply
    work, queue = runtime.backend.work, runtime.backend.work.queue
    link = work.link
    other = SharedQueue(client, crawler.spider, queue.key, "other", queue.dupefilter)
    await link.run(queue.hold, ["1:1"]).addTimeout(WAIT, reactor)
    other.ended("1:1", "failed")  # written into this worker's inbox
    dropper.drop_reply_to(sha(queue, "inbox"))
    assert await link.run(queue.inbox, 100, queue.new_call()).addTimeout(WAIT, reactor) == [("1:1", "failed")]
    assert dropper.dropped.is_set()
    # a worker that stopped, holding a keyword and a request: adopted once, by this one
    gone = SharedQueue(client, crawler.spider, queue.key, "gone", queue.dupefilter)
    gone.push_many([crawler.spider.page_request(make_lease("qcwy", id=2), 1)])
    gone.heartbeat()
    gone.hold(["2:1"])
    gone.pop_many(10)
    await deferLater(reactor, 0.05, lambda: None)
    dropper.drop_reply_to(sha(queue, "requeue_dead"))
    adopted = await link.run(queue.requeue_dead, 0.01, queue.new_call()).addTimeout(WAIT, reactor)
    assert dropper.dropped.is_set() and adopted == (1, ["2:1"], ["gone"])


@pytest_twisted.ensureDeferred
async def test_a_back_off_whose_reply_is_lost_backs_off_once(worker_losing_a_reply, dropper):
    _, runtime, _, _ = worker_losing_a_reply
    queue, link = runtime.backend.work.queue, runtime.backend.work.link
    dropper.drop_reply_to(sha(queue, "pace"))
    assert await link.run(queue.back_off, 2, 60, None, queue.new_call()).addTimeout(WAIT, reactor) == 2000
    assert dropper.dropped.is_set() and queue.server.hget(queue.k("pace"), "penalty") == b"2000"


@pytest_twisted.ensureDeferred
async def test_the_rebuild_lock_taken_again_after_a_lost_reply_is_the_workers_own_and_its_epoch_one(
    worker_losing_a_reply, dropper
):
    _, runtime, _, client = worker_losing_a_reply
    work = runtime.backend.work
    queue, link = work.queue, work.link
    dropper.drop_reply_to(queue.k("rebuild").encode())
    assert await link.run(queue.take_rebuild_lock, REBUILD_LOCK_SECONDS).addTimeout(WAIT, reactor)
    assert dropper.dropped.is_set()
    other = SharedQueue(client, runtime.crawler.spider, queue.key, "other", queue.dupefilter)
    assert not other.take_rebuild_lock(REBUILD_LOCK_SECONDS)  # another worker's is not
    dropper.drop_reply_to(queue.k("epoch").encode())
    assert await link.run(queue.new_epoch, "chosen-before", {}).addTimeout(WAIT, reactor) == "chosen-before"
    assert dropper.dropped.is_set() and client.get(queue.k("epoch")) == b"chosen-before"


@pytest_twisted.ensureDeferred
async def test_a_send_takes_at_most_its_share_of_batches_and_the_rest_follows(worker):
    # each batch is a call whose reply Redis keeps: a send made again after a lost reply needs them all
    crawler, runtime, _ = worker
    work = runtime.backend.work
    sends = []
    send = work._send
    work._send = lambda batches, calls: sends.append(len(batches)) or send(batches, calls)
    lease = make_lease("qcwy")
    for page in range(1, SEND_BATCHES + 10):
        work.push(crawler.spider.page_request(lease, page))
        work.ack(f"{page}")
    await until(lambda: sum(sends) == 2 * (SEND_BATCHES + 9), WAIT, "every batch to be sent")
    assert sends == [SEND_BATCHES, SEND_BATCHES, 18] and not work._ops


@pytest_twisted.ensureDeferred
async def test_a_keyword_its_owner_finds_ended_in_the_table_is_no_longer_listed_as_its_in_redis(worker, shared):
    # another worker fetched its last page and completed it in the keyword table; the owner, told to
    # look (nothing was open anywhere), finds it completed and settles it: Redis forgets whose it was
    crawler, runtime, scheduler = worker
    work, queue = runtime.backend.work, runtime.backend.work.queue
    [lease] = runtime.store.claim("qcwy", queue.worker, 1)
    runtime.registry.hold([lease])
    await work.flush().addTimeout(WAIT, reactor)
    server = redis.Redis.from_url(shared[0])
    try:
        assert server.hget(queue.k("owner"), lease.name) == queue.worker.encode()
        assert runtime.store.complete(lease)
        work.check_stall(lease.name)
        await until(lambda: lease.key not in runtime.registry.runs, 10, "the owner to settle the keyword")
        await work.flush().addTimeout(WAIT, reactor)
        assert server.hget(queue.k("owner"), lease.name) is None
        assert crawler.stats.get_value("farm/shared/ended_elsewhere") == 1
    finally:
        server.close()
