"""The keyword-lease downloader middleware: which keywords this process crawls.

It claims keywords from the store when the crawl opens and whenever a keyword
stops asking for pages, keeping up to FARM_LEASES_IN_FLIGHT of them live; it
drops the requests of a keyword this process no longer crawls; it does not
reclaim, in the same crawl, a keyword it gave up for a site block or an outage
(the next run, or another crawler, will); and when the crawl closes early
(Ctrl+C, an error, CloseSpider) it releases what it holds as ``partial``, after
the progress of its fetched pages, so that the next claimer resumes at the next
unfinished page. The state writer process makes the claims (FarmRuntime.claim).

With JOBDIR set, a crawl that resumes first takes back, at once, the keywords its
checkpoint says it held (farm.state.store.KeywordStore.take_back), with the pages
it had asked for and not recorded; then it claims as usual.

It keeps the spider open while there is work and closes it when there is none:
an empty claim is not the end while the store still counts claimable rows
(SKIP LOCKED hides rows other crawlers are claiming), and failed keywords
waiting out FARM_RETRY_DELAY are waited for.
"""

import logging

from scrapy import signals as scrapy_signals
from scrapy.exceptions import DontCloseSpider
from scrapy.utils.defer import maybe_deferred_to_future
from twisted.internet import reactor
from twisted.internet.defer import DeferredList

from farm import signals
from farm.keywordrun import KeywordRun
from farm.runtime import FarmRuntime
from farm.shared.link import RedisUnreachable
from farm.spiders.base import LeaseLost
from farm.state.claims import Outlook
from farm.state.clock import utcnow

logger = logging.getLogger(__name__)

# Seconds before claiming again when rows are claimable but were all locked by other claimers.
CLAIM_BUSY_DELAY = 0.5
# Times a keyword's pages may be found lost inside the crawl (see spider_idle) before it fails.
ORPHAN_ROUNDS = 3


class KeywordLeaseMiddleware:
    def __init__(self, crawler, runtime: FarmRuntime, in_flight: int):
        self.crawler = crawler
        self.runtime = runtime
        self.store = runtime.store
        self.window = runtime.window
        self.in_flight = in_flight
        self.stats = crawler.stats
        self._claim = None  # the Deferred of a claim under way
        self._none_left = False  # the last claim found nothing, and nothing to wait for
        self._later = None  # the timer of a claim put off (rows locked, or a retry not due)
        self._closing = False
        self.skip: set[int] = set()  # keywords given up for a block or an outage: not reclaimed by this crawl

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
        crawler.signals.connect(mw.keyword_end, signal=signals.keyword_end)
        crawler.signals.connect(mw.lease_ended, signal=signals.lease_ended)
        return mw

    @property
    def runs(self):
        return self.runtime.runs

    def process_request(self, request):
        lease = request.meta.get("farm_lease")
        if lease is None:
            return None
        run = self.runs.get(lease.key)
        if run is None or not run.live:  # the scheduler drops these; a request that came another way
            self.stats.inc_value("farm/lease/dropped_requests")
            self.runtime.progress.give_up(lease, request.meta["farm_page"])
            raise LeaseLost(f"keyword {lease.id} is no longer crawled by this crawler (token {lease.lease_token})")
        return None

    def spider_opened(self, spider):
        if self.runtime.refused is not None:
            self._closing = True
            self.runtime.close_crawl("farm_checkpoint_refused")
            return
        checkpoint = self.runtime.checkpoint
        if checkpoint is not None and checkpoint.saved is not None:
            saved, shared = checkpoint.saved, self.runtime.shared
            # shared: not those another worker adopted meanwhile (the scheduler looked when it opened)
            others = shared.others if shared is not None else ()
            self._claim = self.runtime.run(
                self.store.take_back, spider.name, self.runtime.crawler_id, saved.leases, others
            )
            self._claim.addCallback(self._taken_back, spider, saved)
            self._claim.addErrback(self._claim_failed, spider)
            return
        self._refill()

    def _taken_back(self, leases, spider, saved):
        """The keywords the checkpoint held, ours again under new tokens: their pages asked for again
        (those the checkpoint had pending, and those the keyword table says are missing; pages the
        table records done are not fetched again)."""
        self._claim = None
        checkpoint = self.runtime.checkpoint
        checkpoint.saved = None
        for old in saved.leases:  # the old tokens are gone; what was not taken back is dropped
            checkpoint.release(old)
        self.stats.inc_value("farm/checkpoint/taken_back", len(leases))
        dropped = len({kid for kid, _ in saved.leases} - {lease.id for lease in leases})
        if dropped:
            self.stats.inc_value("farm/checkpoint/dropped_leases", dropped)
        logger.info(
            "farm: resuming from JOBDIR: took back %d keyword(s) at once (%d held by others or ended "
            "meanwhile, dropped)",
            len(leases),
            dropped,
        )
        requests = []
        for lease in leases:
            checkpoint.hold(lease.key)
            run = spider.runs[lease.key] = KeywordRun(lease, shared=self.runtime.shared is not None)
            requests += spider.lease_requests(lease)
            pending = set().union(*(pages for (kid, _), pages in saved.pages.items() if kid == lease.id))
            if run.live and self.runtime.shared is None:
                requests += [spider.page_request(lease, page) for page in run.ask(sorted(pending))]
        shared = self.runtime.shared
        if shared is not None:
            shared.hold(leases, claimed=True)  # the old tokens ended when the shared work was joined
        if self._closing:
            return  # closed meanwhile: spider_closed releases what was taken back
        for request in requests:
            self.crawler.engine.crawl(request)
        self._refill()

    def spider_idle(self, spider):
        self._collect_orphans()
        if self._claim is not None or self.runs or self._later is not None:
            raise DontCloseSpider
        if not self._none_left:
            self._refill()
            raise DontCloseSpider
        shared = self.runtime.shared
        if shared is not None and (shared.busy or shared.adopting):
            # other workers still hold requests of this site, or take keywords on: should one of them
            # stop, this worker takes its requests and keywords over. Look again now: done, it closes
            # at once.
            self._nothing_claimed(Outlook(0, None), spider)
            raise DontCloseSpider

    def _collect_orphans(self):
        """Nothing is queued, downloading or being parsed: every page a keyword still waits
        for must be with the state writer. Any other was lost on the way (an earlier
        pipeline that replaced an item, a request dropped elsewhere): ask for it again,
        a bounded number of times, so that a keyword never waits for ever."""
        progress = self.runtime.progress
        shared = self.runtime.shared
        if shared is not None:
            # taken from the shared queue for a keyword no longer followed here: let it go
            for lease_key, page in [key for key in shared.taken if key[0] not in self.runs]:
                self.stats.inc_value("farm/keyword/orphan_pages")
                progress.settle_orphan(lease_key, page)
        for run in list(self.runs.values()):
            orphans = sorted(run.pending - run.writing)
            if not orphans or run.ended:
                continue
            self.stats.inc_value("farm/keyword/orphan_pages", len(orphans))
            for page in orphans:
                progress.give_up(run.lease, page)
            if not run.live:
                continue
            run.orphan_rounds += 1
            lease = run.lease
            if run.orphan_rounds > ORPHAN_ROUNDS:
                progress.end(
                    run,
                    "failed",
                    f"pages {orphans} were lost inside the crawl {ORPHAN_ROUNDS} times "
                    "(does a pipeline before farm's replace items?)",
                )
            else:
                logger.warning(
                    "farm: pages %s of %s/%s (#%s) were lost inside the crawl; asking again",
                    orphans,
                    lease.city,
                    lease.job,
                    lease.id,
                )
                progress.request_again(run, orphans)

    def keyword_end(self, lease, kind, reason, page, spider):
        if kind in ("blocked", "released"):
            # noted when decided, before its release is written: no later claim of this crawl takes it
            self.skip.add(lease.id)
        self._refill()  # the keyword stops asking for pages: its place goes to another

    def lease_ended(self, lease, outcome, spider):
        self.window.leave_lease(lease.key)
        if self.runs.pop(lease.key, None) is None:
            return
        self._none_left = False  # a failed keyword may be claimable again
        self._refill()

    def _refill(self):
        live = sum(1 for run in self.runs.values() if run.live and run.owned)
        wanted = self.in_flight - live
        if self._claim is not None or self._closing or wanted <= 0 or self._engine_closing():
            return
        if self._later is not None:
            if self._later.active():
                self._later.cancel()
            self._later = None
        spider = self.crawler.spider
        shared = self.runtime.shared
        # what this crawl holds, as it stands now: one claim at a time, each registered before the next
        args = (spider.name, wanted, frozenset(self.skip), frozenset(self.runs))
        if shared is None:
            self._claim = self.runtime.claim(*args)
        else:  # Redis first says this worker is taking keywords on: should it stop, a survivor looks
            self._claim = shared.claiming()
            self._claim.addCallback(lambda _: self.runtime.claim(*args))
        self._claim.addCallback(self._claimed, spider)
        self._claim.addErrback(self._claim_failed, spider)

    def _engine_closing(self) -> bool:
        """The crawl is closing (a pause, an error): what is in flight finishes, nothing new is claimed."""
        slot = getattr(self.crawler.engine, "_slot", None)  # no public way in Scrapy
        return slot is not None and slot.closing is not None

    def _claimed(self, result, spider):
        self._claim = None
        leases, outlook = result
        self.stats.inc_value("farm/lease/claimed", len(leases))
        shared = self.runtime.shared
        if shared is not None:
            shared.hold(leases, claimed=True)  # before their first requests are queued: a survivor adopts them
        if not leases:
            self._nothing_claimed(outlook, spider)
            return
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
        # every claimed lease becomes a run, even while closing: spider_closed releases it
        checkpoint = self.runtime.checkpoint
        for lease in [lease for lease in leases if lease.key in spider.runs]:
            # adopted meanwhile (shared), and found again by a claim that recovered it
            spider.runs[lease.key].owned = True
        leases = [lease for lease in leases if lease.key not in spider.runs]
        for lease in leases:
            spider.runs[lease.key] = KeywordRun(lease, shared=shared is not None)
            if checkpoint is not None:
                checkpoint.hold(lease.key)
        requests = [request for lease in leases for request in spider.lease_requests(lease)]
        if self._closing:
            return
        for request in requests:
            self.crawler.engine.crawl(request)
        # keywords that ended while this claim was under way left places it did not ask for
        self._refill()

    def _nothing_claimed(self, outlook, spider):
        if self._closing:
            return
        if outlook.claimable:
            # other crawlers hold those rows locked for a moment (SKIP LOCKED): not the end
            self.stats.inc_value("farm/lease/claim_busy")
            self._claim_later(CLAIM_BUSY_DELAY)
            return
        if outlook.next_retry_at is not None:
            wait = max(0.0, (outlook.next_retry_at - utcnow()).total_seconds())
            logger.info(
                "farm: no %s keyword to claim now; the next failed one may be retried at %s (in %.0fs)",
                spider.name,
                outlook.next_retry_at.astimezone(self.store.tz).strftime("%H:%M:%S"),
                wait,
            )
            self.stats.inc_value("farm/lease/waiting_for_retry")
            self._claim_later(wait + 0.01)
            return
        self._none_left = True
        self.stats.inc_value("farm/lease/none_left")
        if self.runs:
            return
        # every request belongs to a lease: with none held, the crawl is done now, not at
        # Scrapy's next idle check (up to 5 s away); shared, once no other worker holds work
        shared = self.runtime.shared
        if shared is None:
            self._finished(spider)
            return
        d = shared.link.run(shared.queue.busy)
        d.addCallback(self._others_busy, spider)
        d.addErrback(shared._failed, "looking at the shared queue")

    def _others_busy(self, busy, spider):
        shared = self.runtime.shared
        shared.busy = busy
        idle = not self.runs and self._none_left and self._claim is None and not self._closing
        if not busy and not shared.adopting and idle:
            self._finished(spider)

    def _finished(self, spider):
        logger.info("farm: no %s keyword left to claim for today", spider.name)
        self.runtime.close_crawl("finished")

    def _claim_later(self, seconds):
        self._later = reactor.callLater(seconds, self._claim_again)

    def _claim_again(self):
        self._later = None
        self._refill()

    def _claim_failed(self, failure, spider):
        self._claim = None
        self.stats.inc_value("farm/lease/claim_error")
        logger.error("farm: claiming keywords failed: %s", failure.getErrorMessage())
        self.runtime.close_crawl("farm_redis_error" if failure.check(RedisUnreachable) else "farm_db_error")

    async def spider_closed(self, spider, reason):
        self._closing = True
        if self._later is not None and self._later.active():
            self._later.cancel()
        self._later = None
        if self._claim is not None:
            await maybe_deferred_to_future(DeferredList([self._claim], consumeErrors=True))
        if self.runtime.shared is not None:  # keywords being adopted become runs first, released below
            await maybe_deferred_to_future(self.runtime.shared.closing())
        outbox = self.runtime.outbox
        # the progress of every page fetched goes before the releases
        await maybe_deferred_to_future(outbox.drain())
        # this worker's keywords, and the ends it decided for others' (their pages go back to the queue)
        runs = [run for run in self.runs.values() if not run.ended and (run.owned or run.ending)]
        if not runs:
            self.runs.clear()
            return
        logger.info("farm: releasing %d keyword(s) as partial (crawl closed: %s)", len(runs), reason)
        self.stats.inc_value("farm/lease/released", len(runs))
        why = f"crawl closed before the keyword was done ({reason})"
        ends = []
        for run in runs:
            kind, message = run.ending if run.ending and not run.end_sent else ("released", why)
            if outbox.lost is None:
                ends.append(outbox.end(run.lease, kind, message))
            else:  # the state writer is gone: the database thread may still reach the database
                ends.append(self.runtime.run(self.store.end, run.lease, kind, message))
        results = await maybe_deferred_to_future(DeferredList(ends, consumeErrors=True))
        shared = self.runtime.shared
        for run, (ok, status) in zip(runs, results):
            run.ended = True
            if shared is not None and ok:
                shared.ended(run.lease, "released" if status == "partial" else status or "lost")
        self.runs.clear()
        lost = [(run, status) for run, (ok, status) in zip(runs, results) if not ok]
        if lost:
            self._release_lost(spider, [run.lease for run, _ in lost], lost[0][1])

    def _release_lost(self, spider, leases, failure):
        """The database did not take the releases: the keywords stay ``crawling`` under this crawler.
        Say so, and who takes them back: with Redis, this worker stays listed as taking keywords on,
        and a worker that finds it silent adopts them from the keyword table."""
        self.stats.inc_value("farm/lease/release_lost", len(leases))
        settings = self.crawler.settings
        lease_timeout = f"FARM_LEASE_TIMEOUT ({settings.getint('FARM_LEASE_TIMEOUT')}s) frees them"
        if self.runtime.shared is not None:
            self.runtime.shared.keep_listed()
            who = (
                f"this worker stays listed in Redis: a {spider.name} worker that finds it silent for "
                f"FARM_WORKER_TIMEOUT ({settings.getfloat('FARM_WORKER_TIMEOUT'):g}s) adopts them once the "
                f"database answers (one running now, or the next started); "
                f"failing that, {lease_timeout}"
            )
        elif self.runtime.checkpoint is not None:
            who = f"the next crawl on this JOBDIR takes them back at once; failing that, {lease_timeout}"
        else:
            who = lease_timeout
        logger.error(
            "farm: %d keyword(s) could not be released at close (the database: %s): they stay crawling "
            "under crawler id %s; %s",
            len(leases),
            _first_line(failure),
            self.runtime.crawler_id,
            who,
        )


def _first_line(failure) -> str:
    """What a failed database call said, in one line."""
    error = getattr(failure, "value", failure)
    error = getattr(error, "orig", None) or error
    return (str(error).strip().splitlines() or [type(error).__name__])[0]
