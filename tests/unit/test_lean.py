"""LeanProcess: the startup heap frozen, debug records not built when no handler takes them."""

import gc
import json
import logging

import pytest
from scrapy.utils.test import get_crawler

from farm.extensions.lean import LeanProcess
from farm.heap import YOUNG_COLLECTION_THRESHOLD


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
    lean.spider_closed(spider=None)


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


def test_the_youngest_generation_is_collected_far_less_often_while_the_crawl_runs(lean, root_logger):
    # at 700, a page's parsed JSON (thousands of containers, alive while its postings are handled) ran
    # several collections a page and 25 full ones a crawl: 0.5 to 0.9 s of a 5 s crawl
    before = gc.get_threshold()
    lean.spider_opened(spider=None)
    assert gc.get_threshold() == (max(YOUNG_COLLECTION_THRESHOLD, before[0]), *before[1:])
    collections = []
    gc.callbacks.append(lambda phase, info: collections.append(info["generation"]) if phase == "start" else None)
    try:
        pages = [json.loads(PAGE) for _ in range(8)]  # a page window's worth of parsed pages, alive at once
        assert sum(len(page["items"]) for page in pages) == 8 * 20
        del pages
    finally:
        gc.callbacks.pop()
    assert collections == []
    lean.spider_closed(spider=None)
    assert gc.get_threshold() == before


# the shape of a site's page: 20 postings of a few dozen fields each
PAGE = json.dumps({"items": [{f"field{i}": [{"k": i}, {"v": [i, str(i)]}] for i in range(30)} for _ in range(20)]})
