"""Three costs a long crawl need not pay on every item, cut once when the spider opens.

- Python's full garbage collections walk every live object, and a crawl keeps
  all it built at start (Scrapy, Twisted, SQLAlchemy: some 120,000 objects).
  Frozen (``gc.freeze``), they are skipped; what the crawl allocates later is
  collected as before. Scrapy spent a fifth of a crawl's CPU on those walks.
- Python collects its youngest objects every 700 container objects allocated
  and not yet freed. A page's parsed JSON alone is thousands, alive while its
  postings are handled, so every page ran several collections that found it
  alive and moved it to the older generations, which then took 25 full
  collections a crawl: 0.5 to 0.9 s of a 1,600-page crawl of 5 s, for a few
  hundred objects freed. At 50,000 (``YOUNG_COLLECTION_THRESHOLD``) a crawl runs
  about none; garbage in reference cycles, the only kind a collection frees,
  is still freed when that many have piled up. Restored when the spider closes.
- Scrapy sets its loggers to DEBUG (and the root logger to NOTSET) and filters
  at its handler, so every debug call ("Scraped from ...", per item) builds a
  LogRecord only to drop it. Each such logger is raised to the lowest level
  any handler it reaches takes, so nothing that would have been written is lost.

Disable with ``EXTENSIONS = {"farm.extensions.lean.LeanProcess": None}``.
"""

import gc
import logging

from scrapy import signals


# container objects allocated and not yet freed before Python collects its youngest generation
YOUNG_COLLECTION_THRESHOLD = 50_000


class LeanProcess:
    def __init__(self):
        self.thresholds = None  # Python's, while the crawl runs with its own

    @classmethod
    def from_crawler(cls, crawler):
        ext = cls()
        crawler.signals.connect(ext.spider_opened, signal=signals.spider_opened)
        crawler.signals.connect(ext.spider_closed, signal=signals.spider_closed)
        return ext

    def spider_opened(self, spider):
        gc.freeze()
        self.thresholds = gc.get_threshold()
        gc.set_threshold(max(YOUNG_COLLECTION_THRESHOLD, self.thresholds[0]), *self.thresholds[1:])
        loggers = [logging.getLogger()] + [
            logger for logger in logging.Logger.manager.loggerDict.values()
            if isinstance(logger, logging.Logger) and logger.level != logging.NOTSET
        ]  # fmt: skip
        for logger in loggers:
            lowest = _lowest_handled_level(logger)
            if lowest is not None and logger.getEffectiveLevel() < lowest:
                logger.setLevel(lowest)

    def spider_closed(self, spider):
        if self.thresholds is not None:
            gc.set_threshold(*self.thresholds)
            self.thresholds = None


def _lowest_handled_level(logger) -> int | None:
    """The lowest level any handler a record of ``logger`` reaches will take, or None without handlers."""
    levels = []
    while logger is not None:
        levels += [handler.level for handler in logger.handlers]
        if not logger.propagate:
            break
        logger = logger.parent
    return min(levels) if levels else None
