"""Identities' turns and learned paces shared through the machine's real Redis, each test under its own keys."""

import uuid

import pytest
import pytest_twisted
import redis
from twisted.internet import defer

from farm.crawl.backends.redis.identities import ASKING, SharedIdentities, SharedIdentityPace
from farm.crawl.backends.redis.link import RedisLink
from tests.conftest import REDIS_URL

pytestmark = pytest.mark.redis
RATE = 2.0  # one request every 0.5 s on average, each gap from 0.25 to 0.75 s


@pytest.fixture
def prefix():
    prefix = f"farm-test-{uuid.uuid4().hex[:10]}:qcwy"
    yield prefix
    client = redis.Redis.from_url(REDIS_URL)
    keys = list(client.scan_iter(f"{prefix}:*"))
    if keys:
        client.delete(*keys)
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


def pace(link, prefix, woken, identity="proxy-a", learned=None):
    return SharedIdentityPace(
        RATE,
        1.0,
        8.0,
        learned,
        identity=identity,
        link=link,
        key=f"{prefix}:identities:turns",
        learned_key=f"{prefix}:identities:learned",
        wake=woken.callback,
    )


class Woken:
    def __init__(self):
        self.deferred = defer.Deferred()

    def callback(self):
        if not self.deferred.called:
            self.deferred.callback(None)


async def turn(pace, woken):
    """Seconds until this worker's next turn through the identity, as Redis gave it."""
    assert pace.wait() == ASKING  # none held: it asks Redis, and waits for the answer
    await woken.deferred
    woken.deferred = defer.Deferred()
    return pace.turn - pace.clock()


@pytest_twisted.ensureDeferred
async def test_two_workers_turns_through_one_identity_are_spaced_by_its_pace(prefix, links):
    one_woken, other_woken = Woken(), Woken()
    one, other = pace(links(), prefix, one_woken), pace(links(), prefix, other_woken)
    first = await turn(one, one_woken)
    assert first <= 0.01 and one.wait() == 0  # the identity's first turn: now
    one.taken()
    second = await turn(other, other_woken)
    assert 0.2 <= second <= 0.76  # the other worker's turn a jittered gap later, not now
    other.taken()
    third = await turn(one, one_woken)
    assert third - second >= 0.2  # and the next after that, whoever asks
    elsewhere_woken = Woken()
    elsewhere = pace(links(), prefix, elsewhere_woken, identity="proxy-b")
    assert await turn(elsewhere, elsewhere_woken) <= 0.01  # another identity keeps its own turns


@pytest_twisted.ensureDeferred
async def test_a_pace_one_worker_learns_reaches_another_with_its_next_turn(prefix, links):
    one_woken, other_woken = Woken(), Woken()
    one, other = pace(links(), prefix, one_woken), pace(links(), prefix, other_woken)
    one.slowed()  # a refusal through the identity, at this worker
    await one.share()
    await turn(other, other_woken)
    assert other.learned == one.learned == RATE / 2 and other.interval == 1.0


@pytest_twisted.ensureDeferred
async def test_a_learned_pace_written_by_one_worker_is_where_a_later_one_starts(prefix, links):
    key = f"{prefix}:identities:learned"
    link = links()
    first = SharedIdentities(None, lambda identity: pace(link, prefix, Woken(), identity), link, key)
    [identity] = first
    identity.pace.learn(0.5)
    first.learned(identity)
    await link.run(lambda: None)  # the write is in Redis (the link is first in, first out)
    later_link = links()
    later = SharedIdentities(None, lambda identity: pace(later_link, prefix, Woken(), identity), later_link, key)
    assert [i.pace.learned for i in later] == [0.5]
