"""Postings into SQL, in batches, off the reactor thread.

Items gather while the previous batch is being written, and go in the next
one (group commit): a batch is written FARM_SQL_FLUSH_INTERVAL seconds after
its first item, at FARM_SQL_BATCH_SIZE items, or as soon as the write before
it finishes, whichever comes first; and at close. ``process_item`` answers only
when its batch is committed, so ``item_scraped`` (which the progress extension
counts) means "durably stored".
"""

import logging

from scrapy.exceptions import DropItem, NotConfigured
from scrapy.utils.defer import maybe_deferred_to_future
from twisted.internet import reactor
from twisted.internet.defer import Deferred
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
        self._writing = None  # the Deferred of the batch being written
        self._timer = None

    @classmethod
    def from_crawler(cls, crawler):
        if not issubclass(crawler.spidercls, LeaseSpider):
            raise NotConfigured("not a farm LeaseSpider")
        batch_size = crawler.settings.getint("FARM_SQL_BATCH_SIZE")
        interval = crawler.settings.getfloat("FARM_SQL_FLUSH_INTERVAL")
        if batch_size < 1 or interval < 0:
            raise ValueError("FARM_SQL_BATCH_SIZE must be >= 1 and FARM_SQL_FLUSH_INTERVAL >= 0")
        return cls(crawler, FarmRuntime.of(crawler), batch_size, interval)

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
        elif self._timer is None and self._writing is None:
            self._timer = reactor.callLater(self.flush_interval, self._flush)
        await maybe_deferred_to_future(stored)
        return item

    def _flush(self):
        if self._timer is not None and self._timer.active():
            self._timer.cancel()
        self._timer = None
        if self._writing is not None or not self.batch:
            return  # the write in flight takes the rest when it finishes
        batch, self.batch = self.batch[: self.batch_size], self.batch[self.batch_size :]
        rows = [row for row, _ in batch]
        self._writing = self.runtime.run(self.runtime.store.upsert_postings, rows, utcnow())
        self._writing.addBoth(self._written, batch)

    def _written(self, result, batch):
        self._writing = None
        if isinstance(result, Failure):
            self.stats.inc_value("farm/sql/error")
            logger.error("farm: storing %d postings failed: %s", len(batch), result.getErrorMessage())
            for _, stored in batch:
                stored.errback(result)
            self.crawler.engine.close_spider(self.crawler.spider, "farm_db_error")
        else:
            self.stats.inc_value("farm/sql/upserted", len(batch))
            self.stats.inc_value("farm/sql/batches")
            for _, stored in batch:
                stored.callback(None)
        self._flush()

    async def close_spider(self):
        while self.batch or self._writing is not None:
            self._flush()
            if self._writing is not None:
                await maybe_deferred_to_future(self._writing)
