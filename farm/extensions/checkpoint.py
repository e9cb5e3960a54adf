"""Pause and resume with JOBDIR: the crawl's checkpoint, saved every FARM_CHECKPOINT_INTERVAL.

On only when JOBDIR is set (``scrapy crawl qcwy -s JOBDIR=dir``; scrapyd sets it per job
with ``jobs_dir``), for farm's spiders. The file and why it is sound are in
farm.crawl.backends.checkpoint; who notes what:

- the keyword registry (farm.crawl.registry) notes every keyword claimed (or taken
  back), takes back at start the keywords a resumed checkpoint held, and drops a
  keyword once its end is settled (completed, failed, blocked, lost);
- the farm scheduler notes every page request it queues (it keeps no disk queue of
  Scrapy's when JOBDIR is set: this replaces it);
- the registry notes every page recorded or given up;
- this extension writes what changed once per tick, in one transaction.

Pause: the first SIGINT or SIGTERM (scrapyd's cancel.json) closes the crawl as
Scrapy does (``shutdown``): nothing new is claimed, what is in flight finishes, the
keywords held are released ``partial`` and stay in the checkpoint, which is saved
one last time; the crawl exits 0 and says how to resume. A second signal stops at
once, like a kill: the last tick's commit stands. A crawl that finishes removes its
checkpoint; one that closes for any other reason keeps it.
"""

import logging
from functools import cached_property

from scrapy import signals as scrapy_signals
from scrapy.exceptions import NotConfigured
from scrapy.utils.job import job_dir
from twisted.internet.task import LoopingCall

from farm.config import FarmConfig
from farm.crawl.parts import FarmExtension

logger = logging.getLogger(__name__)


class JobCheckpoint(FarmExtension):
    def __init__(self, crawler, jobdir: str, interval: float):
        self.crawler = crawler
        self.jobdir = jobdir
        self.interval = interval
        self.stats = crawler.stats
        self.reason = None  # why the crawl closed, once it has
        self._tick = LoopingCall(self.save)

    @classmethod
    def from_crawler(cls, crawler):
        jobdir = job_dir(crawler.settings)
        if not jobdir:
            raise NotConfigured("JOBDIR is not set")
        cls.require_farm_spider(crawler)
        ext = cls(crawler, jobdir, FarmConfig.of(crawler).checkpoint_interval)  # above 0, checked
        crawler.signals.connect(ext.spider_opened, signal=scrapy_signals.spider_opened)
        crawler.signals.connect(ext.spider_closed, signal=scrapy_signals.spider_closed)
        crawler.signals.connect(ext.engine_stopped, signal=scrapy_signals.engine_stopped)
        return ext

    @cached_property
    def checkpoint(self):
        """The crawl's checkpoint (farm.crawl.backends.checkpoint), which the crawl's parts opened;
        None when the JOBDIR holds another spider's: that crawl closes at once, with nothing to save."""
        return self.parts.checkpoint

    def spider_opened(self, spider):
        if self.checkpoint is not None:
            self._tick.start(self.interval, now=False)

    def save(self):
        try:
            changes = self.checkpoint.flush()
        except Exception as exc:
            self.stats.inc_value("farm/checkpoint/save_error")
            logger.error(
                "farm: saving the checkpoint in JOBDIR=%s failed (kept for the next try): %s", self.jobdir, exc
            )
            return
        if changes:
            self.stats.inc_value("farm/checkpoint/saves")
            self.stats.inc_value("farm/checkpoint/changes", changes)

    def spider_closed(self, spider, reason):
        self.reason = reason

    def engine_stopped(self):
        # after every spider_closed handler: the leases released at a pause are still noted
        if self._tick.running:
            self._tick.stop()
        if self.checkpoint is None:
            return
        reason = self.reason
        if reason == "finished":
            self.checkpoint.file.remove()
            logger.info("farm: the crawl finished: its checkpoint in JOBDIR=%s is removed", self.jobdir)
            return
        self.save()
        self.checkpoint.file.close()
        if reason == "shutdown":
            logger.info(
                "farm: paused; to resume, run the same command with the same JOBDIR=%s "
                "(on scrapyd: schedule the same jobid)",
                self.jobdir,
            )
