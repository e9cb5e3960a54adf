"""The crawl's link to Redis on the machine's real Redis."""

from urllib.parse import urlsplit

import pytest
import pytest_twisted
import redis
from twisted.internet import reactor
from twisted.internet.task import deferLater

from farm.crawl.backends.redis.link import RedisLink, RedisUnreachable
from tests.conftest import REDIS_URL
from tests.relay import Relay

pytestmark = pytest.mark.redis
REDIS = urlsplit(REDIS_URL)


def relay_to_redis() -> Relay:
    """A relay in front of the tests' Redis: stopping it is Redis going away."""
    return Relay((REDIS.hostname, REDIS.port or 6379)).start()


def through(relay: Relay, password: str = "") -> str:
    return f"redis://:{password}@127.0.0.1:{relay.port}{REDIS.path}"


@pytest_twisted.ensureDeferred
async def test_the_links_commands_go_over_its_one_connection_without_a_pool_checkout(monkeypatch):
    # a pooled command first polls its socket for pending data: one more system call a command, after
    # each of which the link's thread waits for the GIL of a busy crawl
    checkouts = []
    get_connection = redis.ConnectionPool.get_connection
    monkeypatch.setattr(
        redis.ConnectionPool,
        "get_connection",
        lambda pool, *a, **k: checkouts.append(pool) or get_connection(pool, *a, **k),
    )
    link = RedisLink(REDIS_URL, grace=5)
    link.start()
    try:
        made = len(checkouts)  # the connection itself, made as the link is
        assert made <= 1
        for _ in range(5):
            assert await link.run(link.server.ping).addTimeout(30, reactor)
        assert len(checkouts) == made
    finally:
        link.close()


@pytest_twisted.ensureDeferred
async def test_the_links_one_connection_is_made_again_after_redis_went_away_for_a_while():
    # the link's connection drops with Redis; a command waits for it, within FARM_OUTAGE_GRACE
    relay = relay_to_redis()
    link = RedisLink(through(relay), grace=20)
    link.start()
    try:
        assert await link.run(link.server.ping).addTimeout(30, reactor)
        relay.stop()  # the connection drops, new ones are refused
        answered = link.run(link.server.ping)
        await deferLater(reactor, 1.5, lambda: None)  # Redis away for a while: the command waits
        assert not answered.called
        relay.restart()
        assert await answered.addTimeout(30, reactor)
        assert await link.run(link.server.ping).addTimeout(30, reactor)
    finally:
        relay.stop()
        link.close()


@pytest_twisted.ensureDeferred
async def test_redis_away_for_longer_than_the_grace_fails_the_command_with_the_reason():
    relay = relay_to_redis()
    link = RedisLink(through(relay, password="s3cret"), grace=1)
    link.start()
    try:
        relay.stop()
        with pytest.raises(RedisUnreachable, match=r"unreachable for FARM_OUTAGE_GRACE \(1s\)") as failed:
            await link.run(link.server.ping).addTimeout(30, reactor)
        assert "s3cret" not in str(failed.value)
    finally:
        relay.stop()
        link.close()
