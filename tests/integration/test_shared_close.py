"""A Redis-mode worker as it closes, on the machine's real Redis: what it leaves listed, and that it
starts no keyword-table work once closing."""

import pytest
import pytest_twisted
import redis
from twisted.internet.defer import Deferred

from farm.crawl.backends.redis.dupefilter import DayDupeFilter
from farm.crawl.backends.redis.queue import SharedQueue
from farm.crawl.parts import CrawlParts
from farm.state.clock import utcnow
from tests.integration.test_shared_scheduler import crawler_sharing_work
from tests.unit.spider_helpers import make_lease

pytestmark = pytest.mark.redis


@pytest.fixture
def worker(sqlite_url, shared):
    """(crawler, its runtime) of a worker in Redis mode that has joined the shared work, not crawling."""
    redis_url, prefix = shared
    crawler = crawler_sharing_work(sqlite_url, [("qcwy", "北京", "python")], redis_url, prefix)
    runtime = crawler.get_extension(CrawlParts)
    yield crawler, runtime
    runtime.close()


def survivor(crawler, shared, name="survivor"):
    server = redis.Redis.from_url(shared[0])
    key = f"{shared[1]}:qcwy"
    dupefilter = DayDupeFilter(server, f"{key}:seen", crawler.get_extension(CrawlParts).store.tz, utcnow)
    return SharedQueue(server, crawler.spider, key, name, dupefilter)


@pytest_twisted.ensureDeferred
async def test_a_worker_that_could_not_release_its_keywords_stays_listed_for_a_survivor_to_take_them(worker, shared):
    crawler, runtime = worker
    work = runtime.backend.work
    await work.start()
    await work.closing()  # as the crawl closes: the adoption its start began has listed what it took
    work.keep_listed()
    await work.leave()

    other = survivor(crawler, shared)
    me = work.queue.worker
    assert other.server.zscore(other.k("live"), me) is not None  # still listed, its heartbeat stopped
    assert other.server.sismember(other.k("taking:" + me), me)
    _, _, look_up = other.requeue_dead(0)  # silent for any time at all
    assert look_up == [me]  # the survivor looks up in the keyword table what it holds
    other.server.close()


@pytest_twisted.ensureDeferred
async def test_a_worker_that_released_everything_leaves_the_live_set(worker, shared):
    crawler, runtime = worker
    work = runtime.backend.work
    await work.start()
    await work.closing()
    await work.leave()
    other = survivor(crawler, shared)
    assert other.server.zscore(other.k("live"), work.queue.worker) is None
    assert other.requeue_dead(0) == (0, [], [])
    other.server.close()


def test_a_closing_worker_reads_no_keyword_progress_and_a_late_failure_closes_nothing(worker, monkeypatch):
    crawler, runtime = worker
    work = runtime.backend.work
    lease = make_lease("qcwy")
    runtime.registry.add(lease, owned=True)
    reads = []
    # the database thread, as the worker sees it: what it is asked to run (never answered here)
    monkeypatch.setattr(work, "run_db", lambda function, *args: reads.append(function.__name__) or Deferred())
    work.check_stall(lease.name)
    assert reads == ["lease_progress"]  # a live worker looks
    work.closing()
    work.check_stall(lease.name)  # an acknowledgement sent at the close left nothing open
    assert reads == ["lease_progress"]
    runtime.close_crawl("farm_db_error")  # the engine never opened a spider: nothing to close, no error
