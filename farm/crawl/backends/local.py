"""The local work backend: Scrapy's own scheduler queues, in this process, and the JOBDIR checkpoint.

Requests wait in Scrapy's scheduler (its priority queue and dupefilter), held here, not
inherited: the farm scheduler (farm.crawl.scheduler) is the one the engine sees. Nothing is held
anywhere else, so ``is_finished`` is always True: the crawl ends when its own keywords have.

With JOBDIR set, a farm crawl's queue stays in memory and its dupefilter keeps no
``requests.seen``: Scrapy writes its disk queues' index only at a clean close, so after a kill -9
they report nothing pending while ``requests.seen`` refuses those requests for good. The JOBDIR
checkpoint (farm.crawl.backends.checkpoint) replaces both: every farm page request queued here is
noted in it, and a resumed crawl asks for its pages again. A spider not of farm's keeps Scrapy's
JOBDIR as is.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from scrapy import Request, Spider
from scrapy.core.scheduler import Scheduler
from scrapy.crawler import Crawler
from scrapy.dupefilters import RFPDupeFilter
from scrapy.utils.misc import build_from_crawler, load_object
from twisted.internet.defer import Deferred

from farm.crawl.backends.base import Crawl, Peers, WorkBackend, identity_settings, pace_settings
from farm.crawl.identities import Identities, IdentityPace
from farm.crawl.meta import FarmMeta
from farm.crawl.pace import SitePace
from farm.crawl.proxies import proxy_pool_from

if TYPE_CHECKING:
    from farm.config import FarmConfig
    from farm.crawl.backends.checkpoint import Checkpoint


class LocalBackend(WorkBackend):
    """This process's queue; shared with no one (``peers`` are none)."""

    def __init__(self, queue: Scheduler, checkpoint: Checkpoint | None = None, pace: SitePace | None = None):
        self.queue = queue  # Scrapy's scheduler: its queues and dupefilter
        self.checkpoint = checkpoint  # JOBDIR: farm.crawl.backends.checkpoint.Checkpoint, else None
        self.pace = pace if pace is not None else SitePace(0, 0, 0)
        self.identities = Identities(None, lambda _: IdentityPace(0, 0, 0))
        self.peers = Peers()

    @classmethod
    def from_crawler(cls, crawler: Crawler, crawl: Crawl | None = None) -> LocalBackend:
        """For a spider not of farm's (no ``crawl``): Scrapy's scheduler, JOBDIR and all. For farm's,
        a JOBDIR holds farm's checkpoint, so Scrapy's queue keeps none there."""
        if crawl is None:
            return cls(Scheduler.from_crawler(crawler))
        jobdir_is_farms = crawl.checkpoint is not None or crawl.refused is not None
        queue = _without_jobdir(crawler) if jobdir_is_farms else Scheduler.from_crawler(crawler)
        backend = cls(queue, crawl.checkpoint, SitePace(*pace_settings(crawl)))
        backend.proxies = proxy_pool_from(crawler)
        rate, base_delay, max_delay = identity_settings(crawl)
        learned = crawl.learned_paces()
        backend.identities = Identities(
            backend.proxies,
            lambda identity: IdentityPace(rate, base_delay, max_delay, learned.get(identity)),
            crawler.stats,
        )
        return backend

    @classmethod
    def check(cls, config: FarmConfig, timeout: float) -> str:
        return "this process's own queue (FARM_REDIS_URL shares the work between processes)"

    def open(self, spider: Spider) -> Deferred[None] | None:
        return self.queue.open(spider)

    def close(self, reason: str) -> None:
        self.queue.close(reason)

    def enqueue(self, request: Request) -> bool:
        farm = FarmMeta.of(request)
        lease = farm.lease
        if lease is not None and self.checkpoint is not None:
            self.checkpoint.queued(lease.key, farm.page)
        return self.queue.enqueue_request(request)

    def fetch(self) -> Request | None:
        return self.queue.next_request()

    def __len__(self) -> int:
        return len(self.queue)

    def fetches_what_it_enqueues(self) -> bool:
        return True  # Scrapy's queue, in this process's memory


def _without_jobdir(crawler: Crawler) -> Scheduler:
    """Scrapy's scheduler as its ``from_crawler`` builds it, but on memory queues and without the
    dupefilter's ``requests.seen``: the checkpoint keeps the queue instead."""
    settings = crawler.settings
    dupefilter_cls = load_object(settings["DUPEFILTER_CLASS"])
    if issubclass(dupefilter_cls, RFPDupeFilter):
        dupefilter = dupefilter_cls(
            None, settings.getbool("DUPEFILTER_DEBUG"), fingerprinter=crawler.request_fingerprinter
        )
    else:
        dupefilter = build_from_crawler(dupefilter_cls, crawler)
    return Scheduler(
        dupefilter=dupefilter,
        jobdir=None,
        dqclass=load_object(settings["SCHEDULER_DISK_QUEUE"]),
        mqclass=load_object(settings["SCHEDULER_MEMORY_QUEUE"]),
        logunser=settings.getbool("SCHEDULER_DEBUG"),
        stats=crawler.stats,
        pqclass=load_object(settings["SCHEDULER_PRIORITY_QUEUE"]),
        crawler=crawler,
    )
