"""The proxy quarantine shared through the machine's real Redis, each test under its own key prefix."""

import uuid

import pytest
import pytest_twisted
import redis
from twisted.internet import reactor
from twisted.internet.task import deferLater

from farm.crawl.backends.redis.link import RedisLink
from farm.crawl.backends.redis.proxies import REFRESH, SharedProxyPool
from farm.crawl.proxies import parse_proxies
from tests.conftest import REDIS_URL

pytestmark = pytest.mark.redis
PROXIES = parse_proxies("http://alice:s3cret@10.0.0.1:3128,http://10.0.0.2:3128")
QUARANTINE = 2.0  # seconds


@pytest.fixture
def key():
    key = f"farm-test-{uuid.uuid4().hex[:10]}:qcwy:proxies:quarantined"
    yield key
    client = redis.Redis.from_url(REDIS_URL)
    client.delete(key)
    client.close()


@pytest.fixture
def links():
    made = []

    def link():
        made.append(RedisLink(REDIS_URL, grace=5))
        made[-1].start()
        return made[-1]

    yield link
    for link in made:
        link.close()


def used(pool, n=4):
    return [pool.next()[0].url for _ in range(n)]


@pytest_twisted.ensureDeferred
async def test_a_quarantine_written_by_one_worker_reaches_the_others_copy_within_a_refresh(key, links):
    one, other = SharedProxyPool(PROXIES, 60, links(), key), SharedProxyPool(PROXIES, 60, links(), key)
    assert used(other) == [p.url for p in PROXIES] * 2
    other.engine_started()  # its refresh loop
    try:
        assert one.quarantine(PROXIES[0].id, "http_403")
        assert used(one, 2) == [PROXIES[1].url] * 2  # at once in the worker that drew the block
        for _ in range(int(3 * REFRESH / 0.05)):  # then in the other's copy, within a refresh or so
            if used(other, 2) == [PROXIES[1].url] * 2:
                break
            await deferLater(reactor, 0.05, lambda: None)
        assert used(other, 2) == [PROXIES[1].url] * 2
        assert 57 <= other.until[PROXIES[0].id] - other.clock() <= 60  # what was left when it read
    finally:
        other.engine_stopped()
    client = redis.Redis.from_url(REDIS_URL)
    assert client.zrange(key, 0, -1) == [PROXIES[0].id.encode()]  # a hash, no credentials
    assert 55_000 <= client.pttl(key) <= 60_000  # the key goes with its last quarantine
    client.close()


@pytest_twisted.ensureDeferred
async def test_a_worker_starting_later_knows_the_quarantine_before_its_first_request(key, links):
    one = SharedProxyPool(PROXIES, 60, links(), key)
    one.quarantine(PROXIES[1].id, "http_403")
    await one.link.run(lambda: None)  # the write is in Redis (the link is first in, first out)
    late = SharedProxyPool(PROXIES, 60, links(), key)
    assert used(late) == [PROXIES[0].url] * 4


@pytest_twisted.ensureDeferred
async def test_a_quarantine_ended_in_redis_ends_in_every_copy(key, links):
    # long enough that a loaded machine still reads the quarantine before it ends
    pool = SharedProxyPool(PROXIES, QUARANTINE, links(), key)
    pool.quarantine(PROXIES[0].id, "http_403")
    await pool.link.run(lambda: None)
    late = SharedProxyPool(PROXIES, QUARANTINE, links(), key)
    assert used(late, 2) == [PROXIES[1].url] * 2
    await deferLater(
        reactor, QUARANTINE + 0.05, lambda: None
    )  # the quarantine's own length, not a wait for a condition
    await late.refresh()
    assert used(late) == [p.url for p in PROXIES] * 2
    assert await late.link.run(late.quarantined) == []
