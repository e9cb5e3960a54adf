"""farm's scheduler: Scrapy's own queues, with farm's gates on what leaves them.

A page request leaves the queue only when

- its keyword is still held and asking for pages: the requests of a keyword
  that ended (failed, blocked, completed, taken over) are dropped here, so they
  hold nothing, not even a place in the downloader;
- the page window has room (FARM_PAGES_IN_FLIGHT): otherwise it waits, parked,
  and the window wakes the engine when a page's progress is recorded;
- the site's pace allows it (FARM_<SITE>_RATE and the back-off after blocks):
  otherwise it waits, parked, until its turn.

So back-pressure never holds a request inside the downloader, where an ended
keyword's requests could not be taken back and would keep the crawl from ending.
Requests of other spiders, and other requests, pass as Scrapy's would.
"""

import logging

from scrapy.core.scheduler import Scheduler
from scrapy.exceptions import NotConfigured

logger = logging.getLogger(__name__)


class FarmScheduler(Scheduler):
    @classmethod
    def from_crawler(cls, crawler):
        scheduler = super().from_crawler(crawler)
        from farm.runtime import FarmRuntime  # the runtime imports the spiders, which import this module's users

        try:
            scheduler.farm = FarmRuntime.of(crawler)
        except NotConfigured:  # not a farm spider: Scrapy's scheduler as is
            scheduler.farm = None
        scheduler._parked = None  # a request taken from the queue that must wait for its turn
        return scheduler

    def has_pending_requests(self) -> bool:
        return self._parked is not None or super().has_pending_requests()

    def __len__(self) -> int:
        return super().__len__() + (self._parked is not None)

    def next_request(self):
        farm = self.farm
        if farm is None:
            return super().next_request()
        while True:
            request, self._parked = self._parked, None
            if request is None:
                request = super().next_request()
                if request is None:
                    return None
            lease = request.meta.get("farm_lease")
            if lease is None:
                return request
            page = request.meta["farm_page"]
            run = farm.runs.get(lease.key)
            if run is None or not run.live:
                farm.stats.inc_value("farm/lease/dropped_requests")
                farm.progress.give_up(lease, page)
                continue
            if not farm.window.has_room(lease.key, page):
                farm.stats.inc_value("farm/window/full")
                self._parked = request  # the window wakes the engine when a page leaves
                return None
            wait = farm.pace.wait()
            if wait > 0:
                self._parked = request
                farm.wake_in(wait)
                return None
            farm.pace.taken()
            farm.window.enter(lease.key, page)
            run.taken(page)
            return request
