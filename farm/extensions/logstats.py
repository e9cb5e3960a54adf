"""A progress line people can read, every FARM_LOGSTATS_INTERVAL seconds.

    farm qcwy: keywords 12 done, 8 in flight, 340 left | pages 1210 (402/min) |
    postings 23817 | blocks 3 | ETA 14:32 (in 1h05m)

"left" is what the keyword table could still hand out today (any crawler);
the ETA divides it by this crawl's rate of finished keywords.
"""

import logging
import time
from datetime import timedelta

from scrapy import signals
from scrapy.exceptions import NotConfigured
from twisted.internet.task import LoopingCall

from farm.config import FarmConfig
from farm.crawl.parts import FarmExtension
from farm.state.clock import utcnow

logger = logging.getLogger(__name__)

ENDED = ("completed", "failed", "blocked", "released")


class FarmLogStats(FarmExtension):
    def __init__(self, crawler, interval: float):
        self.crawler = crawler
        self.interval = interval
        self.stats = crawler.stats
        self._task = LoopingCall(self.log)
        self._started = None
        self._querying = False

    @classmethod
    def from_crawler(cls, crawler):
        cls.require_farm_spider(crawler)
        interval = FarmConfig.of(crawler).logstats_interval
        if interval <= 0:
            raise NotConfigured("FARM_LOGSTATS_INTERVAL is 0")
        ext = cls(crawler, interval)
        crawler.signals.connect(ext.spider_opened, signal=signals.spider_opened)
        crawler.signals.connect(ext.spider_closed, signal=signals.spider_closed)
        return ext

    def spider_opened(self, spider):
        self._started = time.monotonic()
        self._task.start(self.interval, now=False)

    def spider_closed(self, spider, reason):
        if self._task.running:
            self._task.stop()
        logger.info(self.line(left=None))

    @property
    def name(self) -> str:
        """The spider's name: the extension logs only while the spider is open."""
        spider = self.crawler.spider
        assert spider is not None
        return spider.name

    def log(self):
        if self._querying:
            return
        self._querying = True
        d = self.parts.run(self.parts.store.claimable, self.name)
        d.addCallbacks(lambda left: logger.info(self.line(left)), self._failed)
        d.addBoth(self._done)

    def _done(self, _):
        self._querying = False

    def _failed(self, failure):
        logger.warning("farm: could not count the keywords left: %s", failure.getErrorMessage())

    def line(self, left):
        value = self.stats.get_value
        done = sum(value(f"farm/keyword/{outcome}", 0) for outcome in ENDED)
        pages = value("farm/progress/pages", 0)
        elapsed = max(time.monotonic() - (self._started or time.monotonic()), 1e-6)
        held = sum(1 for run in self.parts.registry.runs.values() if getattr(run, "owned", True))
        parts = [
            f"farm {self.name}: keywords {done} done, {held} in flight" + ("" if left is None else f", {left} left"),
            f"pages {pages} ({pages * 60 / elapsed:.0f}/min)",
            f"postings {value('item_scraped_count', 0)}",
            f"blocks {value('farm/block/count', 0)}",
        ]
        if left:
            parts.append(self._eta(done, elapsed, left + held))
        return " | ".join(parts)

    def _eta(self, done, elapsed, remaining):
        if not done:
            return "ETA unknown (no keyword finished yet)"
        seconds = remaining * elapsed / done
        finish = utcnow().astimezone(self.parts.store.tz) + timedelta(seconds=seconds)
        hours, rest = divmod(int(seconds), 3600)
        return f"ETA {finish:%H:%M} (in {hours}h{rest // 60:02d}m)"
