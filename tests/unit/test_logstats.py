"""The progress line people read while a crawl runs."""

import re

import pytest

from farm.crawl.parts import CrawlParts
from farm.extensions.logstats import FarmLogStats
from tests.unit.components import component, make_crawler
from tests.unit.spider_helpers import make_lease


@pytest.fixture
def crawler(sqlite_url):
    crawler = make_crawler(sqlite_url, [("qcwy", "北京", "python")])
    yield crawler
    crawler.get_extension(CrawlParts).close()


def test_the_line_names_keywords_pages_postings_blocks_and_an_eta(crawler):
    ext = component(crawler, FarmLogStats)
    for name, value in {
        "farm/keyword/completed": 8,
        "farm/keyword/failed": 1,
        "farm/keyword/blocked": 1,
        "farm/progress/pages": 120,
        "item_scraped_count": 2400,
        "farm/block/count": 3,
    }.items():
        crawler.stats.set_value(name, value)
    for keyword_id in (1, 2):
        crawler.get_extension(CrawlParts).registry.add(make_lease("qcwy", id=keyword_id))
    line = ext.line(left=30)
    assert line.startswith("farm qcwy: keywords 10 done, 2 in flight, 30 left | pages 120 (")
    assert "| postings 2400 | blocks 3 |" in line
    assert re.search(r"ETA \d\d:\d\d \(in \d+h\d\dm\)$", line)


def test_no_eta_before_a_keyword_has_finished(crawler):
    line = component(crawler, FarmLogStats).line(left=5)
    assert line.endswith("ETA unknown (no keyword finished yet)")
