"""The state writer's process: a crawl spawns it with its first components, and closes it when its start
fails after that."""

import time
from pathlib import Path

import pytest
import pytest_twisted
from scrapy.crawler import Crawler
from scrapy.settings import Settings
from twisted.internet import reactor
from twisted.internet.defer import Deferred
from twisted.internet.task import deferLater

from farm.crawl.parts import CrawlParts
from farm.sites.qcwy.spider import QcwySpider
from farm.state.db import make_engine
from farm.state.store import KeywordStore
from tests.migrated import migrated
from tests.unit.components import farm_settings


def database_with_a_keyword(db_url):
    migrated(db_url)
    store = KeywordStore(make_engine(db_url))
    store.add_keywords([("qcwy", "北京", "python")])
    store.engine.dispose()


def alive(pid):
    """Whether the process exists and is not a zombie."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


@pytest_twisted.ensureDeferred
async def test_a_starting_crawl_spawns_its_writer_when_the_runtime_is_built_and_closes_it_if_the_start_fails(
    sqlite_url,
):
    # the writer takes a third of a second to start: a crawl starts it with its first components,
    # not when its scheduler opens; a start that fails after that (the block middleware cannot
    # load a RETRY_EXCEPTIONS entry, after the extensions built the runtime) never stops an engine: the runtime
    # closes the writer itself
    database_with_a_keyword(sqlite_url)
    settings = farm_settings(
        FARM_DB_URL=sqlite_url,
        FARM_QCWY_BASE_URL="http://sandbox.invalid",
        RETRY_EXCEPTIONS=["farm.no_such_module.Error"],
        REMOTE_CONTROL_ENABLED=False,
    )
    crawler = Crawler(QcwySpider, Settings(settings))
    with pytest.raises(ImportError, match="farm.no_such_module"):
        # a crawl that started after all would fail the test on the timeout, not run on
        await Deferred.fromCoroutine(crawler.crawl_async()).addTimeout(60, reactor)
    writer = crawler.get_extension(CrawlParts).writer
    assert writer is not None and alive(writer.transport.pid)
    pid = writer.transport.pid
    deadline = time.monotonic() + 20
    while alive(pid):
        assert time.monotonic() < deadline, "the writer of a crawl that failed to start is still running"
        await deferLater(reactor, 0.05, lambda: None)
