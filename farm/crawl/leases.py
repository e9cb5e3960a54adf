"""The keyword-lease downloader middleware: the door through which the spiders pull keyword leases.

It claims keywords from the store when the crawl opens and whenever a keyword
stops, keeping up to FARM_LEASES_IN_FLIGHT of them live, as the claim policy
(farm.crawl.claim_policy) decides; it drops the requests of a keyword this
process no longer crawls (the fence); and when the crawl closes early (Ctrl+C,
an error, CloseSpider) it has the registry release what it holds as
``partial``, after the progress of its fetched pages, so that the next claimer
resumes at the next unfinished page. The state writer process makes the claims
(CrawlParts.claim).

Its ``from_crawler`` hands it what it uses of the crawl's parts (farm.crawl.parts.CrawlParts): the
registry, the work backend (its peers, and whether the work is finished), the claim, the outbox to drain
before the releases, the way to close the crawl, why the crawl must close at once (if it must) and the
day's time zone.

With JOBDIR set, a crawl that resumes first takes back, at once, the keywords its
checkpoint says it held (KeywordRegistry.take_back); then it claims as usual.

It keeps the spider open while there is work and closes it when there is none.
"""

import logging
from collections.abc import Callable, Iterable, Mapping
from datetime import tzinfo
from typing import Any, Protocol, Self

from scrapy import Request, Spider
from scrapy import signals as scrapy_signals
from scrapy.crawler import Crawler
from scrapy.exceptions import DontCloseSpider, NotConfigured
from scrapy.utils.defer import maybe_deferred_to_future
from twisted.internet import reactor
from twisted.internet.defer import Deferred, DeferredList
from twisted.internet.interfaces import IDelayedCall
from twisted.python.failure import Failure

from farm import signals
from farm.crawl.backends.base import LeaseKey, WorkBackend
from farm.crawl.claim_policy import Seen, decide
from farm.crawl.keywordrun import KeywordRun, Outcome
from farm.crawl.meta import FarmMeta
from farm.crawl.needs import page_spider
from farm.crawl.outbox import Outbox
from farm.crawl.paging import KeywordPaging, LeaseLost
from farm.crawl.parts import CrawlParts, engine_slot
from farm.crawl.registry import KeywordRegistry
from farm.errors import BackendUnreachable
from farm.state.clock import utcnow
from farm.state.lease import Lease, Outlook

logger = logging.getLogger(__name__)


class ClaimsKeywords(Protocol):
    """A claim of up to ``wanted`` keywords of ``source`` for this crawler, off the reactor: the leases
    claimed, and when none, what there is to wait for (CrawlParts.claim)."""

    def __call__(
        self, source: str, wanted: int, skip: frozenset[int], held: frozenset[LeaseKey]
    ) -> Deferred[tuple[list[Lease], Outlook | None]]: ...


class KeywordLeaseMiddleware:
    def __init__(
        self,
        crawler: Crawler,
        in_flight: int,
        *,
        registry: KeywordRegistry,
        paging: KeywordPaging,
        backend: WorkBackend,
        claim: ClaimsKeywords,
        outbox: Outbox,
        close_crawl: Callable[[str], None],
        refused: str | None,
        tz: tzinfo,
    ):
        self.crawler = crawler
        self.in_flight = in_flight
        self.registry = registry
        self.paging = paging  # each keyword's first pages
        self.backend = backend  # its peers: the other processes sharing the work, if any
        self.claim = claim
        self.outbox = outbox  # drained before the releases, so that each page's progress goes first
        self.close_crawl = close_crawl
        self.refused = refused  # why the crawl must close at once (the JOBDIR holds another spider's checkpoint)
        self.tz = tz  # the day's time zone (FARM_TIMEZONE), for the log
        self.stats = crawler.stats
        self._claim: Deferred[Any] | None = None  # the Deferred of a claim under way
        self._none_left = False  # the last claim found nothing, and nothing to wait for
        self._later: IDelayedCall | None = None  # the timer of a claim put off (rows locked, or a retry not due)
        self._closing = False

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> Self:
        parts = crawler.get_extension(CrawlParts)
        if parts is None:
            raise NotConfigured("not a farm crawl: no keyword leases")
        in_flight = crawler.settings.getint("FARM_LEASES_IN_FLIGHT")
        if in_flight < 1:
            raise ValueError(f"FARM_LEASES_IN_FLIGHT must be at least 1, got {in_flight}")
        mw = cls(
            crawler,
            in_flight,
            registry=parts.registry,
            paging=parts.paging,
            backend=parts.backend,
            claim=parts.claim,
            outbox=parts.outbox,
            close_crawl=parts.close_crawl,
            refused=parts.refused,
            tz=parts.store.tz,
        )
        crawler.signals.connect(mw.spider_opened, signal=scrapy_signals.spider_opened)
        crawler.signals.connect(mw.spider_idle, signal=scrapy_signals.spider_idle)
        crawler.signals.connect(mw.spider_closed, signal=scrapy_signals.spider_closed)
        crawler.signals.connect(mw.keyword_ended, signal=signals.keyword_ended)
        return mw

    @property
    def runs(self) -> Mapping[LeaseKey, KeywordRun]:
        return self.registry.runs

    def process_request(self, request: Request) -> None:
        farm = FarmMeta.of(request)
        lease = farm.lease
        if lease is None:
            return None
        run = self.runs.get(lease.key)
        if run is None or not run.live:  # the scheduler drops these; a request that came another way
            self.stats.inc_value("farm/lease/dropped_requests")
            self.registry.give_up(lease, farm.page)
            raise LeaseLost(f"keyword {lease.id} is no longer crawled by this crawler (token {lease.lease_token})")
        return None

    def spider_opened(self, spider: Spider) -> None:
        if self.refused is not None:
            self._closing = True
            self.close_crawl("farm_checkpoint_refused")
            return
        taking_back = self.registry.take_back()
        if taking_back is None:
            self._refill()
            return
        self._claim = taking_back
        self._claim.addCallback(self._crawl)
        self._claim.addErrback(self._claim_failed)

    def spider_idle(self, spider: Spider) -> None:
        self.registry.collect_orphans()
        if self._claim is not None or self.runs or self._later is not None:
            raise DontCloseSpider
        if not self._none_left:
            self._refill()
            raise DontCloseSpider
        if not self.backend.is_finished():
            # other workers still hold requests of this site, or take keywords on: should one of them
            # stop, this worker takes its requests and keywords over. Look again now: done, it closes
            # at once.
            self._nothing_claimed(Outlook(0, None))
            raise DontCloseSpider

    def keyword_ended(self, lease: Lease, outcome: Outcome, spider: Spider) -> None:
        self._none_left = False  # a failed keyword may be claimable again
        self._refill()  # its place goes to another

    def _seen(self, closing: bool, **seen: Any) -> Seen:
        live = sum(1 for run in self.runs.values() if run.live and run.owned)
        return Seen(self.in_flight, live, len(self.runs), self._claim is not None, closing, **seen)

    def _refill(self) -> None:
        decision = decide(self._seen(self._closing or self._engine_closing()))
        if decision.action != "claim":
            return
        if self._later is not None:
            if self._later.active():
                self._later.cancel()
            self._later = None
        spider = page_spider(self.crawler)
        # what this crawl holds, as it stands now: one claim at a time, each registered before the next
        args = (spider.name, decision.count, self.registry.given_up, frozenset(self.runs))
        self._claim = self.backend.peers.claiming()
        self._claim.addCallback(lambda _: self.claim(*args))
        self._claim.addCallback(self._claimed)
        self._claim.addErrback(self._claim_failed)

    def _engine_closing(self) -> bool:
        """The crawl is closing (a pause, an error): what is in flight finishes, nothing new is claimed."""
        slot = engine_slot(self.crawler)
        return slot is not None and slot.closing is not None

    def _claimed(self, result: tuple[list[Lease], Outlook | None]) -> None:
        self._claim = None
        leases, outlook = result
        self.stats.inc_value("farm/lease/claimed", len(leases))
        # every claimed lease becomes a run, even while closing: spider_closed releases it
        new = self.registry.hold(leases)
        if not leases:
            self._nothing_claimed(outlook)
            return
        spider = page_spider(self.crawler)
        for lease in leases:
            self.stats.inc_value(f"farm/lease/claimed/{lease.from_status}")
            logger.info(
                "farm: claimed %s %s/%s (#%s, %s, from page %s)",
                spider.name,
                lease.city,
                lease.job,
                lease.id,
                lease.from_status,
                lease.start_page,
            )
        self._crawl([request for lease in new for request in self.paging.first_requests(lease)])

    def _crawl(self, requests: Iterable[Request]) -> None:
        self._claim = None
        if self._closing:
            return
        for request in requests:
            self.crawler.engine.crawl(request)
        # keywords that ended while this claim was under way left places it did not ask for
        self._refill()

    def _nothing_claimed(self, outlook: Outlook | None) -> None:
        decision = decide(self._seen(self._closing, outlook=outlook, now=utcnow(), others_busy=self._others()))
        if decision.action == "hold":
            return
        if decision.action == "wait":
            if decision.why == "busy":  # other crawlers hold those rows locked for a moment (SKIP LOCKED)
                self.stats.inc_value("farm/lease/claim_busy")
            else:
                # a wait for a retry: decide saw the outlook's next retry
                assert outlook is not None and outlook.next_retry_at is not None
                logger.info(
                    "farm: no %s keyword to claim now; the next failed one may be retried at %s (in %.0fs)",
                    page_spider(self.crawler).name,
                    outlook.next_retry_at.astimezone(self.tz).strftime("%H:%M:%S"),
                    decision.seconds - 0.01,
                )
                self.stats.inc_value("farm/lease/waiting_for_retry")
            self._later = reactor.callLater(decision.seconds, self._claim_again)
            return
        self._none_left = True
        self.stats.inc_value("farm/lease/none_left")
        if decision.action == "finish":
            # every request belongs to a lease: with none held, the crawl is done now, not at
            # Scrapy's next idle check (up to 5 s away)
            self._crawl_done()
        elif decision.action == "ask_others":  # shared: once no other worker holds work
            self.backend.peers.look(self._others_busy)

    def _others(self) -> bool | None:
        """Whether other processes hold work; None: to be looked up (``ask_others``)."""
        return self.backend.peers.busy()

    def _others_busy(self, busy: bool) -> None:
        seen = self._seen(self._closing, outlook=Outlook(0, None), others_busy=busy)
        if self._none_left and decide(seen).action == "finish":
            self._crawl_done()

    def _crawl_done(self) -> None:
        logger.info("farm: no %s keyword left to claim for today", page_spider(self.crawler).name)
        self.close_crawl("finished")

    def _claim_again(self) -> None:
        self._later = None
        self._refill()

    def _claim_failed(self, failure: Failure) -> None:
        self._claim = None
        self.stats.inc_value("farm/lease/claim_error")
        logger.error("farm: claiming keywords failed: %s", failure.getErrorMessage())
        error = failure.value
        self.close_crawl(error.close_reason if isinstance(error, BackendUnreachable) else "farm_db_error")

    async def spider_closed(self, spider: Spider, reason: str) -> None:
        self._closing = True
        if self._later is not None and self._later.active():
            self._later.cancel()
        self._later = None
        try:
            if self._claim is not None:
                await maybe_deferred_to_future(DeferredList([self._claim], consumeErrors=True))
            # keywords being taken on (adopted, with Redis) become runs first, released below
            await maybe_deferred_to_future(self.backend.peers.closing())
            # the progress of every page fetched goes before the releases
            await maybe_deferred_to_future(self.outbox.drain())
            await self.registry.release(reason)
        finally:
            self.registry.given_back.happened()  # the run table is written after this (farm.extensions.runs)
