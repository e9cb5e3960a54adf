"""farm's scheduler: one scheduler over a work backend, with farm's gates on what leaves it.

The backend (farm.crawl.backends.base.WorkBackend, FARM_WORK_BACKEND) keeps the requests: in this
process's memory (farm.crawl.backends.local) or in a queue every worker shares. A page
request leaves the scheduler only when

- its keyword is still held and asking for pages: the requests of a keyword that ended (failed,
  blocked, completed, taken over) are dropped here, so they hold nothing, not even a place in the
  downloader;
- the page window has room (FARM_PAGES_IN_FLIGHT): otherwise it waits, parked, and the window
  wakes the engine when a page's progress is recorded;
- the site's own pace allows it (FARM_<SITE>_CEILING and the back-off after the site's trouble):
  otherwise it waits, parked, until its turn (a backend that paces its own hand-outs, ``paced``, has
  done this);
- an identity is ready (farm.crawl.identities: each proxy of FARM_PROXIES, or this machine's own
  address, at its own pace, FARM_<SITE>_RATE, and out of quarantine): it leaves through the next one
  ready, or, with none ready, waits parked until the first is.

So back-pressure never holds a request inside the downloader, where an ended keyword's requests
could not be taken back and would keep the crawl from ending.

A request for a page already in the window (a retry after a block or an error, a redirect) stays
in this process and goes out before anything else, the window notwithstanding: its page leaves the
window only once it has gone through, and behind a request waiting for the window it would wait for
ever. One sent again with a session just earned in the browser (farm.sessions) goes at once, ahead of
the pace and through the identity (the proxy) it earned the session through: a back-off longer than a session lives
would otherwise let every session expire before it is used; so does the copy of a request the signing
middleware signed as it went out (farm.middlewares.signing). Requests of other spiders, and other
requests, pass as Scrapy's would.
"""

from collections import deque
from typing import Any, Self

from scrapy import Request, Spider
from scrapy.core.scheduler import BaseScheduler
from scrapy.crawler import Crawler
from twisted.internet.defer import Deferred

from farm.crawl.backends.base import WorkBackend
from farm.crawl.meta import FarmMeta
from farm.crawl.parts import CrawlParts
from farm.crawl.starting import build_backend


class FarmScheduler(BaseScheduler):
    def __init__(self, backend: WorkBackend, parts: CrawlParts | None = None):
        self.backend = backend
        self.parts = parts  # None for a spider not of farm's
        self._parked: Request | None = None  # a request handed out by the backend that must wait for its turn
        self._again = RetryLane(parts) if parts is not None else None  # None exactly when parts is

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> Self:
        parts = crawler.get_extension(CrawlParts)
        if parts is None:  # not a farm spider: Scrapy's scheduler queues as they are
            return cls(build_backend(crawler))
        return cls(parts.backend, parts)

    def open(self, spider: Spider) -> Deferred[Any] | None:
        if self.parts is not None:
            # the one place the crawl's parts start (farm.crawl.parts): the first step that needs them
            self.parts.start()
        return self.backend.open(spider)

    def close(self, reason: str) -> None:
        return self.backend.close(reason)

    def has_pending_requests(self) -> bool:
        return self._parked is not None or bool(self._again) or len(self.backend) > 0

    def __len__(self) -> int:
        return len(self.backend) + (self._parked is not None) + len(self._again or ())

    def enqueue_request(self, request: Request) -> bool:
        if self._again is not None and FarmMeta.of(request).lease is not None and self._again.offer(request):
            return True
        return self.backend.enqueue(request)

    def next_request(self) -> Request | None:
        parts, again = self.parts, self._again
        if parts is None or again is None:  # a spider not of farm's
            return self.backend.fetch()
        request = again.next_request()
        if request is not None or again:  # one to go, or one waiting for its turn
            return request
        while True:
            request, self._parked = self._parked, None
            if request is None:
                request = self.backend.fetch()
                if request is None:
                    return None
            farm = FarmMeta.of(request)
            lease = farm.lease
            if lease is None:
                return request
            if not still_wanted(parts, request):
                continue
            page = farm.page
            if not parts.window.has_room(lease.key, page):
                parts.stats.inc_value("farm/window/full")
                self._parked = request  # the window wakes the engine when a page leaves
                return None
            pace = None if self.backend.paced else parts.pace
            wait = (pace.wait() if pace is not None else 0) or parts.identities.take(request)
            if wait > 0:
                self._parked = request
                parts.wake_in(wait)
                return None
            if pace is not None:
                pace.taken()
            parts.window.enter(lease.key, page)
            parts.registry.taken(lease.key, page)
            return request


def still_wanted(parts: CrawlParts, request: Request) -> bool:
    """Whether the page request's keyword is still held and asking; else it is given up here."""
    lease, page = FarmMeta.of(request).lease_page()
    run = parts.registry.runs.get(lease.key)
    if run is not None and run.live:
        return True
    parts.stats.inc_value("farm/lease/dropped_requests")
    parts.registry.give_up(lease, page)
    return False


class RetryLane:
    """Retries and redirects of pages already in the window: they go out before anything
    else, the window notwithstanding, at the site's pace, each through an identity ready anew. A
    request that goes at once (sent again with a session just earned, or a copy just signed) never
    waits behind one waiting for the pace: the session it carries would age there, and a signed copy
    of the request that took the pace's turn would wait a second turn, one turn for each retry ahead."""

    def __init__(self, parts: CrawlParts):
        self.parts = parts
        self.now: deque[Request] = deque()  # requests that go at once
        self.requests: deque[Request] = deque()  # requests that go at the site's pace

    def __len__(self) -> int:
        return len(self.now) + len(self.requests)

    def offer(self, request: Request) -> bool:
        """Take ``request`` if it repeats a page in the window; False: it is not the lane's."""
        farm = FarmMeta.of(request)
        lease, page = farm.lease_page()
        if not _repeated(request) or (lease.key, page) not in self.parts.window.pages:
            return False
        (self.now if farm.goes_at_once else self.requests).append(request)
        self.parts.stats.inc_value("scheduler/enqueued/farm_again")
        return True

    def next_request(self) -> Request | None:
        """The next request that may go now; None when there is none, or when the first
        must wait for its turn (then the lane is not empty, and the engine is woken)."""
        parts = self.parts
        while self.now:
            request = self.now.popleft()
            if not still_wanted(parts, request):
                continue
            if FarmMeta.of(request).take_session_fresh():
                parts.stats.inc_value("scheduler/dequeued/farm_fresh_session")
            return request  # a copy signed as it went out (farm.middlewares.signing) goes as it is
        while self.requests:
            request = self.requests.popleft()
            if not still_wanted(parts, request):
                continue
            wait = parts.pace.wait() or parts.identities.take(request)
            if wait > 0:
                self.requests.appendleft(request)
                parts.wake_in(wait)
                return None
            parts.pace.taken()
            return request
        return None


def _repeated(request: Request) -> bool:
    """A retry, a redirect or a signed copy of a request already taken (marked in the meta)."""
    meta = request.meta
    return "retry_times" in meta or "redirect_times" in meta or FarmMeta(meta).goes_at_once
