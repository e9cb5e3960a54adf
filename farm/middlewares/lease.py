"""The keyword-lease downloader middleware: which keywords this process crawls.

It claims keywords from the store when the crawl opens and whenever a keyword
ends, keeping up to FARM_LEASES_IN_FLIGHT of them in flight; it drops the
requests of a lease this process no longer holds; it does not reclaim a
keyword it gave up on for a site block (the next run, or another crawler, will); it keeps the spider open
while there is work and lets it close when none is left; and when the crawl
closes early (Ctrl+C, an error, CloseSpider) it releases what it holds as
``partial``, so that the next claimer resumes at the next unfinished page.
"""

import logging

from scrapy import signals as scrapy_signals
from scrapy.exceptions import DontCloseSpider
from scrapy.utils.defer import maybe_deferred_to_future
from twisted.internet.defer import DeferredList

from farm import signals
from farm.runtime import FarmRuntime
from farm.spiders.base import LeaseLost

logger = logging.getLogger(__name__)


class KeywordLeaseMiddleware:
    def __init__(self, crawler, runtime: FarmRuntime, in_flight: int):
        self.crawler = crawler
        self.runtime = runtime
        self.store = runtime.store
        self.held = runtime.leases
        self.window = runtime.window
        self.in_flight = in_flight
        self.stats = crawler.stats
        self._claim = None  # the Deferred of a claim under way
        self._none_left = False  # the last claim found nothing
        self._closing = False
        self.blocked: set[int] = set()  # keywords released for a block: not reclaimed by this crawl

    @classmethod
    def from_crawler(cls, crawler):
        runtime = FarmRuntime.of(crawler)
        in_flight = crawler.settings.getint("FARM_LEASES_IN_FLIGHT")
        if in_flight < 1:
            raise ValueError(f"FARM_LEASES_IN_FLIGHT must be at least 1, got {in_flight}")
        mw = cls(crawler, runtime, in_flight)
        crawler.signals.connect(mw.spider_opened, signal=scrapy_signals.spider_opened)
        crawler.signals.connect(mw.spider_idle, signal=scrapy_signals.spider_idle)
        crawler.signals.connect(mw.spider_closed, signal=scrapy_signals.spider_closed)
        crawler.signals.connect(mw.lease_ended, signal=signals.lease_ended)
        crawler.signals.connect(mw.keyword_blocked, signal=signals.keyword_blocked)
        return mw

    async def process_request(self, request):
        lease = request.meta.get("farm_lease")
        if lease is None:
            return None
        self._check_held(lease)
        if len(self.window) >= self.window.size:
            self.stats.inc_value("farm/window/full")
        await self.window.enter(lease.key, request.meta["farm_page"])
        self._check_held(lease)  # it may have ended while the request waited
        return None

    def _check_held(self, lease):
        if lease.key not in self.held:
            self.stats.inc_value("farm/lease/dropped_requests")
            raise LeaseLost(f"keyword {lease.id} is no longer held by this crawler (token {lease.lease_token})")

    def spider_opened(self, spider):
        self._refill()

    def spider_idle(self, spider):
        if self._claim is not None or self.held:
            raise DontCloseSpider
        if not self._none_left:
            self._refill()
            raise DontCloseSpider

    def keyword_blocked(self, lease, reason, spider):
        # Noted in the same signal dispatch that queues its release: a claim queued later
        # skips it, and one queued earlier runs first (one FIFO DB thread) and finds it crawling.
        self.blocked.add(lease.id)

    def lease_ended(self, lease, outcome, spider):
        self.window.leave_lease(lease.key)
        if self.held.pop(lease.key, None) is None:
            return
        self._none_left = False  # a failed keyword may be claimable again at once
        self._refill()

    def _refill(self):
        wanted = self.in_flight - len(self.held)
        if self._claim is not None or self._closing or wanted <= 0:
            return
        spider = self.crawler.spider
        self._claim = self.runtime.run(
            self.store.claim, spider.name, self.runtime.crawler_id, wanted, skip_partial=frozenset(self.blocked)
        )
        self._claim.addCallback(self._claimed, spider)
        self._claim.addErrback(self._claim_failed, spider)

    def _claimed(self, leases, spider):
        self._claim = None
        self.stats.inc_value("farm/lease/claimed", len(leases))
        if not leases:
            self._none_left = True
            self.stats.inc_value("farm/lease/none_left")
            if not self.held and not self._closing:
                # every request belongs to a lease: with none held, the crawl is done now,
                # not at Scrapy's next idle check (up to 5 s away)
                logger.info("farm: no %s keyword left to claim for today", spider.name)
                self.runtime.close_crawl("finished")
            return
        for lease in leases:
            self.stats.inc_value(f"farm/lease/claimed/{lease.from_status}")
            if self._closing:
                continue  # held until spider_closed releases it
            logger.info(
                "farm: claimed %s %s/%s (#%s, %s, from page %s)",
                spider.name, lease.city, lease.job, lease.id, lease.from_status, lease.start_page,
            )
        for lease in leases:
            self.held[lease.key] = lease
        if self._closing:
            return
        for lease in leases:
            for request in spider.lease_requests(lease):
                self.crawler.engine.crawl(request)
        # leases that ended while this claim was under way left slots it did not ask for
        self._refill()

    def _claim_failed(self, failure, spider):
        self._claim = None
        self.stats.inc_value("farm/lease/claim_error")
        logger.error("farm: claiming keywords failed: %s", failure.getErrorMessage())
        self.runtime.close_crawl("farm_db_error")

    async def spider_closed(self, spider, reason):
        self._closing = True
        pending = [self._claim] if self._claim is not None else []
        # page progress still on its way must land before its lease is released
        pending.append(self.runtime.outbox.drain())
        await maybe_deferred_to_future(DeferredList(pending, consumeErrors=True))
        leases = list(self.held.values())
        self.held.clear()
        if not leases:
            return
        logger.info("farm: releasing %d keyword(s) as partial (crawl closed: %s)", len(leases), reason)
        self.stats.inc_value("farm/lease/released", len(leases))
        why = f"crawl closed before the keyword was done ({reason})"
        releases = [self.runtime.run(self.store.release, lease, why) for lease in leases]
        await maybe_deferred_to_future(DeferredList(releases, consumeErrors=True))
