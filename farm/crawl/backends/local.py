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

from scrapy.core.scheduler import Scheduler
from scrapy.dupefilters import RFPDupeFilter
from scrapy.utils.misc import build_from_crawler, load_object

from farm.crawl.backends.base import WorkBackend


class LocalBackend(WorkBackend):
    def __init__(self, queue: Scheduler, checkpoint=None):
        self.queue = queue  # Scrapy's scheduler: its queues and dupefilter
        self.checkpoint = checkpoint  # JOBDIR: farm.crawl.backends.checkpoint.Checkpoint, else None

    @classmethod
    def from_crawler(cls, crawler, checkpoint=None, jobdir_is_farms: bool = False) -> "LocalBackend":
        """``jobdir_is_farms``: JOBDIR holds farm's checkpoint, so Scrapy's queue keeps none there."""
        queue = _without_jobdir(crawler) if jobdir_is_farms else Scheduler.from_crawler(crawler)
        return cls(queue, checkpoint)

    def join(self, spider):
        return self.queue.open(spider)

    def close(self, reason: str) -> None:
        self.queue.close(reason)

    def enqueue(self, request) -> bool:
        lease = request.meta.get("farm_lease")
        if lease is not None and self.checkpoint is not None:
            self.checkpoint.queued(lease.key, request.meta["farm_page"])
        return self.queue.enqueue_request(request)

    def fetch(self):
        return self.queue.next_request()

    def has_pending(self) -> bool:
        return self.queue.has_pending_requests()

    def __len__(self) -> int:
        return len(self.queue)


def _without_jobdir(crawler) -> Scheduler:
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
