"""The crawl's link to Redis on the machine's real Redis."""

import pytest
import pytest_twisted
import redis
from twisted.internet import reactor

from farm.shared.link import RedisLink
from tests.conftest import REDIS_URL

pytestmark = pytest.mark.redis


@pytest_twisted.ensureDeferred
async def test_the_links_commands_go_over_its_one_connection_without_a_pool_checkout(monkeypatch):
    # a pooled command first polls its socket for pending data: one more system call a command, after
    # each of which the link's thread waits for the GIL of a busy crawl
    checkouts = []
    get_connection = redis.ConnectionPool.get_connection
    monkeypatch.setattr(redis.ConnectionPool, "get_connection",
                        lambda pool, *a, **k: checkouts.append(pool) or get_connection(pool, *a, **k))  # fmt: skip
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
