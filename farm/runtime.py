"""What farm's components share within one crawl: the store, the keywords held
(their runs), the page window, the site's pace, and the two places database work
runs, both off the reactor.

- The outbox (farm.outbox) takes the hot writes, postings and page progress, to
  the state writer process, which commits them in order on another core.
- The DB thread takes the rest (claims, heartbeats, reaps), first in first out.

A keyword's end goes through the outbox too, after the progress of every page
it fetched, so a page's progress never lands after its lease was given up.
"""

import logging

from scrapy import signals
from scrapy.exceptions import NotConfigured
from scrapy.utils.defer import deferred_from_coro, maybe_deferred_to_future
from twisted.internet import reactor, threads
from sqlalchemy.exc import DBAPIError
from twisted.internet.threads import deferToThreadPool

from farm.keywordrun import KeywordRun
from farm.outbox import Outbox
from farm.pace import SharedPace, SitePace
from farm.spiders.base import LeaseSpider
from farm.state.db import mask_url
from farm.state.migrate import require_current
from farm.state.store import KeywordStore
from farm.threads import single_thread_pool
from farm.window import PageWindow
from farm.writer import StateWriter

logger = logging.getLogger(__name__)


class FarmStartError(RuntimeError):
    """A crawl cannot start: the message names the setting and what to do, safe to print."""


def _start_failed(message: str) -> FarmStartError:
    logger.error("farm: %s", message)  # the one line to read; Scrapy prints its traceback after it
    return FarmStartError(message)


class FarmRuntime:
    def __init__(self, crawler, store: KeywordStore, crawler_id: str, pages_in_flight: int, pace: SitePace,
                 shared=None):  # fmt: skip
        self.crawler = crawler
        self.store = store
        self.stats = crawler.stats
        self.crawler_id = crawler_id
        self.window = PageWindow(pages_in_flight, on_room=self.wake)
        self.pace = pace
        # FARM_REDIS_URL: this worker's part in the work shared through Redis (farm.shared.work), else None
        self.shared = shared
        # the postings pipeline, and the progress extension it tells of each posting handled
        self.postings = None
        self.progress = None
        # JOBDIR: the crawl's checkpoint (farm.checkpoint.Checkpoint), else None; ``refused``: why
        # the crawl must close at once (the JOBDIR holds another spider's checkpoint)
        self.checkpoint = None
        self.refused = None
        self._wake_call = None
        self._pool = single_thread_pool("farm-db")
        # started now, so that its own start-up (a Python with SQLAlchemy) overlaps the crawl's
        self.writer = StateWriter.spawn(store)
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
            try:
                require_current(store.engine)
            except DBAPIError as exc:
                raise _start_failed(
                    f"cannot reach the database at FARM_DB_URL={mask_url(settings.get('FARM_DB_URL'))!r}: "
                    f"{str(exc.orig or exc).strip().splitlines()[0]}"
                ) from None
            pages_in_flight = settings.getint("FARM_PAGES_IN_FLIGHT")
            if pages_in_flight < 1:
                raise ValueError(f"FARM_PAGES_IN_FLIGHT must be at least 1, got {pages_in_flight}")
            if settings.getint("FARM_SQL_BATCH_SIZE") < 1 or settings.getfloat("FARM_SQL_FLUSH_INTERVAL") < 0:
                raise ValueError("FARM_SQL_BATCH_SIZE must be >= 1 and FARM_SQL_FLUSH_INTERVAL >= 0")
            site = (crawler.spidercls.site or crawler.spidercls.name).upper()
            rate = settings.getfloat(f"FARM_{site}_RATE")
            if rate < 0:
                raise ValueError(f"FARM_{site}_RATE must be >= 0 requests per second (0: no limit), got {rate}")
            delays = (settings.getfloat("FARM_BLOCK_BASE_DELAY"), settings.getfloat("FARM_BLOCK_MAX_DELAY"))
            crawler_id = settings.get("FARM_CRAWLER_ID")
            checkpoint, refused = cls._checkpoint(crawler, store, crawler_id)
            if checkpoint is not None:
                crawler_id = checkpoint.crawler_id  # a resumed crawl is the same holder
            shared = None
            if settings.get("FARM_REDIS_URL"):
                shared = cls._shared_work(crawler, store, crawler_id, site.lower())
                pace = SharedPace(rate, *delays, shared.link, shared.queue)
            else:
                pace = SitePace(rate, *delays)
            runtime = cls(crawler, store, crawler_id, pages_in_flight, pace, shared)
            runtime.checkpoint, runtime.refused = checkpoint, refused
            if shared is not None:
                if checkpoint is not None and checkpoint.saved is not None:
                    shared.resuming = set(checkpoint.saved.leases)
                shared.run_db = runtime.run
                shared.on_lost = lambda reason: runtime.close_crawl("farm_redis_error")
            crawler._farm_runtime = runtime
            crawler.signals.connect(runtime.engine_stopped, signal=signals.engine_stopped)
        return runtime

    @staticmethod
    def _checkpoint(crawler, store, crawler_id):
        """JOBDIR set: the crawl's checkpoint (farm.checkpoint), and why the crawl must not run, if so."""
        from scrapy.utils.job import job_dir

        import sqlite3

        from farm.checkpoint import OtherSpider, open_checkpoint

        jobdir = job_dir(crawler.settings)
        if not jobdir:
            return None, None
        crash = crawler.settings.getint("FARM_CHECKPOINT_CRASH_AT_SAVE")
        try:
            return open_checkpoint(jobdir, crawler.spidercls.name, store.today().isoformat(), crawler_id, crash), None
        except OtherSpider as exc:
            logger.error("farm: %s", exc)  # the crawl closes at open, before it claims anything
            return None, str(exc)
        except (OSError, sqlite3.Error) as exc:  # not writable, disk full: a setting to fix
            raise _start_failed(f"JOBDIR={jobdir}: the checkpoint cannot be kept there: {exc}") from None

    @staticmethod
    def _shared_work(crawler, store, crawler_id, site):
        from farm.shared.dupefilter import DayDupeFilter
        from farm.shared.link import RedisLink
        from farm.shared.queue import SharedQueue
        from farm.shared.work import SharedWork
        from farm.state.clock import utcnow

        settings = crawler.settings
        grace = settings.getfloat("FARM_OUTAGE_GRACE")
        try:
            link = RedisLink(settings.get("FARM_REDIS_URL"), grace)
        except RuntimeError as exc:  # RedisUnreachable: the setting named, the password masked
            raise _start_failed(str(exc)) from None
        key = f"{settings.get('FARM_REDIS_PREFIX')}:{site}"
        dupefilter = DayDupeFilter(link.server, f"{key}:seen", store.tz, utcnow)
        queue = SharedQueue(link.server, crawler.spider, key, crawler_id, dupefilter)
        timeout = settings.getfloat("FARM_WORKER_TIMEOUT")
        if timeout <= 0:
            raise ValueError(f"FARM_WORKER_TIMEOUT must be positive, got {timeout}")
        return SharedWork(crawler, link, queue, store, None, crawler.spider.runs, timeout)

    @property
    def runs(self) -> dict[tuple[int, int], KeywordRun]:
        """The keywords this crawl holds, by lease key (the spider's; the lease middleware fills it)."""
        return self.crawler.spider.runs

    def wake(self) -> None:
        """Have the engine ask the scheduler again now (it would at its next 5 s heartbeat)."""
        try:
            engine = self.crawler.engine
        except RuntimeError:  # the crawl has not started: nothing to wake
            return
        slot = getattr(engine, "_slot", None)  # Scrapy has no public way; the heartbeat is the fallback
        if slot is not None:
            slot.nextcall.schedule()

    def wake_in(self, seconds: float) -> None:
        """``wake`` in that many seconds (one timer at a time: the earliest wins)."""
        call = self._wake_call
        if call is not None and call.active():
            if call.getTime() <= reactor.seconds() + seconds:
                return
            call.cancel()
        self._wake_call = reactor.callLater(seconds, self.wake)

    def close_crawl(self, reason: str) -> None:
        """Close the crawl (from any callback); Scrapy's CloseSpider extension does the same."""
        deferred_from_coro(self.crawler.engine.close_spider_async(reason=reason))

    def run(self, function, *args, **kwargs):
        """Run ``function`` on the DB thread; a Deferred of its result."""
        return deferToThreadPool(reactor, self._pool, function, *args, **kwargs)

    async def engine_stopped(self):
        self._stop_sending()
        if self.shared is not None:
            try:
                await maybe_deferred_to_future(self.shared.leave())
            except Exception as exc:  # noqa: BLE001 - Redis gone: what it held is put back by survivors
                logger.warning("farm: leaving the shared work failed: %s", exc)
            await maybe_deferred_to_future(threads.deferToThread(self.shared.link.close))
        # stopping the pool joins its thread, which may still be in a database call: not on the reactor
        await maybe_deferred_to_future(threads.deferToThread(self._close_database))

    def close(self) -> None:
        """``engine_stopped``, blocking: for tests and tools that built a runtime without a crawl."""
        self._stop_sending()
        if self.shared is not None:
            self.shared.stop()
            self.shared.link.close()
        self._close_database()

    def _stop_sending(self):
        # every write the crawl waits for has been answered by now: the writer exits at once
        self.outbox.close()
        self.writer.close()
        if self._wake_call is not None and self._wake_call.active():
            self._wake_call.cancel()

    def _close_database(self):
        self._pool.stop()
        self.store.engine.dispose()
