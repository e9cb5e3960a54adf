"""Page progress on signals: the keyword table follows what is durably stored.

A page counts as done only when every posting it yielded has been through the
pipeline, which answers an item only once its batch is committed
(``item_scraped`` fires then). So a kill between the two may make the page be
fetched again, but never loses its postings. The last page's write completes
the keyword in the same transaction.
"""

import logging
from dataclasses import dataclass

from scrapy import signals as scrapy_signals
from scrapy.exceptions import NotConfigured

from farm import signals
from farm.runtime import FarmRuntime
from farm.spiders.base import LeaseSpider
from farm.state.lease import Lease

logger = logging.getLogger(__name__)


@dataclass
class _PageTally:
    lease: Lease | None = None
    expected: int | None = None  # postings the page yielded, once parsed
    handled: int = 0  # postings stored (or dropped as invalid)
    last_page: int | None = None


class PageProgress:
    def __init__(self, crawler, runtime: FarmRuntime):
        self.crawler = crawler
        self.runtime = runtime
        self.store = runtime.store
        self.stats = crawler.stats
        self.tallies: dict[tuple[tuple[int, int], int], _PageTally] = {}
        self.ended: set[tuple[int, int]] = set()

    @classmethod
    def from_crawler(cls, crawler):
        if not issubclass(crawler.spidercls, LeaseSpider):
            raise NotConfigured("not a farm LeaseSpider")
        ext = cls(crawler, FarmRuntime.of(crawler))
        connect = crawler.signals.connect
        connect(ext.item_scraped, signal=scrapy_signals.item_scraped)
        connect(ext.item_dropped, signal=scrapy_signals.item_dropped)
        connect(ext.page_parsed, signal=signals.page_parsed)
        connect(ext.keyword_failed, signal=signals.keyword_failed)
        connect(ext.keyword_blocked, signal=signals.keyword_blocked)
        connect(ext.keyword_exhausted, signal=signals.keyword_exhausted)
        return ext

    # --- postings through the pipeline -----------------------------------

    def item_scraped(self, item, response, spider):
        self._count_handled(response)

    def item_dropped(self, item, response, exception, spider):
        # an invalid posting is not stored, but it does not hold its page back
        self._count_handled(response)

    def _count_handled(self, response):
        lease = response.meta.get("farm_lease") if response is not None else None
        if lease is None or lease.key in self.ended:
            return
        page = response.meta["farm_page"]
        tally = self.tallies.setdefault((lease.key, page), _PageTally(lease=lease))
        tally.handled += 1
        self._check(lease, page, tally)

    def page_parsed(self, lease, page, postings, last_page, spider):
        if lease.key in self.ended:
            return
        tally = self.tallies.setdefault((lease.key, page), _PageTally(lease=lease))
        tally.expected, tally.last_page = postings, last_page
        self._check(lease, page, tally)

    def _check(self, lease, page, tally):
        if tally.expected is None or tally.handled < tally.expected:
            return
        del self.tallies[(lease.key, page)]
        d = self.runtime.run(self.store.page_done, lease, page, tally.expected, tally.last_page)
        d.addCallback(self._page_written, lease, page)
        d.addErrback(self._write_failed, "page progress")

    def _page_written(self, result, lease, page):
        if not result.applied:
            self.stats.inc_value("farm/progress/fenced")
            self._ended(lease, "lost")
            return
        self.stats.inc_value("farm/progress/pages")
        if not result.counted:
            self.stats.inc_value("farm/progress/pages_repeated")
        if result.completed:
            self.stats.inc_value("farm/keyword/completed")
            logger.info("farm: completed %s/%s (#%s, %s pages)", lease.city, lease.job, lease.id, result.total_pages)
            self._ended(lease, "completed")

    # --- keyword ends -----------------------------------------------------

    def keyword_failed(self, lease, reason, spider):
        self._end(lease, "failed", self.store.fail, reason)

    def keyword_blocked(self, lease, reason, spider):
        self._end(lease, "blocked", self.store.release, f"blocked: {reason}")

    def keyword_exhausted(self, lease, spider):
        self._end(lease, "completed", self.store.complete)

    def _end(self, lease, outcome, write, *args):
        if lease.key in self.ended:
            return
        self.ended.add(lease.key)
        if outcome != "completed":
            logger.warning("farm: %s %s/%s (#%s): %s", outcome, lease.city, lease.job, lease.id, args[0])
        d = self.runtime.run(write, lease, *args)
        d.addCallback(self._end_written, lease, outcome)
        d.addErrback(self._write_failed, f"keyword {outcome}")

    def _end_written(self, applied, lease, outcome):
        if not applied:
            self.stats.inc_value("farm/progress/fenced")
            outcome = "lost"
        else:
            self.stats.inc_value(f"farm/keyword/{outcome}")
        self._send_ended(lease, outcome)

    def _ended(self, lease, outcome):
        if lease.key in self.ended:
            return
        self.ended.add(lease.key)
        self._send_ended(lease, outcome)

    def _send_ended(self, lease, outcome):
        for key in [k for k in self.tallies if k[0] == lease.key]:
            del self.tallies[key]
        self.crawler.signals.send_catch_log(
            signals.lease_ended, lease=lease, outcome=outcome, spider=self.crawler.spider
        )

    def _write_failed(self, failure, what):
        self.stats.inc_value("farm/progress/db_error")
        logger.error("farm: writing %s failed: %s", what, failure.getErrorMessage())
        spider = self.crawler.spider
        self.crawler.engine.close_spider(spider, "farm_db_error")
