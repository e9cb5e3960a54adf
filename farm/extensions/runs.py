"""RunLog: every crawl, local or Redis, remembered in the run table (farm.runs; docs/checks.md).

At ``spider_opened`` it opens a ``running`` row (site, machine, crawler id, start); each scraped posting
counts towards its fields' coverage; at ``spider_closed``, once the crawl has released the keywords it
held (KeywordRegistry.given_back), the row gets the end, Scrapy's finish reason, the keywords claimed and
ended, pages, postings and refusals by shape, and the site's keywords of today are copied into
``keyword_day`` as the release left them (``partial``, not ``crawling``). The writes run on the crawl's
DB thread; a failed one is logged and counted (``farm/runs/error``), never the crawl's end. A crawl
killed before its close leaves its row ``running`` with no end: the checks call that a run that never
finished.
"""

import logging
import socket

from scrapy import signals
from scrapy.utils.defer import maybe_deferred_to_future
from twisted.internet.defer import Deferred

from farm import salary
from farm.crawl.parts import FarmExtension
from farm.runs.numbers import run_numbers
from farm.runs.record import close_run, keep_day, open_run
from farm.state.clock import utcnow

logger = logging.getLogger(__name__)


class RunLog(FarmExtension):
    def __init__(self, crawler, machine: str):
        self.crawler = crawler
        self.stats = crawler.stats
        self.machine = machine
        self.run_id = None
        self._opening: Deferred[int] | None = None
        self.coverage = {"items": 0, "salary": 0, "company": 0, "city": 0, "published_at": 0}

    @classmethod
    def from_crawler(cls, crawler):
        cls.require_farm_spider(crawler)
        ext = cls(crawler, socket.gethostname())
        crawler.signals.connect(ext.spider_opened, signal=signals.spider_opened)
        crawler.signals.connect(ext.item_scraped, signal=signals.item_scraped)
        crawler.signals.connect(ext.spider_closed, signal=signals.spider_closed)
        return ext

    def spider_opened(self, spider):
        parts = self.parts
        self._opening = parts.run(open_run, parts.store.engine, parts.site, parts.crawler_id, self.machine, utcnow())
        self._opening.addCallbacks(self._opened, self._failed)

    def _opened(self, run_id):
        self.run_id = run_id
        self.stats.set_value("farm/runs/id", run_id)

    def item_scraped(self, item, response, spider):
        counts = self.coverage
        counts["items"] += 1
        get = item.get
        if salary.parse(get("source"), get("salary")) is not None:
            counts["salary"] += 1
        for name in ("company", "city", "published_at"):
            if get(name):
                counts[name] += 1

    async def spider_closed(self, spider, reason):
        if self._opening is None:
            return
        parts = self.parts
        for name, count in self.coverage.items():  # what the Spidermon monitors read (farm.checks.monitors)
            self.stats.set_value(f"farm/runs/coverage/{name}", count)
        # after the keywords' release: keyword_day copies the ends the close wrote (partial), not "crawling"
        await maybe_deferred_to_future(parts.registry.given_back.wait())
        numbers = run_numbers(self.stats.get_stats(), self.coverage)
        self._opening.addCallback(lambda _: self.run_id is not None and parts.run(self._close, reason, numbers))
        self._opening.addErrback(self._failed)
        await maybe_deferred_to_future(self._opening)

    def _close(self, reason, numbers):
        store = self.parts.store
        close_run(store.engine, self.run_id, reason, numbers, utcnow())
        keep_day(store.engine, self.parts.site, store.today(), store.tz)

    def _failed(self, failure):
        self.stats.inc_value("farm/runs/error")
        logger.error("farm: the run table could not be written: %s", failure.getErrorMessage())
