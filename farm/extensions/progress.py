"""Page progress and keyword ends on signals: the keyword table follows what is durably stored.

A page counts as done only when every posting it yielded has been through the
pipeline; then it goes to the outbox, which commits it with those postings or
after them. So a kill at any moment may make the page be fetched again, but
never loses its postings. The write that brings the watermark to the last page
completes the keyword in the same transaction.

A keyword's end (failed, blocked, released, or completed with nothing left to
fetch) is decided once and goes to the outbox only when no page it took from the
queue is still on its way there: it is committed after their progress, so no
fetched page is fenced by its own keyword's end. Every page asked for settles
(recorded or given up), and a keyword that has nothing left queued is ended:
the crawl always ends.
"""

import logging
from dataclasses import dataclass

from scrapy import signals as scrapy_signals
from scrapy.utils.conf import build_component_list
from scrapy.utils.misc import load_object

from farm import signals
from farm.keywordrun import KeywordRun
from farm.state.lease import Lease

logger = logging.getLogger(__name__)

# The outcome a written end reports, by the status the store wrote.
_OUTCOMES = {"completed": "completed", "failed": "failed"}


@dataclass
class _PageTally:
    expected: int | None = None  # postings the page yielded, once parsed
    handled: int = 0  # postings stored (or dropped)


class PageProgress:
    """Built by the crawl's runtime (farm.crawl.parts), which the other components reach it through;
    as an extension, it listens to the crawl's signals."""

    def __init__(self, crawler, runtime):
        self.crawler = crawler
        self.runtime = runtime
        self.stats = crawler.stats
        self.tallies: dict[tuple[tuple[int, int], int], _PageTally] = {}

    @classmethod
    def from_crawler(cls, crawler):
        from farm.crawl.parts import CrawlParts  # which builds this class: imported when used

        ext = CrawlParts.of(crawler).progress
        connect = crawler.signals.connect
        connect(ext.spider_opened, signal=scrapy_signals.spider_opened)
        connect(ext.item_dropped, signal=scrapy_signals.item_dropped)
        connect(ext.item_error, signal=scrapy_signals.item_error)
        connect(ext.spider_error, signal=scrapy_signals.spider_error)
        connect(ext.keyword_end, signal=signals.keyword_end)
        return ext

    @property
    def runs(self) -> dict[tuple[int, int], KeywordRun]:
        return self.runtime.runs

    # --- postings through the pipeline -----------------------------------

    def spider_opened(self, spider):
        spider.progress = self  # each page parsed is told here (LeaseSpider.progress)
        if not _farm_pipeline_in(self.crawler.settings):
            # no farm pipeline: count postings off Scrapy's per-item signal instead
            self.crawler.signals.connect(self.item_scraped, signal=scrapy_signals.item_scraped)

    def item_scraped(self, item, response, spider):
        self._item_handled(item)

    def item_dropped(self, item, response, exception, spider):
        # dropped before farm's pipeline saw it (an earlier pipeline's DropItem): it holds
        # its page back no longer; farm's own drops and later ones were counted already
        self._item_handled(item)

    def _item_handled(self, item):
        page = getattr(item, "_farm_page", None)
        if page is not None and not getattr(item, "_farm_handled", False):
            self.posting_handled(*page, item=item)

    def posting_handled(self, lease: Lease, page: int, item=None):
        """A posting of this page is stored, or dropped (it does not hold its page back).

        The pipeline calls this directly: a signal per posting costs the crawl a
        good part of its speed.
        """
        if item is not None:
            object.__setattr__(item, "_farm_handled", True)  # past Item.__setattr__: once per posting
        key = (lease.key, page)
        tally = self.tallies.get(key)
        if tally is None:
            if lease.key not in self.runs:
                return
            tally = self.tallies[key] = _PageTally()
        tally.handled += 1
        if tally.expected is not None and tally.handled >= tally.expected:
            self._check(lease, page, tally)

    def item_error(self, item, response, spider, failure):
        lease = response.meta.get("farm_lease") if response is not None else None
        if lease is None:
            return
        if getattr(item, "_farm_handled", False):
            return  # stored already: a later pipeline's error is not the keyword's
        reason = f"a posting could not be stored: {failure.getErrorMessage()} (from {response.url})"
        self.end_keyword(lease, "failed", reason, response.meta["farm_page"])

    def spider_error(self, failure, response, spider):
        # a bug in a callback: the page would never be recorded
        lease = response.meta.get("farm_lease") if response is not None else None
        if lease is not None:
            reason = f"{failure.type.__name__} in {spider.name}: {failure.getErrorMessage()} at {response.url}"
            self.end_keyword(lease, "failed", reason, response.meta["farm_page"])

    def page_parsed(self, lease, page, postings, spider):
        if lease.key not in self.runs:
            self.settle_orphan(lease.key, page)  # its keyword ended meanwhile; its postings are stored
            return
        tally = self.tallies.setdefault((lease.key, page), _PageTally())
        tally.expected = postings
        self._check(lease, page, tally)

    def _check(self, lease, page, tally):
        if tally.expected is None or tally.handled < tally.expected:
            return
        del self.tallies[(lease.key, page)]
        run = self.runs.get(lease.key)
        if run is None:
            return
        run.handed_over(page)
        written = self.runtime.outbox.page_done(lease, page, tally.expected, run.total_pages)
        written.addCallbacks(self._page_written, self._not_written, callbackArgs=(run, page), errbackArgs=(run, page))
        self._send_end_when_due(run)

    def _not_written(self, failure, run, page):
        # the crawl is closing on the database error (the outbox saw to that);
        # the page is fetched again next time
        self.stats.inc_value("farm/progress/not_written")
        self._settled(run, page, recorded=False)

    def _settled(self, run: KeywordRun, page: int, recorded: bool):
        """The page is recorded, or given up: it leaves the window (and, shared, the worker's hands)."""
        self.runtime.window.leave(run.key, page)
        run.settled(page, recorded)
        if self.runtime.checkpoint is not None:
            self.runtime.checkpoint.settled(run.key, page)
        self.runtime.backend.mark_handled(run.key, page)
        if not run.owned and run.idle and self.runs.get(run.key) is run:
            del self.runs[run.key]  # another worker's keyword: nothing of it left here

    def _page_written(self, result, run: KeywordRun, page):
        self._settled(run, page, recorded=result.applied)
        if run.ended:
            return
        if not result.applied:
            self.stats.inc_value("farm/progress/fenced")
            self._finish(run, "lost")
            return
        self.stats.inc_value("farm/progress/pages")
        if not result.counted:
            self.stats.inc_value("farm/progress/pages_repeated")
        if result.completed:
            self.stats.inc_value("farm/keyword/completed")
            lease = run.lease
            logger.info("farm: completed %s/%s (#%s, %s pages)", lease.city, lease.job, lease.id, result.total_pages)
            self._finish(run, "completed")
            return
        self._nothing_queued(run, result.last_completed_page)

    def _nothing_queued(self, run: KeywordRun, watermark: int):
        """A keyword still live with no page on its way is never left crawling.

        Shared through Redis, other workers may hold its pages: the shared queue's
        count of its open requests decides instead (farm.crawl.backends.redis.membership.check_stall)."""
        if not run.live or run.pending or run.shared:
            return
        missing = run.missing(watermark)
        if missing:
            self.stats.inc_value("farm/keyword/pages_requested_again", len(missing))
            logger.warning(
                "farm: %s/%s (#%s) had nothing queued; requesting pages %s",
                run.lease.city,
                run.lease.job,
                run.lease.id,
                missing,
            )
            self.request_again(run, missing)
        else:
            self.stats.inc_value("farm/keyword/exhausted")
            self.end(run, "completed", "no page left to fetch")

    def request_again(self, run: KeywordRun, pages) -> None:
        """Ask again for pages that were asked for once and lost on the way."""
        spider = self.crawler.spider
        for page in pages:
            run.requested.add(page)
            if not run.shared:
                run.pending.add(page)
            request = spider.page_request(run.lease, page)
            request.meta["farm_again"] = True  # shared: past the day's fingerprints, which have seen it
            self.crawler.engine.crawl(request)

    # --- keyword ends -----------------------------------------------------

    def keyword_end(self, lease, kind, reason, page, spider):
        self.end_keyword(lease, kind, reason, page)

    def end_keyword(self, lease: Lease, kind: str, reason: str | None, page: int | None = None):
        run = self.runs.get(lease.key)
        if run is None:
            if page is not None:
                self.settle_orphan(lease.key, page)
            return
        if page is not None:
            self._give_up(run, page)
        self.end(run, kind, reason)

    def end(self, run: KeywordRun, kind: str, reason: str | None = None):
        if not run.live:
            return  # the first end decided wins
        run.ending = (kind, reason)
        lease = run.lease
        if kind != "completed":
            logger.warning("farm: %s %s/%s (#%s): %s", kind, lease.city, lease.job, lease.id, reason)
        self._send_end_when_due(run)

    def give_up(self, lease: Lease, page: int):
        """A page request was dropped before it was fetched (its keyword ended)."""
        run = self.runs.get(lease.key)
        if run is not None:
            self._give_up(run, page)
        else:
            self.settle_orphan(lease.key, page)

    def settle_orphan(self, lease_key, page: int):
        """A page whose keyword this crawl no longer follows is done with: whatever it held goes
        (its place in the window; shared, the worker's hold on it, which else would keep every
        worker waiting for it)."""
        self.tallies.pop((lease_key, page), None)
        self.runtime.window.leave(lease_key, page)
        if self.runtime.checkpoint is not None:
            self.runtime.checkpoint.settled(lease_key, page)
        self.runtime.backend.mark_handled(lease_key, page)

    def _give_up(self, run: KeywordRun, page: int):
        self.tallies.pop((run.key, page), None)
        self._settled(run, page, recorded=False)
        self._send_end_when_due(run)

    def _send_end_when_due(self, run: KeywordRun):
        if not run.end_due or run.ended:
            return
        run.end_sent = True
        kind, reason = run.ending
        written = self.runtime.outbox.end(run.lease, kind, reason)
        written.addCallbacks(self._end_written, self._end_not_written, callbackArgs=(run, kind), errbackArgs=(run,))

    def _end_written(self, status, run: KeywordRun, kind: str):
        if run.ended:
            return  # its last page completed it meanwhile
        if status is None:
            self.stats.inc_value("farm/progress/fenced")
            outcome = "lost"
        else:
            outcome = _OUTCOMES.get(status) or ("blocked" if kind == "blocked" else "released")
            if kind == "blocked" and status == "failed":
                self.stats.inc_value("farm/keyword/blocked_all_day")
                logger.warning(
                    "farm: %s/%s (#%s) was blocked %s times today: failed for the day",
                    run.lease.city,
                    run.lease.job,
                    run.lease.id,
                    self.runtime.store.max_blocked_claims,
                )
            self.stats.inc_value(f"farm/keyword/{outcome}")
        self._finish(run, outcome)

    def _end_not_written(self, failure, run: KeywordRun):
        # the crawl closes on the database error; the lease middleware releases what is left
        self.stats.inc_value("farm/progress/not_written")
        run.end_sent = False

    def _finish(self, run: KeywordRun, outcome: str, shared_already: bool = False):
        if run.ended:
            return
        run.ended = True
        for key in [k for k in self.tallies if k[0] == run.key]:
            del self.tallies[key]
        if not shared_already:
            self.runtime.backend.keyword_ended(run.lease, outcome)  # its queued requests dropped, its owner told
        self.crawler.signals.send_catch_log(
            signals.lease_ended, lease=run.lease, outcome=outcome, spider=self.crawler.spider
        )

    # --- shared keywords (FARM_REDIS_URL) -----------------------------------

    def ended_elsewhere(self, run: KeywordRun, outcome: str):
        """Another worker ended a keyword this one owns (and wrote it): nothing to write here."""
        self.stats.inc_value("farm/shared/ended_elsewhere")
        self._finish(run, outcome, shared_already=True)

    def complete_elsewhere(self, lease: Lease):
        """Nothing is open for the lease anywhere and nothing is missing: complete it."""
        run = self.runs.get(lease.key)
        if run is not None:
            self.end(run, "completed", "no page left to fetch")
            return
        written = self.runtime.outbox.end(lease, "completed", None)
        written.addCallback(lambda status: status and self.runtime.backend.keyword_ended(lease, "completed"))
        written.addErrback(lambda failure: self.stats.inc_value("farm/progress/not_written"))


def _farm_pipeline_in(settings) -> bool:
    """Whether ITEM_PIPELINES has farm's postings pipeline, which reports each posting itself."""
    from farm.pipelines.sql import SqlPostingsPipeline

    pipelines = build_component_list(settings.getwithbase("ITEM_PIPELINES"))
    return any(issubclass(load_object(path), SqlPostingsPipeline) for path in pipelines)
