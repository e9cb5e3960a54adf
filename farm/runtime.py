"""What farm's components share within one crawl: the store, its DB thread, the leases held.

All database work of a crawl runs on ONE thread, first in first out. Besides
keeping blocking I/O off the reactor, the order is what makes the writes safe:
a batch of postings is written before the page progress that depends on it,
and a page's progress before a release of its lease at close.
"""

import logging

from scrapy import signals
from scrapy.exceptions import NotConfigured
from twisted.internet import reactor
from twisted.internet.threads import deferToThreadPool
from twisted.python.threadpool import ThreadPool

from farm.spiders.base import LeaseSpider
from farm.state.lease import Lease
from farm.state.migrate import require_current
from farm.state.store import KeywordStore
from farm.window import PageWindow

logger = logging.getLogger(__name__)


class FarmRuntime:
    def __init__(self, store: KeywordStore, crawler_id: str, pages_in_flight: int):
        self.store = store
        self.crawler_id = crawler_id
        self.window = PageWindow(pages_in_flight)
        # the leases this process holds, by (id, lease_token); the lease middleware owns it
        self.leases: dict[tuple[int, int], Lease] = {}
        # called (each returns a Deferred) before held leases are released at close
        self.drains: list = []
        # the postings pipeline, whose durable() says when postings are committed,
        # and the progress extension, which the pipeline tells of each posting handled
        self.postings = None
        self.progress = None
        self._pool = ThreadPool(minthreads=1, maxthreads=1, name="farm-db")
        self._pool.start()

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
            runtime = cls(store, settings.get("FARM_CRAWLER_ID"), pages_in_flight)
            if settings.get("FARM_REDIS_URL"):
                logger.warning(
                    "farm: FARM_REDIS_URL is set, but this version shares work between crawlers "
                    "through the keyword table alone (each keyword is claimed by one crawler); "
                    "the shared Redis request queue is not built yet, so it is not used"
                )
            crawler._farm_runtime = runtime
            crawler.signals.connect(runtime.engine_stopped, signal=signals.engine_stopped)
        return runtime

    def run(self, function, *args, **kwargs):
        """Run ``function`` on the DB thread; a Deferred of its result."""
        return deferToThreadPool(reactor, self._pool, function, *args, **kwargs)

    def engine_stopped(self):
        self._pool.stop()
        self.store.engine.dispose()
