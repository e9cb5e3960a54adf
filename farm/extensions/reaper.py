"""Keep this crawl's leases alive, and take back the leases of dead crawlers.

Every tick it heartbeats the leases this process holds (a keyword whose pages
are still queued is alive even if none finished lately) and reaps the rows of
other crawlers that have sent no heartbeat for FARM_LEASE_TIMEOUT: they become
``partial``, and whoever claims them next resumes at their next unfinished page.
"""

import logging
from typing import Any

from scrapy import signals
from scrapy.exceptions import NotConfigured
from twisted.internet.defer import Deferred
from twisted.internet.task import LoopingCall

from farm.config import FarmConfig
from farm.crawl.parts import FarmExtension

logger = logging.getLogger(__name__)


class LeaseReaper(FarmExtension):
    def __init__(self, crawler, interval: float):
        self.crawler = crawler
        self.interval = interval
        self.stats = crawler.stats
        self._task = LoopingCall(self.tick)
        self._running: Deferred[Any] | None = None

    @classmethod
    def from_crawler(cls, crawler):
        cls.require_farm_spider(crawler)
        config = FarmConfig.of(crawler)
        if config.reap_interval <= 0:
            raise NotConfigured("FARM_REAP_INTERVAL is 0: no heartbeats and no reaping")
        # heartbeats must come well inside the timeout, or live leases would be reaped
        ext = cls(crawler, min(config.reap_interval, config.lease_timeout / 3))
        crawler.signals.connect(ext.spider_opened, signal=signals.spider_opened)
        crawler.signals.connect(ext.spider_closed, signal=signals.spider_closed)
        return ext

    def spider_opened(self, spider):
        self._task.start(self.interval, now=True)

    def spider_closed(self, spider):
        if self._task.running:
            self._task.stop()
        return self._running

    def tick(self):
        if self._running is not None:
            return  # the last tick is still on the DB thread
        # its own keywords only: another worker's, shared through Redis, are that worker's to keep alive
        leases = [run.lease for run in self.parts.registry.runs.values() if run.owned and not run.over]
        self._running = self.parts.run(self._heartbeat_and_reap, leases)
        self._running.addCallbacks(self._done, self._failed)

    def _heartbeat_and_reap(self, leases):
        store = self.parts.store
        beaten = sum(1 for lease in leases if store.heartbeat(lease))
        return beaten, store.reap()

    def _done(self, result):
        self._running = None
        beaten, reaped = result
        self.stats.inc_value("farm/lease/heartbeats", beaten)
        if reaped:
            self.stats.inc_value("farm/lease/reaped", reaped)
            logger.info("farm: %d stale lease(s) turned partial", reaped)

    def _failed(self, failure):
        self._running = None
        self.stats.inc_value("farm/lease/reap_error")
        logger.error("farm: heartbeat/reap failed: %s", failure.getErrorMessage())
