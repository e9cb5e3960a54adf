"""The keyword registry: the one owner of the crawl's running keywords, ending each by one verb."""

import threading
import time

import pytest
import pytest_twisted
from scrapy.statscollectors import MemoryStatsCollector
from scrapy.utils.defer import deferred_from_coro
from scrapy.utils.test import get_crawler

from farm.commands.crawl import ended_on_outage
from farm.crawl.keywordrun import Outcome
from farm.crawl.parts import CrawlParts
from farm.crawl.registry import GIVE_BACK_TIMEOUTS
from tests.unit.components import db_barrier, keyword_row, keywords_ended, make_crawler

ROWS = [("qcwy", "北京", "python"), ("qcwy", "上海", "java")]


@pytest.fixture
def crawler(sqlite_url):
    crawler = make_crawler(sqlite_url, ROWS)
    yield crawler
    crawler.get_extension(CrawlParts).close()


@pytest.fixture
def ended(crawler):
    return keywords_ended(crawler)


def held(crawler, pages=()):
    """A keyword claimed and held, with ``pages`` asked for and taken from the queue."""
    runtime = crawler.get_extension(CrawlParts)
    [lease] = runtime.store.claim("qcwy", "test", 1)
    [lease] = runtime.registry.hold([lease])
    run = runtime.registry.runs[lease.key]
    run.ask(pages)
    for page in pages:
        runtime.window.enter(lease.key, page)
        run.taken(page)
    return lease


def test_readers_get_a_read_only_view(crawler):
    registry = crawler.get_extension(CrawlParts).registry
    lease = held(crawler)
    with pytest.raises(TypeError):
        registry.runs[lease.key] = None  # type: ignore[index]
    assert crawler.spider.crawl_paging.registry.runs[lease.key] is registry.runs[lease.key]


def test_a_claim_held_again_is_not_new_and_becomes_this_workers(crawler):
    registry = crawler.get_extension(CrawlParts).registry
    [lease] = crawler.get_extension(CrawlParts).store.claim("qcwy", "test", 1)
    registry.add(lease, owned=False)
    assert registry.hold([lease]) == []
    assert registry.runs[lease.key].owned


@pytest_twisted.ensureDeferred
async def test_an_end_waits_for_the_pages_its_keyword_is_fetching_and_is_signalled_once(crawler, ended):
    registry = crawler.get_extension(CrawlParts).registry
    lease = held(crawler, pages=(1, 2))
    registry.end(lease, Outcome("failed", "HTTP 404 at page 2", page=2))
    registry.end(lease, Outcome("failed", "a later end"))  # the first decided wins
    await db_barrier(crawler)
    assert keyword_row(crawler, lease.id)["crawl_status"] == "crawling"  # page 1 is still being fetched
    registry.give_up(lease, 1)
    await db_barrier(crawler)
    row = keyword_row(crawler, lease.id)
    assert (row["crawl_status"], row["error_message"]) == ("failed", "HTTP 404 at page 2")
    assert ended == [(lease.id, Outcome("failed", "HTTP 404 at page 2", written=True))]
    assert lease.key not in registry.runs and not crawler.get_extension(CrawlParts).window.pages
    assert lease.id not in registry.given_up


@pytest_twisted.ensureDeferred
async def test_a_blocked_keyword_is_not_claimed_again_by_this_crawl(crawler, ended):
    registry = crawler.get_extension(CrawlParts).registry
    lease = held(crawler)
    registry.end(lease, Outcome("blocked", "boss_37"))
    assert registry.given_up == {lease.id}  # noted when decided, before its release is written
    await db_barrier(crawler)
    assert ended == [(lease.id, Outcome("blocked", "boss_37", written=True))]


def test_an_end_written_already_settles_at_once_and_writes_nothing(crawler, ended):
    runtime = crawler.get_extension(CrawlParts)
    lease = held(crawler)
    runtime.registry.end(lease, Outcome("completed", written=True))
    assert ended == [(lease.id, Outcome("completed", written=True))]
    assert runtime.registry.runs == {} and not runtime.outbox.queued


@pytest_twisted.ensureDeferred
async def test_the_give_back_at_close_is_one_write_and_one_deadline_for_every_keyword(sqlite_url):
    # each keyword was given back in its own write, one after another on the database thread: a silent
    # database cost its whole wait once per keyword
    crawler = make_crawler(sqlite_url, ROWS, FARM_DB_TIMEOUT=0.1)
    runtime = crawler.get_extension(CrawlParts)
    first, second = held(crawler), held(crawler)
    runtime.outbox.lost = "the state writer failed"  # the give-back goes through the database thread
    silent = threading.Event()
    answered = runtime.run(silent.wait, 30)  # the database thread waits on a database that does not answer
    try:
        started = time.monotonic()
        await deferred_from_coro(runtime.registry.release("farm_db_error"))  # as Scrapy runs it
        assert time.monotonic() - started < 5 * GIVE_BACK_TIMEOUTS * 0.1  # one deadline, not one each
        assert crawler.stats.get_value("farm/lease/release_lost") == 2 and runtime.registry.database_silent
        assert keyword_row(crawler, first.id)["crawl_status"] == "crawling"  # left to its lease's expiry
    finally:
        silent.set()
    await answered
    await runtime.run(lambda: None)  # the give-back written late, in one transaction
    assert {keyword_row(crawler, lease.id)["crawl_status"] for lease in (first, second)} == {"partial"}
    runtime.close()


@pytest.mark.parametrize(
    "stats, failed",
    [
        ({"finish_reason": "finished"}, False),
        ({"finish_reason": "shutdown"}, False),
        ({"finish_reason": "farm_db_error"}, True),
        ({"finish_reason": "farm_redis_error"}, True),
        ({"finish_reason": "finished", "farm/lease/release_lost": 3}, True),
    ],
)
def test_a_crawl_that_ended_on_an_outage_is_a_failed_run(stats, failed):
    collector = MemoryStatsCollector(get_crawler())
    collector.set_stats(stats)
    assert ended_on_outage(collector) is failed
