"""The crawl's shared parts, built in one place and started when the spider opens.

A page's path through a crawl, and who does each step:

1. **Lease.** ``KeywordLeaseMiddleware`` (farm.crawl.leases) claims keywords
   from the store; the ``registry`` (farm.crawl.registry) holds each as a
   ``KeywordRun`` until its end; the ``paging`` (farm.crawl.paging) asks for the
   keyword's pages, through the spider's requests (farm.spiders.base).
2. **Request.** The scheduler (farm.crawl.scheduler), over its work backend
   (farm.crawl.backends, FARM_WORK_BACKEND: local, or Redis), lets a page out while
   its keyword is live, the page ``window`` has room and the site's ``pace`` allows it.
3. **Response.** ``SiteBlockMiddleware`` (farm.middlewares.blocks) tells blocks and
   site trouble from pages; the spider parses the page's postings, and the paging
   asks for the pages it makes known and says how many postings it yielded
   (``PageProgress.page_parsed``).
4. **Items.** ``SqlPostingsPipeline`` (farm.pipelines.sql) hands each posting to
   the ``outbox``.
5. **Progress.** ``PageProgress`` (farm.crawl.progress) counts a page done
   once its postings are handled and sends its progress to the outbox after them;
   the state writer process commits both in order, and the page leaves the window.
   A keyword's end goes the same way, after every page it fetched.

Database work runs off the reactor in two places: the outbox's state writer
process (the hot writes and the claims, on another core) and the DB thread
(heartbeats, reaps, a checkpoint's take-back; first in, first out). Whether the
work is shared with other processes is the ``backend``'s to know (farm.crawl.backends.base).

``CrawlParts`` is a Scrapy extension (farm.addon's EXTENSIONS, before Scrapy's own): its
``from_crawler`` builds every part once, before the engine exists, and nothing is written into it
afterwards; for a spider not a ``LeaseSpider`` it is NotConfigured. The others reach it through
Scrapy: the middlewares, the pipeline and the scheduler, built after it, with
``crawler.get_extension(CrawlParts)`` in their ``from_crawler``; the extensions, built beside it,
and the spider, built before it (as ``PagingParts``, farm.crawl.paging), the same way on first use.

The parts start in one place, ``start()``, which the scheduler's ``open`` calls: the engine opens the
scheduler before anything needs the DB thread, the state writer or the backend's threads, and
before ``spider_opened``; under another SCHEDULER a farm spider does not start (farm.crawl.starting).
In a crawl that is starting (``Crawler.crawling``) the writer process is spawned as soon as the parts
are built: it takes a third of a second to start, and spawned at ``open`` it held the first pages in a
full window for a tenth of a second. ``engine_stopped`` stops everything.
"""

import logging
from collections.abc import Callable
from functools import cached_property
from typing import TYPE_CHECKING, ParamSpec, TypeVar, cast

from scrapy import signals
from scrapy.crawler import Crawler
from scrapy.exceptions import NotConfigured
from scrapy.utils.defer import deferred_from_coro, maybe_deferred_to_future
from sqlalchemy.exc import DBAPIError
from twisted.internet import defer, reactor, threads
from twisted.internet.defer import Deferred
from twisted.internet.interfaces import IDelayedCall, IReactorFromThreads
from twisted.internet.threads import deferToThreadPool

from farm.config import FarmConfig, SettingError
from farm.crawl.backends.base import LeaseKey
from farm.crawl.backends.checkpoint import Checkpoint
from farm.crawl.backends.joblock import JobdirLock
from farm.crawl.outbox import Outbox
from farm.crawl.paging import KeywordPaging, PagingParts
from farm.crawl.progress import PageProgress
from farm.crawl.registry import KeywordRegistry
from farm.crawl.starting import build_backend, open_jobdir, require_farm_scheduler, start_failed
from farm.crawl.window import PageWindow
from farm.display import mask_url
from farm.state.identities import keep_learned_paces, learned_paces
from farm.state.lease import Lease, Outlook
from farm.state.migrate import require_current
from farm.state.store import KeywordStore
from farm.threads import single_thread_pool
from farm.writer.process import StateWriter

if TYPE_CHECKING:
    from scrapy.core.engine import _Slot  # Scrapy's private engine slot (see engine_slot)

logger = logging.getLogger(__name__)

# Seconds between looks at a starting crawl that spawned its writer: has it started, or failed to?
START_CHECK_INTERVAL = 0.5

# what farm.spiders.base.LeaseSpider has that a Scrapy spider has not
LEASE_SPIDER_METHODS = ("page_request", "page_of", "parse_search", "page_error")

P = ParamSpec("P")
T = TypeVar("T")


class CrawlParts(PagingParts):
    """The crawl's parts, a Scrapy extension (see the module docstring)."""

    def __init__(
        self,
        crawler: Crawler,
        config: FarmConfig,
        store: KeywordStore,
        crawler_id: str,
        checkpoint: Checkpoint | None = None,
        refused: str | None = None,
        jobdir_lock: JobdirLock | None = None,
    ):
        self.crawler = crawler
        self.stats = crawler.stats
        self.config = config
        self.store = store
        self.crawler_id = crawler_id
        self.window = PageWindow(config.pages_in_flight, on_room=self.wake)
        self._pool = single_thread_pool("farm-db")  # the DB thread; started by start()
        self.writer: StateWriter | None = None  # the state writer process; spawned by start()
        self.outbox = Outbox(
            None,  # the writer, once spawned
            crawler.stats,
            config.sql_batch_size,
            config.sql_flush_interval,
            on_lost=lambda reason: self.close_crawl("farm_db_error"),
        )
        self.registry = KeywordRegistry(crawler, self)  # the keywords this crawl holds
        self.progress = PageProgress(crawler, self.registry, self.outbox)
        self.paging = KeywordPaging(crawler, self.registry, self.progress)  # the pages each asks for
        # JOBDIR: the crawl's checkpoint (farm.crawl.backends.checkpoint.Checkpoint), else None; ``refused``: why
        # the crawl must close at once (the JOBDIR holds another spider's checkpoint)
        self.checkpoint = checkpoint
        self.refused = refused
        self.jobdir_lock = jobdir_lock  # JOBDIR: this crawl's hold on it (farm.crawl.backends.joblock)
        # FARM_WORK_BACKEND: where the pages wait (farm.crawl.backends), with the site's pace and the
        # FARM_PROXIES pool page requests take their proxy from (None without), which it shares as it must
        self.backend = build_backend(crawler, self)
        self.pace = self.backend.pace
        self.proxies = self.backend.proxies
        self.identities = self.backend.identities
        self._wake_call: IDelayedCall | None = None
        self._started = False

    @staticmethod
    def serves(crawler: Crawler) -> bool:
        """Whether the crawl is farm's: its spider pulls keyword leases (a LeaseSpider, known by the
        page request, page reading and callback every LeaseSpider has: the crawl imports no spider)."""
        return all(callable(getattr(crawler.spidercls, name, None)) for name in LEASE_SPIDER_METHODS)

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> "CrawlParts":
        """Every part of the crawl, built now; NotConfigured for a spider not of farm's."""
        if not cls.serves(crawler):
            raise NotConfigured("not a farm LeaseSpider: no keyword leases, progress or postings")
        parts = cls.from_settings(crawler)
        crawler.signals.connect(parts.engine_stopped, signal=signals.engine_stopped)
        crawler.signals.connect(parts.spider_closed, signal=signals.spider_closed)
        if crawler.crawling:  # a crawl is starting, not a test or a tool building the parts
            parts.spawn_writer()
            parts._watch_start()
        return parts

    @classmethod
    def from_settings(cls, crawler: Crawler) -> "CrawlParts":
        """Check the settings and the database, then build (FarmStartError names what is wrong)."""
        settings = crawler.settings
        require_farm_scheduler(settings)
        try:
            config = FarmConfig.of(crawler)
        except SettingError as exc:  # a crawl not started by `scrapy crawl` (farm.commands.crawl)
            logger.error("farm: %s", exc)  # its one line
            raise
        store = KeywordStore.from_config(config)
        try:
            require_current(store.engine)
        except DBAPIError as exc:
            raise start_failed(
                f"cannot reach the database at FARM_DB_URL={mask_url(config.db_url)!r}: "
                f"{str(exc.orig or exc).strip().splitlines()[0]}",
                config.db_url,
            ) from None
        crawler_id = config.crawler_id
        lock, checkpoint, refused = open_jobdir(crawler, store, crawler_id)
        if checkpoint is not None:
            crawler_id = checkpoint.crawler_id  # a resumed crawl is the same holder
        try:
            return cls(
                crawler,
                config,
                store,
                crawler_id,
                checkpoint=checkpoint,
                refused=refused,
                jobdir_lock=lock,
            )
        except BaseException:
            if lock is not None:
                lock.release()
            raise

    def start(self) -> None:
        """Start the DB thread and the state writer process (once): the scheduler's ``open`` calls it,
        the one place the parts start, before it opens the backend."""
        if self._started:
            return
        self._started = True
        self._pool.start()
        self.spawn_writer()

    def spawn_writer(self) -> None:
        """Spawn the state writer process (once)."""
        if self.writer is not None:
            return
        self.writer = StateWriter.spawn(self.store)
        self.outbox.connect(self.writer)

    def _watch_start(self) -> None:
        """Close the writer of a crawl whose start failed after it was spawned (a later component
        refused its setting): such a crawl never stops an engine, and its process may live on."""
        if self._started or self.writer is None:
            return
        if not self.crawler.crawling:
            self.writer.close()
            return
        reactor.callLater(START_CHECK_INTERVAL, self._watch_start)

    @property
    def site(self) -> str:
        spidercls = self.crawler.spidercls
        return (getattr(spidercls, "site", None) or spidercls.name).lower()

    @property
    def prefetch(self) -> int:
        """How many requests the crawl may hold at once: its page window."""
        return self.window.size

    def claim(
        self, source: str, wanted: int, skip: frozenset[int], held: frozenset[LeaseKey]
    ) -> Deferred[tuple[list[Lease], Outlook | None]]:
        """KeywordStore.claim_or_outlook for this crawler: made by the state writer once it has
        started, off this process's GIL; on the DB thread before (the writer takes a third of a
        second to start, and the crawl's first claim would wait for it)."""
        if self.writer is not None and self.writer.ready:
            return self.outbox.claim(source, self.crawler_id, wanted, skip, held)
        return self.run(self.store.claim_or_outlook, source, self.crawler_id, wanted, skip, held)

    def wake(self) -> None:
        """Have the engine ask the scheduler again now (it would at its next 5 s heartbeat)."""
        slot = engine_slot(self.crawler)  # none: nothing to wake; the heartbeat is the fallback
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
        try:
            engine = self.crawler.engine
        except RuntimeError:  # the crawl has not started: nothing to close
            return
        if engine.spider is None:
            return  # closed already (a late failure of work the close left): nothing to close
        deferred_from_coro(engine.close_spider_async(reason=reason))

    def run(self, function: Callable[P, T], *args: P.args, **kwargs: P.kwargs) -> Deferred[T]:
        """Run ``function`` on the DB thread; a Deferred of its result."""
        # the reactor Scrapy runs provides IReactorFromThreads (twisted.internet's ``reactor`` is typed with
        # the interfaces every reactor has)
        return deferToThreadPool(cast(IReactorFromThreads, reactor), self._pool, function, *args, **kwargs)

    def learned_paces(self) -> dict[str, float]:
        """identity id -> the pace the site's identities learned in past runs (farm.state.identities)."""
        return learned_paces(self.store.engine, self.site)

    def spider_closed(self, spider: object, reason: str) -> None:
        """The identities' learned paces and states into the stats (before the run's row takes them,
        farm.extensions.runs), and their paces into the database for the next run: on the DB thread,
        which finishes it before it stops (``engine_stopped``)."""
        self.identities.note_stats()
        d = self.run(keep_learned_paces, self.store.engine, self.site, self.identities.learned_paces())
        d.addErrback(lambda failure: logger.warning("farm: keeping the learned paces failed: %s", failure.value))

    async def engine_stopped(self) -> None:
        self._stop_sending()
        try:
            await maybe_deferred_to_future(defer.maybeDeferred(self.backend.leave))
        except Exception as exc:
            logger.warning("farm: leaving the work backend failed: %s", exc)
        # stopping the pool joins its thread, which may still be in a database call: not on the reactor
        await maybe_deferred_to_future(threads.deferToThread(self._close_database))
        self._release_jobdir()  # last: the checkpoint's own engine_stopped has saved or removed it by now

    def _release_jobdir(self) -> None:
        if self.jobdir_lock is not None:
            self.jobdir_lock.release()

    def close(self) -> None:
        """``engine_stopped``, blocking: for tests and tools that built the parts without a crawl."""
        self._stop_sending()
        self.backend.leave(give_back=False)
        self._close_database()
        self._release_jobdir()

    def _stop_sending(self) -> None:
        # every write the crawl waits for has been answered by now: the writer exits at once
        self.outbox.close()
        if self.writer is not None:
            self.writer.close()
        if self._wake_call is not None and self._wake_call.active():
            self._wake_call.cancel()

    def _close_database(self) -> None:
        if not self.registry.database_silent:
            # else its thread may be in the give-back the database never answered: a daemon, it is
            # left to end with the process, which does not wait for it
            self._pool.stop()
        self.store.engine.dispose()


class FarmExtension:
    """A farm extension built beside the parts: Scrapy's ``get_extension`` answers only once every
    extension is built, so it checks the crawl is farm's when built and takes the parts on first use."""

    crawler: Crawler  # set by each extension's __init__

    @staticmethod
    def require_farm_spider(crawler: Crawler) -> None:
        if not CrawlParts.serves(crawler):
            raise NotConfigured("not a farm LeaseSpider")

    @cached_property
    def parts(self) -> CrawlParts:
        return cast(CrawlParts, self.crawler.get_extension(CrawlParts))  # built: require_farm_spider saw to it


def engine_slot(crawler: Crawler) -> "_Slot | None":
    """The engine's slot while a spider is open, else None.

    Scrapy has no public way to have the engine ask the scheduler again now (``slot.nextcall``)
    nor to tell that it is closing (``slot.closing``): this is the one place farm reads a private
    attribute of Scrapy's."""
    try:
        engine = crawler.engine
    except RuntimeError:  # the crawl has not started
        return None
    return getattr(engine, "_slot", None)
