"""The keyword registry: the one owner of the crawl's running keywords, ending each by one verb."""

import pytest
import pytest_twisted

from farm.crawl.keywordrun import Outcome
from farm.crawl.parts import CrawlParts
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
    assert crawler.spider.runs[lease.key] is registry.runs[lease.key]


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
    assert lease.id not in registry.not_again


@pytest_twisted.ensureDeferred
async def test_a_blocked_keyword_is_not_claimed_again_by_this_crawl(crawler, ended):
    registry = crawler.get_extension(CrawlParts).registry
    lease = held(crawler)
    registry.end(lease, Outcome("blocked", "boss_37"))
    assert registry.not_again == {lease.id}  # noted when decided, before its release is written
    await db_barrier(crawler)
    assert ended == [(lease.id, Outcome("blocked", "boss_37", written=True))]


def test_an_end_written_already_settles_at_once_and_writes_nothing(crawler, ended):
    runtime = crawler.get_extension(CrawlParts)
    lease = held(crawler)
    runtime.registry.end(lease, Outcome("completed", written=True))
    assert ended == [(lease.id, Outcome("completed", written=True))]
    assert runtime.registry.runs == {} and not runtime.outbox.queued
