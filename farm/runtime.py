"""What farm's components share within one crawl: the store, the leases held, and
the two places database work runs, both off the reactor.

- The outbox (farm.outbox) takes the hot writes, postings and page progress, to
  the state writer process, which commits them in order on another core.
- The DB thread takes the rest (claims, ends of keywords, heartbeats, releases),
  first in first out: a release for a block is noted before any later claim.

Leases are released at close only after the outbox is drained, so a page's
progress never lands after its lease was given up.
"""

import logging

from scrapy import signals
from scrapy.exceptions import NotConfigured
from scrapy.utils.defer import deferred_from_coro
from twisted.internet import reactor
from twisted.internet.threads import deferToThreadPool
from twisted.python.threadpool import ThreadPool

from farm.spiders.base import LeaseSpider
from farm.state.lease import Lease
from farm.state.migrate import require_current
from farm.state.store import KeywordStore
from farm.outbox import Outbox
from farm.window import PageWindow
from farm.writer import StateWriter

logger = logging.getLogger(__name__)


class FarmRuntime:
    def __init__(self, crawler, store: KeywordStore, crawler_id: str, pages_in_flight: int):
        self.crawler = crawler
        self.store = store
        self.crawler_id = crawler_id
        self.window = PageWindow(pages_in_flight)
        # the leases this process holds, by (id, lease_token); the lease middleware owns it
        self.leases: dict[tuple[int, int], Lease] = {}
        # the postings pipeline, and the progress extension it tells of each posting handled
        self.postings = None
        self.progress = None
        self._pool = ThreadPool(minthreads=1, maxthreads=1, name="farm-db")
        self._pool.start()
        # started now, so that its own start-up (a Python with SQLAlchemy) overlaps the crawl's
        self.writer = StateWriter.spawn(store.engine.url.render_as_string(hide_password=False))
        settings = crawler.settings
        self.outbox = Outbox(
            self.writer,
            crawler.stats,
            settings.getint("FARM_SQL_BATCH_SIZE"),
            settings.getfloat("FARM_SQL_FLUSH_INTERVAL"),
            on_lost=lambda reason: self.close_crawl("farm_db_error"),
        )

    @classmethod
    def of(cls, crawler) -> "FarmRuntime":
        """The crawl's runtime, made on first use; NotConfigured for a spider not of farm's."""
        if not issubclass(crawler.spidercls, LeaseSpider):
            raise NotConfigured("not a farm LeaseSpider: no keyword leases, progress or postings")
        runtime = getattr(crawler, "_farm_runtime", None)
        if runtime is None:
            settings = crawler.settings
            store = KeywordStore.from_settings(settings)
            require_current(store.engine)
            pages_in_flight = settings.getint("FARM_PAGES_IN_FLIGHT")
            if pages_in_flight < 1:
                raise ValueError(f"FARM_PAGES_IN_FLIGHT must be at least 1, got {pages_in_flight}")
            if settings.getint("FARM_SQL_BATCH_SIZE") < 1 or settings.getfloat("FARM_SQL_FLUSH_INTERVAL") < 0:
                raise ValueError("FARM_SQL_BATCH_SIZE must be >= 1 and FARM_SQL_FLUSH_INTERVAL >= 0")
            runtime = cls(crawler, store, settings.get("FARM_CRAWLER_ID"), pages_in_flight)
            if settings.get("FARM_REDIS_URL"):
                logger.warning(
                    "farm: FARM_REDIS_URL is set, but this version shares work between crawlers "
                    "through the keyword table alone (each keyword is claimed by one crawler); "
                    "the shared Redis request queue is not built yet, so it is not used"
                )
            crawler._farm_runtime = runtime
            crawler.signals.connect(runtime.engine_stopped, signal=signals.engine_stopped)
        return runtime

    def close_crawl(self, reason: str) -> None:
        """Close the crawl (from any callback); Scrapy's CloseSpider extension does the same."""
        deferred_from_coro(self.crawler.engine.close_spider_async(reason=reason))

    def run(self, function, *args, **kwargs):
        """Run ``function`` on the DB thread; a Deferred of its result."""
        return deferToThreadPool(reactor, self._pool, function, *args, **kwargs)

    def engine_stopped(self):
        # every write the crawl waits for has been answered by now: the writer exits at once
        self.outbox.close()
        self.writer.close()
        self._pool.stop()
        self.store.engine.dispose()
