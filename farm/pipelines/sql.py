"""Postings into SQL, in batches, off the reactor thread.

Postings gather while the previous batch is being written and go in the next
one (group commit): a batch is written FARM_SQL_FLUSH_INTERVAL seconds after
its first posting, at FARM_SQL_BATCH_SIZE postings, or as soon as the write
before it finishes, whichever comes first; and at close.

``durable()`` answers when everything handed over so far is committed: the
progress extension asks it once per page before it records the page, so a page
never counts as done while its postings could still be lost.
"""

import logging

from scrapy.exceptions import DropItem
from scrapy.utils.defer import maybe_deferred_to_future
from twisted.internet import reactor
from twisted.internet.defer import Deferred, fail, succeed
from twisted.python.failure import Failure

from farm.runtime import FarmRuntime
from farm.state.clock import utcnow
from farm.state.postings import FIELDS

logger = logging.getLogger(__name__)

REQUIRED = ("source", "job_id")


class PostingsLost(Exception):
    """A batch of postings could not be written; no page after it may count as done."""


class SqlPostingsPipeline:
    def __init__(self, crawler, runtime: FarmRuntime, batch_size: int, flush_interval: float):
        self.crawler = crawler
        self.runtime = runtime
        self.stats = crawler.stats
        self.batch_size = batch_size
        self.flush_interval = flush_interval
        self.pending: list[dict] = []
        self.handed = 0  # postings handed over so far
        self.committed = 0  # the first `committed` of them are in the database
        self.lost: Failure | None = None
        self._waiting: list[tuple[int, Deferred]] = []
        self._writing = None  # the Deferred of the batch being written
        self._timer = None
        runtime.postings = self

    @classmethod
    def from_crawler(cls, crawler):
        runtime = FarmRuntime.of(crawler)
        batch_size = crawler.settings.getint("FARM_SQL_BATCH_SIZE")
        interval = crawler.settings.getfloat("FARM_SQL_FLUSH_INTERVAL")
        if batch_size < 1 or interval < 0:
            raise ValueError("FARM_SQL_BATCH_SIZE must be >= 1 and FARM_SQL_FLUSH_INTERVAL >= 0")
        return cls(crawler, runtime, batch_size, interval)

    def process_item(self, item):
        row = {name: item.get(name) for name in FIELDS}
        missing = [name for name in REQUIRED if not row[name]]
        if missing:
            self.stats.inc_value("farm/sql/dropped")
            self._handled(item)
            raise DropItem(f"posting without {', '.join(missing)}: {row.get('url')}")
        self.pending.append(row)
        self.handed += 1
        self._handled(item)
        if len(self.pending) >= self.batch_size:
            self._flush()
        elif self._timer is None and self._writing is None:
            self._timer = reactor.callLater(self.flush_interval, self._flush)
        return item

    def _handled(self, item):
        page = getattr(item, "_farm_page", None)
        if page is not None and self.runtime.progress is not None:
            self.runtime.progress.posting_handled(*page)

    def durable(self) -> Deferred:
        """Fires once every posting handed over so far is committed (fails if any was lost)."""
        if self.lost is not None:
            return fail(self.lost)
        if self.committed >= self.handed:
            return succeed(None)
        done = Deferred()
        self._waiting.append((self.handed, done))
        return done

    def _flush(self):
        if self._timer is not None and self._timer.active():
            self._timer.cancel()
        self._timer = None
        if self._writing is not None or not self.pending or self.lost is not None:
            return  # the write in flight takes the rest when it finishes
        batch, self.pending = self.pending[: self.batch_size], self.pending[self.batch_size :]
        upto = self.handed - len(self.pending)
        self._writing = self.runtime.run(self.runtime.store.upsert_postings, batch, utcnow())
        self._writing.addBoth(self._written, len(batch), upto)

    def _written(self, result, size, upto):
        self._writing = None
        if isinstance(result, Failure):
            self.stats.inc_value("farm/sql/error")
            logger.error("farm: storing %d postings failed: %s", size, result.getErrorMessage())
            self.lost = Failure(PostingsLost(f"{size} postings could not be stored: {result.getErrorMessage()}"))
            for _, waiter in self._waiting:
                waiter.errback(self.lost)
            self._waiting = []
            self.crawler.engine.close_spider(self.crawler.spider, "farm_db_error")
            return None
        self.stats.inc_value("farm/sql/upserted", size)
        self.stats.inc_value("farm/sql/batches")
        self.committed = upto
        ready = [waiter for target, waiter in self._waiting if target <= upto]
        self._waiting = [(target, waiter) for target, waiter in self._waiting if target > upto]
        for waiter in ready:
            waiter.callback(None)
        self._flush()
        return None

    async def close_spider(self):
        while (self.pending and self.lost is None) or self._writing is not None:
            self._flush()
            if self._writing is not None:
                await maybe_deferred_to_future(self._writing)
