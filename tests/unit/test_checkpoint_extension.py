"""The JOBDIR checkpoint extension, without a crawl: on only with JOBDIR, what it saves, how it ends."""

import logging

import pytest
from scrapy import signals as scrapy_signals
from scrapy.exceptions import NotConfigured

from farm.crawl.backends.checkpoint import FILE_NAME, open_checkpoint
from farm.crawl.keywordrun import Outcome
from farm.crawl.parts import CrawlParts
from farm.extensions.checkpoint import JobCheckpoint
from farm.state.lease import Lease
from tests.unit.components import make_crawler

ROWS = [("qcwy", "北京", "python")]


@pytest.fixture
def jobdir(tmp_path):
    return tmp_path / "job"


@pytest.fixture
def crawler(sqlite_url, jobdir):
    crawler = make_crawler(sqlite_url, ROWS, JOBDIR=str(jobdir), FARM_CRAWLER_ID="me")
    yield crawler
    crawler.get_extension(CrawlParts).close()


def send(crawler, signal, **kwargs):
    return crawler.signals.send_catch_log(signal, spider=crawler.spider, **kwargs)


def saved(crawler, jobdir):
    return open_checkpoint(jobdir, "qcwy", crawler.get_extension(CrawlParts).store.today().isoformat(), "other").saved


def lease(keyword_id, token):
    return Lease(
        id=keyword_id, source="qcwy", city="北京", job="python", lease_token=token, start_page=1, from_status="fresh"
    )


def test_it_is_off_without_jobdir(sqlite_url):
    crawler = make_crawler(sqlite_url, ROWS)
    try:
        with pytest.raises(NotConfigured, match="JOBDIR"):
            JobCheckpoint.from_crawler(crawler)
    finally:
        crawler.get_extension(CrawlParts).close()


def test_a_tick_saves_what_changed_and_an_ended_lease_goes(crawler, jobdir):
    ext = JobCheckpoint.from_crawler(crawler)
    checkpoint = crawler.get_extension(CrawlParts).checkpoint
    checkpoint.hold((1, 1))
    checkpoint.queued((1, 1), 1)
    checkpoint.hold((2, 1))
    ext.save()
    assert crawler.stats.get_value("farm/checkpoint/saves") == 1
    assert crawler.stats.get_value("farm/checkpoint/changes") == 3
    registry = crawler.get_extension(CrawlParts).registry
    registry.add(lease(1, 1))
    registry.end(lease(1, 1), Outcome("completed", written=True))
    ext.save()
    checkpoint.file.close()
    assert saved(crawler, jobdir).leases == {(2, 1)} and saved(crawler, jobdir).pages == {}


def test_a_pause_saves_keeps_the_checkpoint_and_says_how_to_resume(crawler, jobdir, caplog):
    ext = JobCheckpoint.from_crawler(crawler)
    crawler.get_extension(CrawlParts).checkpoint.hold((1, 1))  # released partial at the pause: still noted
    send(crawler, scrapy_signals.spider_closed, reason="shutdown")
    with caplog.at_level(logging.INFO):
        ext.engine_stopped()
    assert saved(crawler, jobdir).leases == {(1, 1)}
    assert f"farm: paused; to resume, run the same command with the same JOBDIR={jobdir}" in caplog.text


def test_a_finished_crawl_removes_its_checkpoint(crawler, jobdir):
    ext = JobCheckpoint.from_crawler(crawler)
    crawler.get_extension(CrawlParts).checkpoint.hold((1, 1))
    ext.save()
    send(crawler, scrapy_signals.spider_closed, reason="finished")
    ext.engine_stopped()
    assert not (jobdir / FILE_NAME).exists()
