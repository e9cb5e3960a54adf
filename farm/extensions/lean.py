"""Costs a long crawl need not pay on every item, cut once when the spider opens.

- Python's garbage collections: the heap built at start is frozen, and young
  objects are collected rarely (farm.heap says why and what it saved); as they
  were once the spider closes.
- Scrapy sets its loggers to DEBUG (and the root logger to NOTSET) and filters
  at its handler, so every debug call ("Scraped from ...", per item) builds a
  LogRecord only to drop it. Each such logger is raised to the lowest level
  any handler it reaches takes, so nothing that would have been written is lost.

Both change the whole process, not only the crawl, so the extension runs only where a
project lists it: ``EXTENSIONS = {"farm.extensions.lean.LeanProcess": 130}`` (farm's own
settings do; the add-on, farm.addon, does not).
"""

import logging

from scrapy import signals

from farm.heap import lean_heap, restore


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
        self.thresholds = lean_heap()
        loggers = [logging.getLogger()] + [
            logger
            for logger in logging.Logger.manager.loggerDict.values()
            if isinstance(logger, logging.Logger) and logger.level != logging.NOTSET
        ]
        for logger in loggers:
            lowest = _lowest_handled_level(logger)
            if lowest is not None and logger.getEffectiveLevel() < lowest:
                logger.setLevel(lowest)

    def spider_closed(self, spider):
        if self.thresholds is not None:
            restore(self.thresholds)
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
