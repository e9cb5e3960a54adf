"""The proxy quarantine every worker shares (FARM_PROXIES with FARM_REDIS_URL).

A proxy one worker finds blocked is blocked for all: the quarantine lives in Redis,
in ``<FARM_REDIS_PREFIX>:<site>:proxies:quarantined`` (zset: proxy id -> until, in
ms of Redis' clock). Ids are hashes of the proxy URLs (farm.crawl.proxies.Proxy): no
credentials are stored in Redis.

Choosing a proxy stays local and costs no round trip: each worker keeps its own
round robin over a copy of the quarantined set, refreshed every REFRESH seconds on
the Redis link's thread (farm.crawl.backends.redis.link), and puts its own quarantines in the
copy at once before writing them through the link. Redis answers the time each
quarantine has left, not its end, so clocks that differ between machines do not
matter. A worker reads the set once when it starts (blocking, beside the link's
own ping), so it never sends a request through a proxy another worker quarantined.
"""

from __future__ import annotations

import logging
from importlib.resources import files
from typing import TYPE_CHECKING, Any

from scrapy import signals
from twisted.internet.task import LoopingCall

from farm.crawl.proxies import Proxy, ProxyPool

if TYPE_CHECKING:
    from scrapy.crawler import Crawler
    from scrapy.statscollectors import StatsCollector
    from twisted.internet.defer import Deferred
    from twisted.python.failure import Failure

    from farm.crawl.backends.redis.link import RedisLink
    from farm.crawl.backends.redis.membership import SharedWork

logger = logging.getLogger(__name__)

# Seconds between reads of the shared quarantine: how late a worker may learn of another's.
REFRESH = 1.0


class SharedProxyPool(ProxyPool):
    def __init__(
        self,
        proxies: list[Proxy],
        quarantine_seconds: float,
        link: RedisLink,
        key: str,
        stats: StatsCollector | None = None,
        **kwargs: Any,
    ) -> None:
        super().__init__(proxies, quarantine_seconds, stats, **kwargs)
        self.link = link
        self.key = key
        source = files("farm.crawl.backends.redis") / "scripts"
        self._write = link.server.register_script((source / "proxy_quarantine.lua").read_text())
        self._read = link.server.register_script((source / "proxy_quarantined.lua").read_text())
        self._refreshing = False
        self._loop = LoopingCall(self.refresh)
        self.learned(self.quarantined())  # before the first request: what other workers quarantined

    @classmethod
    def for_crawl(
        cls, crawler: Crawler, proxies: list[Proxy], quarantine_seconds: float, shared: SharedWork
    ) -> SharedProxyPool:
        pool = cls(proxies, quarantine_seconds, shared.link, shared.queue.k("proxies:quarantined"), crawler.stats)
        crawler.signals.connect(pool.engine_started, signal=signals.engine_started)
        crawler.signals.connect(pool.engine_stopped, signal=signals.engine_stopped)
        return pool

    def engine_started(self) -> None:
        self._loop.start(REFRESH, now=False)

    def engine_stopped(self) -> None:
        if self._loop.running:
            self._loop.stop()

    def quarantine(self, proxy_id: str | None, why: str, seconds: float | None = None) -> bool:
        if seconds is None:
            seconds = self.quarantine_seconds
        if not super().quarantine(proxy_id, why, seconds):
            return False
        assert proxy_id is not None  # quarantined above: a proxy of this pool
        d = self.link.run(self._write, keys=[self.key], args=[proxy_id, int(seconds * 1000)])
        d.addErrback(self._failed, "writing a proxy's quarantine")
        return True

    # --- the copy of the shared quarantine ------------------------------------------------

    def quarantined(self) -> list[tuple[str, float]]:
        """(proxy id, seconds left) of every proxy quarantined now. Blocking: on the link's thread."""
        out = self._read(keys=[self.key])
        return [(out[i].decode(), int(out[i + 1]) / 1000) for i in range(0, len(out), 2)]

    def learned(self, quarantined: list[tuple[str, float]]) -> None:
        now = self.clock()
        for proxy_id, left in quarantined:
            if proxy_id in self.by_id and self.until.get(proxy_id, 0.0) < now + left:
                self.until[proxy_id] = now + left

    def refresh(self) -> Deferred[None] | None:
        """Read the shared quarantine into the copy, on the link's thread; a Deferred (None: a read is
        under way)."""
        if self._refreshing:  # the link is slow (an outage): one read at a time
            return None
        self._refreshing = True
        d = self.link.run(self.quarantined).addCallback(self.learned)
        d.addErrback(self._failed, "reading the proxies' quarantine")
        d.addBoth(self._refreshed)
        return d

    def _refreshed(self, _: object) -> None:
        self._refreshing = False

    def _failed(self, failure: Failure, what: str) -> None:
        # the link rides out an outage for FARM_OUTAGE_GRACE and the shared work then closes the crawl;
        # the local copy goes on meanwhile
        self._inc("farm/proxy/redis_errors")
        logger.warning("farm: %s failed: %s", what, failure.getErrorMessage())
