"""LeanProcess: the startup heap frozen, debug records not built when no handler takes them."""

import gc
import logging

import pytest
from scrapy.utils.test import get_crawler

from farm.extensions.lean import LeanProcess


@pytest.fixture
def lean():
    return LeanProcess.from_crawler(get_crawler())


@pytest.fixture
def root_logger(lean):
    root, scrapy_logger = logging.getLogger(), logging.getLogger("scrapy")
    saved = root.level, root.handlers[:], scrapy_logger.level
    root.setLevel(logging.NOTSET)
    scrapy_logger.setLevel(logging.DEBUG)  # as Scrapy's configure_logging leaves it
    yield root
    root.setLevel(saved[0])
    root.handlers = saved[1]
    scrapy_logger.setLevel(saved[2])
    gc.unfreeze()


def test_freezes_the_heap_and_raises_the_root_logger_to_its_handlers_level(lean, root_logger):
    root_logger.handlers = [logging.NullHandler(logging.INFO)]  # pytest's own capture handlers out
    lean.spider_opened(spider=None)
    assert gc.get_freeze_count() > 0
    assert root_logger.level == logging.INFO
    assert logging.getLogger("scrapy").level == logging.INFO  # Scrapy sets it to DEBUG
    assert not logging.getLogger("scrapy.core.scraper").isEnabledFor(logging.DEBUG)
    assert logging.getLogger("scrapy.core.scraper").isEnabledFor(logging.INFO)


def test_a_handler_that_takes_everything_keeps_debug_records(lean, root_logger):
    root_logger.handlers = [logging.NullHandler(logging.INFO), logging.NullHandler(logging.NOTSET)]
    lean.spider_opened(spider=None)
    assert root_logger.level == logging.NOTSET
    assert logging.getLogger("scrapy").level == logging.DEBUG
    assert logging.getLogger("farm").isEnabledFor(logging.DEBUG)
