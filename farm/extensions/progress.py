"""Page progress on signals: the keyword table follows what is durably stored.

A page counts as done only when every posting it yielded has been through the
pipeline; then it goes to the outbox, which commits it with those postings or
after them. So a kill at any moment may make the page be fetched again, but
never loses its postings. The last page's write completes the keyword in the
same transaction.
"""

import logging
from dataclasses import dataclass

from scrapy import signals as scrapy_signals

from farm import signals
from farm.runtime import FarmRuntime
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
        ext = cls(crawler, FarmRuntime.of(crawler))
        ext.runtime.progress = ext
        connect = crawler.signals.connect
        connect(ext.spider_opened, signal=scrapy_signals.spider_opened)
        connect(ext.item_error, signal=scrapy_signals.item_error)
        connect(ext.spider_error, signal=scrapy_signals.spider_error)
        connect(ext.page_parsed, signal=signals.page_parsed)
        connect(ext.keyword_failed, signal=signals.keyword_failed)
        connect(ext.keyword_blocked, signal=signals.keyword_blocked)
        connect(ext.keyword_exhausted, signal=signals.keyword_exhausted)
        return ext

    # --- postings through the pipeline -----------------------------------

    def spider_opened(self, spider):
        if self.runtime.postings is None:
            # no farm pipeline: count postings off Scrapy's per-item signals instead
            self.crawler.signals.connect(self.item_scraped, signal=scrapy_signals.item_scraped)
            self.crawler.signals.connect(self.item_scraped, signal=scrapy_signals.item_dropped)

    def item_scraped(self, item, response, spider):
        if getattr(item, "_farm_page", None) is not None:
            self.posting_handled(*item._farm_page)

    def posting_handled(self, lease, page):
        """A posting of this page is stored, or dropped as invalid (it does not hold its page back).

        The pipeline calls this directly: a signal per posting costs the crawl a
        good part of its speed.
        """
        if lease.key in self.ended:
            return
        tally = self.tallies.get((lease.key, page))
        if tally is None:
            tally = self.tallies[(lease.key, page)] = _PageTally(lease=lease)
        tally.handled += 1
        self._check(lease, page, tally)

    def item_error(self, item, response, spider, failure):
        lease = response.meta.get("farm_lease") if response is not None else None
        if lease is not None:
            reason = f"a posting could not be stored: {failure.getErrorMessage()} (from {response.url})"
            self._end(lease, "failed", self.store.fail, reason)

    def spider_error(self, failure, response, spider):
        # a bug in a callback: the page would never be recorded, and its lease never end
        lease = response.meta.get("farm_lease") if response is not None else None
        if lease is not None:
            reason = f"{failure.type.__name__} in {spider.name}: {failure.getErrorMessage()} at {response.url}"
            self._end(lease, "failed", self.store.fail, reason)


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
        written = self.runtime.outbox.page_done(lease, page, tally.expected, tally.last_page)
        written.addCallbacks(
            self._page_written, self._not_written, callbackArgs=(lease, page), errbackArgs=(lease, page)
        )

    def _not_written(self, failure, lease, page):
        # the crawl is closing on the database error (the outbox saw to that);
        # the page is fetched again next time
        self.stats.inc_value("farm/progress/not_written")
        self.runtime.window.leave(lease.key, page)

    def _page_written(self, result, lease, page):
        self.runtime.window.leave(lease.key, page)
        if lease.key in self.ended:
            return
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
        self.runtime.close_crawl("farm_db_error")
