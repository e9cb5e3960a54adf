"""farm's scheduler: Scrapy's own queues, with farm's gates on what leaves them.

A page request leaves the queue only when

- its keyword is still held and asking for pages: the requests of a keyword
  that ended (failed, blocked, completed, taken over) are dropped here, so they
  hold nothing, not even a place in the downloader;
- the page window has room (FARM_PAGES_IN_FLIGHT): otherwise it waits, parked,
  and the window wakes the engine when a page's progress is recorded;
- the site's pace allows it (FARM_<SITE>_RATE and the back-off after blocks):
  otherwise it waits, parked, until its turn;
- a proxy is free (FARM_PROXIES, farm.proxies): it leaves with the next one in
  turn, or, with every proxy quarantined, waits parked until one comes back.

So back-pressure never holds a request inside the downloader, where an ended
keyword's requests could not be taken back and would keep the crawl from ending.

A request for a page already in the window (a retry after a block or an error,
a redirect) goes out before anything else, the window notwithstanding: its page
leaves the window only once it has gone through, and behind a request waiting
for the window it would wait for ever. Requests of other spiders, and other
requests, pass as Scrapy's would.

With FARM_REDIS_URL set, the scheduler is farm.shared.scheduler.SharedScheduler
(the same gates, on the queue every worker shares).

With JOBDIR set, a farm crawl's queue stays in memory and its dupefilter keeps no
``requests.seen``: Scrapy writes its disk queues' index only at a clean close, so
after a kill -9 they report nothing pending while ``requests.seen`` refuses those
requests for good. The JOBDIR checkpoint (farm.checkpoint) replaces both: every
farm page request queued here is noted in it, and a resumed crawl asks for its
pages again. A spider not of farm's keeps Scrapy's JOBDIR as is.
"""

import logging
from collections import deque

from scrapy.core.scheduler import Scheduler
from scrapy.dupefilters import RFPDupeFilter
from scrapy.exceptions import NotConfigured
from scrapy.utils.misc import build_from_crawler, load_object

from farm.proxies import take_proxy

logger = logging.getLogger(__name__)


class FarmScheduler(Scheduler):
    @classmethod
    def from_crawler(cls, crawler):
        from farm.runtime import FarmRuntime  # the runtime imports the spiders, which import this module's users

        try:
            runtime = FarmRuntime.of(crawler)
        except NotConfigured:  # not a farm spider: Scrapy's scheduler as is
            runtime = None
        if runtime is not None and runtime.shared is not None:
            from farm.shared.scheduler import SharedScheduler

            return SharedScheduler(runtime)  # FARM_REDIS_URL: the shared queue
        if runtime is not None and (runtime.checkpoint is not None or runtime.refused is not None):
            scheduler = cls._without_jobdir(crawler)  # JOBDIR: farm's checkpoint, never Scrapy's queue
        else:
            scheduler = super().from_crawler(crawler)
        scheduler.farm = runtime
        scheduler.checkpoint = runtime.checkpoint if runtime is not None else None
        scheduler._parked = None  # a request taken from the queue that must wait for its turn
        scheduler._again = RetryLane(runtime) if runtime is not None else None
        return scheduler

    def open(self, spider):
        if self.farm is not None:
            self.farm.start()  # the crawl's writer process and threads: the first step that needs them
        return super().open(spider)

    @classmethod
    def _without_jobdir(cls, crawler):
        """Scrapy's scheduler as ``from_crawler`` builds it, but on memory queues and without the
        dupefilter's ``requests.seen``: the checkpoint keeps the queue instead."""
        settings = crawler.settings
        dupefilter_cls = load_object(settings["DUPEFILTER_CLASS"])
        if issubclass(dupefilter_cls, RFPDupeFilter):
            dupefilter = dupefilter_cls(
                None, settings.getbool("DUPEFILTER_DEBUG"), fingerprinter=crawler.request_fingerprinter
            )
        else:
            dupefilter = build_from_crawler(dupefilter_cls, crawler)
        return cls(
            dupefilter=dupefilter,
            jobdir=None,
            dqclass=load_object(settings["SCHEDULER_DISK_QUEUE"]),
            mqclass=load_object(settings["SCHEDULER_MEMORY_QUEUE"]),
            logunser=settings.getbool("SCHEDULER_DEBUG"),
            stats=crawler.stats,
            pqclass=load_object(settings["SCHEDULER_PRIORITY_QUEUE"]),
            crawler=crawler,
        )

    def has_pending_requests(self) -> bool:
        return self._parked is not None or bool(self._again) or super().has_pending_requests()

    def __len__(self) -> int:
        return super().__len__() + (self._parked is not None) + len(self._again or ())

    def enqueue_request(self, request) -> bool:
        lease = request.meta.get("farm_lease") if self.farm is not None else None
        if lease is not None and self._again.offer(request):
            return True
        if lease is not None and self.checkpoint is not None:
            self.checkpoint.queued(lease.key, request.meta["farm_page"])
        return super().enqueue_request(request)

    def next_request(self):
        farm = self.farm
        if farm is None:
            return super().next_request()
        request = self._again.next_request()
        if request is not None or self._again:  # one to go, or one waiting for its turn
            return request
        while True:
            request, self._parked = self._parked, None
            if request is None:
                request = super().next_request()
                if request is None:
                    return None
            lease = request.meta.get("farm_lease")
            if lease is None:
                return request
            if not still_wanted(farm, request):
                continue
            page, run = request.meta["farm_page"], farm.registry.runs[lease.key]
            if not farm.window.has_room(lease.key, page):
                farm.stats.inc_value("farm/window/full")
                self._parked = request  # the window wakes the engine when a page leaves
                return None
            wait = farm.pace.wait() or take_proxy(farm.proxies, request)
            if wait > 0:
                self._parked = request
                farm.wake_in(wait)
                return None
            farm.pace.taken()
            farm.window.enter(lease.key, page)
            run.taken(page)
            return request


def still_wanted(runtime, request) -> bool:
    """Whether the page request's keyword is still held and asking; else it is given up here."""
    lease = request.meta["farm_lease"]
    run = runtime.registry.runs.get(lease.key)
    if run is not None and run.live:
        return True
    runtime.stats.inc_value("farm/lease/dropped_requests")
    runtime.registry.give_up(lease, request.meta["farm_page"])
    return False


class RetryLane:
    """Retries and redirects of pages already in the window: they go out before anything
    else, the window notwithstanding, at the site's pace and each with a fresh proxy.
    Both schedulers (local and shared) keep one."""

    def __init__(self, runtime):
        self.runtime = runtime
        self.requests: deque = deque()

    def __len__(self) -> int:
        return len(self.requests)

    def offer(self, request) -> bool:
        """Take ``request`` if it repeats a page in the window; False: it is not the lane's."""
        lease = request.meta["farm_lease"]
        if not _repeated(request) or (lease.key, request.meta["farm_page"]) not in self.runtime.window.pages:
            return False
        self.requests.append(request)
        self.runtime.stats.inc_value("scheduler/enqueued/farm_again")
        return True

    def next_request(self):
        """The next request that may go now; None when there is none, or when the first
        must wait for its turn (then the lane is not empty, and the engine is woken)."""
        runtime = self.runtime
        while self.requests:
            request = self.requests.popleft()
            if not still_wanted(runtime, request):
                continue
            wait = runtime.pace.wait() or take_proxy(runtime.proxies, request)
            if wait > 0:
                self.requests.appendleft(request)
                runtime.wake_in(wait)
                return None
            runtime.pace.taken()
            return request
        return None


def _repeated(request) -> bool:
    """A retry or a redirect of a request already taken (Scrapy marks both in the meta)."""
    meta = request.meta
    return "retry_times" in meta or "redirect_times" in meta
