"""Postings into SQL, in batches, off the reactor thread.

Items wait in a batch that is upserted when it reaches FARM_SQL_BATCH_SIZE or
FARM_SQL_FLUSH_INTERVAL seconds have passed, and at close. ``process_item``
answers only when the item's batch is committed, so ``item_scraped`` (which
the progress extension counts) means "durably stored".
"""

import logging

from scrapy import signals
from scrapy.exceptions import DropItem, NotConfigured
from scrapy.utils.defer import maybe_deferred_to_future
from twisted.internet.defer import Deferred
from twisted.internet.task import LoopingCall
from twisted.python.failure import Failure

from farm.runtime import FarmRuntime
from farm.spiders.base import LeaseSpider
from farm.state.clock import utcnow

logger = logging.getLogger(__name__)

REQUIRED = ("source", "job_id")
FIELDS = (
    "source", "job_id", "title", "salary", "company", "city", "area", "experience",
    "degree", "tags", "published_at", "url", "keyword_id", "raw",
)


class SqlPostingsPipeline:
    def __init__(self, crawler, runtime: FarmRuntime, batch_size: int, flush_interval: float):
        self.crawler = crawler
        self.runtime = runtime
        self.stats = crawler.stats
        self.batch_size = batch_size
        self.flush_interval = flush_interval
        self.batch: list[tuple[dict, Deferred]] = []
        self.flushing: list[Deferred] = []
        self._timer = LoopingCall(self._flush)

    @classmethod
    def from_crawler(cls, crawler):
        if not issubclass(crawler.spidercls, LeaseSpider):
            raise NotConfigured("not a farm LeaseSpider")
        batch_size = crawler.settings.getint("FARM_SQL_BATCH_SIZE")
        interval = crawler.settings.getfloat("FARM_SQL_FLUSH_INTERVAL")
        if batch_size < 1 or interval <= 0:
            raise ValueError("FARM_SQL_BATCH_SIZE must be >= 1 and FARM_SQL_FLUSH_INTERVAL > 0")
        pipeline = cls(crawler, FarmRuntime.of(crawler), batch_size, interval)
        crawler.signals.connect(pipeline.spider_opened, signal=signals.spider_opened)
        return pipeline

    def spider_opened(self, spider):
        self._timer.start(self.flush_interval, now=False)

    async def process_item(self, item):
        row = {name: item.get(name) for name in FIELDS}
        missing = [name for name in REQUIRED if not row[name]]
        if missing:
            self.stats.inc_value("farm/sql/dropped")
            raise DropItem(f"posting without {', '.join(missing)}: {row.get('url')}")
        stored = Deferred()
        self.batch.append((row, stored))
        if len(self.batch) >= self.batch_size:
            self._flush()
        await maybe_deferred_to_future(stored)
        return item

    def _flush(self):
        if not self.batch:
            return None
        batch, self.batch = self.batch, []
        rows = [row for row, _ in batch]
        d = self.runtime.run(self.runtime.store.upsert_postings, rows, utcnow())
        self.flushing.append(d)
        d.addBoth(self._flushed, batch, d)
        return d

    def _flushed(self, result, batch, d):
        self.flushing.remove(d)
        if isinstance(result, Failure):
            self.stats.inc_value("farm/sql/error")
            logger.error("farm: storing %d postings failed: %s", len(batch), result.getErrorMessage())
            for _, stored in batch:
                stored.errback(result)
            spider = self.crawler.spider
            self.crawler.engine.close_spider(spider, "farm_db_error")
            return None
        self.stats.inc_value("farm/sql/upserted", len(batch))
        self.stats.inc_value("farm/sql/batches")
        for _, stored in batch:
            stored.callback(None)
        return None

    async def close_spider(self):
        if self._timer.running:
            self._timer.stop()
        self._flush()
        for d in list(self.flushing):
            await maybe_deferred_to_future(d)
