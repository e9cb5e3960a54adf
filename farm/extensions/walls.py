"""WallNotes: the walls a crawl meets and passes, and its identities, written into its run's row as they
happen, not only at its close, so that `farm stats` and the report (farm.state.doors,
farm.state.identities) tell the door and the identities as they stand mid-crawl.

Every second it compares the crawl's wall numbers (``farm/wall/met``, ``farm/wall/met/<wall>``,
``farm/session/earned``, ``farm/wall/not_passed/<kind>``) and its identities' (``farm/identity/<label>/...``:
pages, blocks, sessions, session pages, and the learned pace and state noted at that moment,
farm.crawl.identities) with the ones it last wrote; when they changed, it writes them into the ``stats`` of
the run's row (farm.runs.record.note_walls) on the crawl's DB thread. The row's id is the one
farm.extensions.runs.RunLog opened (``farm/runs/id``); RunLog's close writes every stat over them. A failed
write is logged and counted (``farm/runs/error``).
"""

import logging

from scrapy import signals
from twisted.internet.task import LoopingCall

from farm.crawl.parts import FarmExtension
from farm.runs.record import note_walls

logger = logging.getLogger(__name__)

TICK = 1.0  # seconds between two looks at the wall numbers: a wall passed shows in `farm stats` this soon
WALL_STATS = ("farm/wall/", "farm/session/earned", "farm/identity/")


class WallNotes(FarmExtension):
    def __init__(self, crawler, tick: float = TICK):
        self.crawler = crawler
        self.stats = crawler.stats
        self.tick = tick
        self._task = LoopingCall(self.note)
        self._written: dict = {}
        self._writing = False

    @classmethod
    def from_crawler(cls, crawler):
        cls.require_farm_spider(crawler)
        ext = cls(crawler)
        crawler.signals.connect(ext.spider_opened, signal=signals.spider_opened)
        crawler.signals.connect(ext.spider_closed, signal=signals.spider_closed)
        return ext

    def spider_opened(self, spider):
        self._task.start(self.tick, now=False)

    def spider_closed(self, spider, reason):
        if self._task.running:
            self._task.stop()

    def walls(self) -> dict:
        """The crawl's wall and identity numbers now."""
        self.parts.identities.note_stats()
        return {name: value for name, value in self.stats.get_stats().items() if name.startswith(WALL_STATS)}

    def note(self) -> None:
        run_id = self.stats.get_value("farm/runs/id")
        walls = self.walls()
        if self._writing or run_id is None or walls == self._written:
            return
        self._writing = True
        d = self.parts.run(note_walls, self.parts.store.engine, run_id, walls)
        d.addCallbacks(lambda _: self._written.update(walls), self._failed)
        d.addBoth(self._done)

    def _done(self, _):
        self._writing = False

    def _failed(self, failure):
        self.stats.inc_value("farm/runs/error")
        logger.error("farm: the walls passed could not be written to the run table: %s", failure.getErrorMessage())
