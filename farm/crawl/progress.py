"""Page progress and keyword ends on signals: the keyword table follows what is durably stored.

A page counts as done only when every posting it yielded has been through the
pipeline; then it goes to the outbox, which commits it with those postings or
after them. So a kill at any moment may make the page be fetched again, but
never loses its postings. The write that brings the watermark to the last page
completes the keyword in the same transaction.

Keywords end through the registry (farm.crawl.registry), which orders each end
after the progress of the pages its keyword fetched. Every page asked for
settles (recorded or given up), and a keyword that has nothing left queued is
ended: the crawl always ends.
"""

import logging
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from scrapy import Spider
from scrapy import signals as scrapy_signals
from scrapy.crawler import Crawler
from scrapy.http import Response
from scrapy.settings import BaseSettings
from scrapy.utils.conf import build_component_list
from scrapy.utils.misc import load_object
from twisted.python.failure import Failure

from farm.crawl.backends.base import LeaseKey
from farm.crawl.keywordrun import KeywordRun, Outcome
from farm.crawl.meta import FarmMeta
from farm.crawl.outbox import Outbox
from farm.crawl.registry import KeywordRegistry
from farm.state.lease import Lease, PageWrite

logger = logging.getLogger(__name__)


@dataclass
class _PageTally:
    expected: int | None = None  # postings the page yielded, once parsed
    handled: int = 0  # postings stored (or dropped)


class ReportsPostings:
    """An item pipeline that tells the page progress of each posting it handles itself
    (``PageProgress.posting_handled``), as farm.pipelines.sql does: the progress then need not
    count postings off Scrapy's per-item signal."""


class PageProgress:
    """Built by the crawl's parts (farm.crawl.parts) with the two it uses, the registry and the outbox,
    and handed to the components that use it; it listens to the crawl's signals from the moment it is
    built."""

    def __init__(self, crawler: Crawler, registry: KeywordRegistry, outbox: Outbox):
        self.crawler = crawler
        self.registry = registry
        self.outbox = outbox
        self.stats = crawler.stats
        self.tallies: dict[tuple[LeaseKey, int], _PageTally] = {}
        connect = crawler.signals.connect
        connect(self.item_dropped, signal=scrapy_signals.item_dropped)
        connect(self.item_error, signal=scrapy_signals.item_error)
        connect(self.spider_error, signal=scrapy_signals.spider_error)
        if not _reporting_pipeline_in(crawler.settings):
            # no farm pipeline: count postings off Scrapy's per-item signal instead
            connect(self.item_scraped, signal=scrapy_signals.item_scraped)

    @property
    def runs(self) -> Mapping[LeaseKey, KeywordRun]:
        return self.registry.runs

    # --- postings through the pipeline -----------------------------------

    def item_scraped(self, item: Any, response: Response, spider: Spider) -> None:
        self._item_handled(item)

    def item_dropped(self, item: Any, response: Response, exception: BaseException, spider: Spider) -> None:
        # dropped before farm's pipeline saw it (an earlier pipeline's DropItem): it holds
        # its page back no longer; farm's own drops and later ones were counted already
        self._item_handled(item)

    def _item_handled(self, item: Any) -> None:
        page: tuple[Lease, int] | None = getattr(item, "_farm_page", None)  # set by the spider (farm.spiders.base)
        if page is not None and not getattr(item, "_farm_handled", False):
            self.posting_handled(*page, item=item)

    def posting_handled(self, lease: Lease, page: int, item: Any = None) -> None:
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

    def item_error(self, item: Any, response: Response | None, spider: Spider, failure: Failure) -> None:
        if response is None:
            return
        farm = FarmMeta.of(response)
        lease = farm.lease
        if lease is None:
            return
        if getattr(item, "_farm_handled", False):
            return  # stored already: a later pipeline's error is not the keyword's
        reason = f"a posting could not be stored: {failure.getErrorMessage()} (from {response.url})"
        self.registry.end(lease, Outcome("failed", reason, farm.page))

    def spider_error(self, failure: Failure, response: Response | None, spider: Spider) -> None:
        # a bug in a callback: the page would never be recorded
        if response is None:
            return
        farm = FarmMeta.of(response)
        lease = farm.lease
        if lease is not None:
            assert failure.type is not None  # a Failure always holds its exception's type
            reason = f"{failure.type.__name__} in {spider.name}: {failure.getErrorMessage()} at {response.url}"
            self.registry.end(lease, Outcome("failed", reason, farm.page))

    def page_parsed(self, lease: Lease, page: int, postings: int, spider: Spider) -> None:
        if lease.key not in self.runs:
            self.registry.mark_orphan_handled(lease.key, page)  # its keyword ended meanwhile; its postings are stored
            return
        tally = self.tallies.setdefault((lease.key, page), _PageTally())
        tally.expected = postings
        self._check(lease, page, tally)

    def _check(self, lease: Lease, page: int, tally: _PageTally) -> None:
        if tally.expected is None or tally.handled < tally.expected:
            return
        del self.tallies[(lease.key, page)]
        run = self.runs.get(lease.key)
        if run is None:
            return
        self.registry.sent_to_writer(run, page)
        written = self.outbox.page_done(lease, page, tally.expected, run.total_pages, run.site_total)
        written.addCallbacks(self._page_written, self._not_written, callbackArgs=(run, page), errbackArgs=(run, page))
        self.registry.send_due(run)

    def _not_written(self, failure: Failure, run: KeywordRun, page: int) -> None:
        # the crawl is closing on the database error (the outbox saw to that);
        # the page is fetched again next time
        self.stats.inc_value("farm/progress/not_written")
        self.registry.mark_handled(run, page, recorded=False)

    def _page_written(self, result: PageWrite, run: KeywordRun, page: int) -> None:
        self.registry.mark_handled(run, page, recorded=result.applied)
        if run.over:
            return
        if not result.applied:
            self.stats.inc_value("farm/progress/fenced")
            self.registry.end(run.lease, Outcome("lost", written=True))
            return
        self.stats.inc_value("farm/progress/pages")
        if not result.counted:
            self.stats.inc_value("farm/progress/pages_repeated")
        if result.completed:
            self.stats.inc_value("farm/keyword/completed")
            lease = run.lease
            logger.info("farm: completed %s/%s (#%s, %s pages)", lease.city, lease.job, lease.id, result.total_pages)
            self.registry.end(lease, Outcome("completed", written=True))
            return
        self._nothing_queued(run, result.last_completed_page)

    def _nothing_queued(self, run: KeywordRun, watermark: int) -> None:
        """A keyword still live with no page on its way is never left crawling.

        Only a keyword whose pages are pending from their ask (its backend fetches what this process
        enqueues) has nothing queued anywhere when none is pending here; on a backend others take
        from too, the backend finds a keyword left with nothing queued (WorkBackend.fetches_what_it_enqueues)."""
        if not run.live or run.pending or not run.pending_from_ask:
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
            self.registry.ask_again(run, missing)
        else:
            self.stats.inc_value("farm/keyword/exhausted")
            self.registry.end(run.lease, Outcome("completed", "no page left to fetch"))

    def forget(self, lease_key: LeaseKey, page: int | None = None) -> None:
        """Drop the tally of a page given up (every page of the keyword, ``page`` None: it ended)."""
        if page is not None:
            self.tallies.pop((lease_key, page), None)
            return
        for key in [key for key in self.tallies if key[0] == lease_key]:
            del self.tallies[key]


def _reporting_pipeline_in(settings: BaseSettings) -> bool:
    """Whether ITEM_PIPELINES has a pipeline that reports each posting itself (``ReportsPostings``)."""
    pipelines = build_component_list(settings.getwithbase("ITEM_PIPELINES"))
    return any(issubclass(load_object(path), ReportsPostings) for path in pipelines)
