"""The keyword-lease middleware: claims, keeps the spider open, drops ended keywords' requests, releases."""

import asyncio
import threading
from types import SimpleNamespace

import pytest
import pytest_twisted
from scrapy import Request
from scrapy import signals as scrapy_signals
from scrapy.exceptions import DontCloseSpider
from scrapy.utils.defer import deferred_from_coro
from twisted.internet import reactor

from farm.crawl.keywordrun import Outcome
from farm.crawl.leases import KeywordLeaseMiddleware
from farm.crawl.paging import LeaseLost
from farm.crawl.parts import CrawlParts
from farm.crawl.registry import ORPHAN_ROUNDS
from tests.unit.components import db_barrier, keyword_row, make_crawler, writer_started

ROWS = [("qcwy", city, "python") for city in ("北京", "上海", "广州")]


def recording_engine():
    """Records what the middleware schedules, and why it closes the crawl."""
    engine = SimpleNamespace(scheduled=[], closed=[], spider="open")  # Scrapy's: None once closed
    engine.crawl = engine.scheduled.append

    def close_spider_async(*, reason):
        engine.closed.append(reason)  # when asked, not when the coroutine gets to run
        return asyncio.sleep(0)

    engine.close_spider_async = close_spider_async
    return engine


@pytest.fixture
def crawler(sqlite_url):
    crawler = make_crawler(sqlite_url, ROWS, FARM_LEASES_IN_FLIGHT=2)
    crawler.engine = recording_engine()
    yield crawler
    crawler.get_extension(CrawlParts).close()


@pytest.fixture
def middleware(crawler):
    return KeywordLeaseMiddleware.from_crawler(crawler)


def ended(crawler, lease, kind):
    """The keyword's end is written: the registry settles it."""
    crawler.get_extension(CrawlParts).registry.end(lease, Outcome(kind, written=True))


def send(crawler, signal, **kwargs):
    return crawler.signals.send_catch_log(signal, spider=crawler.spider, **kwargs)


@pytest_twisted.ensureDeferred
async def test_claims_up_to_the_leases_in_flight_and_schedules_their_first_pages(crawler, middleware):
    send(crawler, scrapy_signals.spider_opened)
    await db_barrier(crawler)
    assert len(middleware.runs) == 2
    scheduled = crawler.engine.scheduled
    assert [(r.meta["farm_lease"].id, r.meta["farm_page"]) for r in scheduled] == [(1, 1), (2, 1)]
    assert crawler.stats.get_value("farm/lease/claimed/fresh") == 2


@pytest_twisted.ensureDeferred
async def test_the_requests_of_a_lease_no_longer_held_are_dropped(crawler, middleware):
    send(crawler, scrapy_signals.spider_opened)
    await db_barrier(crawler)
    first = crawler.engine.scheduled[0]
    assert middleware.process_request(first) is None
    ended(crawler, first.meta["farm_lease"], "lost")
    with pytest.raises(LeaseLost):
        middleware.process_request(first)
    assert middleware.process_request(Request("http://other.invalid/")) is None  # not farm's
    assert crawler.stats.get_value("farm/lease/dropped_requests") == 1


@pytest_twisted.ensureDeferred
async def test_keeps_the_spider_open_while_work_is_held_and_refills_when_a_keyword_ends(crawler, middleware):
    send(crawler, scrapy_signals.spider_opened)
    await db_barrier(crawler)
    with pytest.raises(DontCloseSpider):
        middleware.spider_idle(crawler.spider)
    lease = crawler.engine.scheduled[0].meta["farm_lease"]
    ended(crawler, lease, "completed")
    await db_barrier(crawler)
    assert len(middleware.runs) == 2  # the third keyword took the freed slot
    assert crawler.engine.scheduled[-1].meta["farm_lease"].city == "广州"


@pytest_twisted.ensureDeferred
async def test_slots_freed_while_a_claim_is_under_way_are_refilled_after_it(sqlite_url):
    rows = [("qcwy", city, job) for city in ("北京", "上海") for job in ("python", "java", "前端")]
    crawler = make_crawler(sqlite_url, rows, FARM_LEASES_IN_FLIGHT=3)
    crawler.engine = recording_engine()
    middleware = KeywordLeaseMiddleware.from_crawler(crawler)
    try:
        send(crawler, scrapy_signals.spider_opened)
        await db_barrier(crawler)
        first, second, _ = [request.meta["farm_lease"] for request in crawler.engine.scheduled]
        ended(crawler, first, "completed")  # claims one
        ended(crawler, second, "completed")  # while that claim runs
        await db_barrier(crawler)
        await db_barrier(crawler)  # the claim for the second slot, queued when the first returned
        assert len(middleware.runs) == 3
    finally:
        crawler.get_extension(CrawlParts).close()


@pytest_twisted.ensureDeferred
async def test_lets_the_spider_close_when_no_keyword_is_left(crawler, middleware):
    store = crawler.get_extension(CrawlParts).store
    for lease in store.claim("qcwy", "someone else", 3):
        store.complete(lease)
    with pytest.raises(DontCloseSpider):
        middleware.spider_idle(crawler.spider)  # first idle: look for work
    await db_barrier(crawler)
    assert middleware.spider_idle(crawler.spider) is None  # nothing claimed: close
    assert crawler.stats.get_value("farm/lease/none_left") == 1
    assert crawler.engine.closed == ["finished"]  # at once, not at Scrapy's next idle check


@pytest_twisted.ensureDeferred
async def test_an_early_close_releases_held_keywords_as_partial(crawler, middleware):
    send(crawler, scrapy_signals.spider_opened)
    await db_barrier(crawler)
    held = [run.lease for run in middleware.runs.values()]
    await deferred_from_coro(middleware.spider_closed(crawler.spider, "shutdown"))  # as Scrapy runs it
    await db_barrier(crawler)
    for lease in held:
        row = keyword_row(crawler, lease.id)
        assert row["crawl_status"] == "partial"
        assert "shutdown" in row["error_message"]
    assert middleware.runs == {}
    assert keyword_row(crawler, 3)["crawl_status"] == "idle"


@pytest_twisted.ensureDeferred
async def test_a_keyword_given_up_for_a_block_is_not_reclaimed_by_the_same_crawl(crawler, middleware):
    send(crawler, scrapy_signals.spider_opened)
    await db_barrier(crawler)
    blocked = crawler.engine.scheduled[0].meta["farm_lease"]
    # the progress extension writes the release, then says the lease ended
    crawler.get_extension(CrawlParts).registry.end(blocked, Outcome("blocked", "boss_37", 1))
    await db_barrier(crawler)
    await db_barrier(crawler)
    claimed = [r.meta["farm_lease"] for r in crawler.engine.scheduled[2:]]
    assert [lease.city for lease in claimed] == ["广州"]  # the fresh keyword, not the blocked one again
    assert keyword_row(crawler, blocked.id)["crawl_status"] == "partial"


@pytest_twisted.ensureDeferred
async def test_pages_lost_inside_the_crawl_are_asked_for_again_a_bounded_number_of_times(crawler, middleware):
    send(crawler, scrapy_signals.spider_opened)
    await db_barrier(crawler)
    run = next(iter(middleware.runs.values()))

    def asked():
        return [r.meta["farm_page"] for r in crawler.engine.scheduled if r.meta["farm_lease"] is run.lease]

    # the engine is idle, yet the keywords' page 1 never reached the outbox (a pipeline before
    # farm's replaced their items, say): without help they would wait for ever
    for round_no in range(1, ORPHAN_ROUNDS + 1):
        with pytest.raises(DontCloseSpider):
            middleware.spider_idle(crawler.spider)
        assert asked() == [1] * (1 + round_no) and run.live  # asked for again
    with pytest.raises(DontCloseSpider):
        middleware.spider_idle(crawler.spider)
    assert not run.live and run.outcome.kind == "failed"
    await db_barrier(crawler)
    await db_barrier(crawler)
    row = keyword_row(crawler, run.lease.id)
    assert row["crawl_status"] == "failed" and "lost inside the crawl" in row["error_message"]
    assert crawler.stats.get_value("farm/keyword/orphan_pages") == 2 * (ORPHAN_ROUNDS + 1)  # both keywords


@pytest_twisted.ensureDeferred
async def test_a_jobdir_checkpoint_has_its_keywords_taken_back_first_with_their_missing_pages(sqlite_url, tmp_path):
    from farm.crawl.backends.checkpoint import open_checkpoint
    from farm.state.db import make_engine
    from farm.state.store import KeywordStore
    from tests.migrated import migrated

    jobdir = tmp_path / "job"
    # a crawl under the id "first" held two keywords when it was killed
    migrated(sqlite_url)
    store = KeywordStore(make_engine(sqlite_url))
    store.add_keywords(ROWS)
    a, b = store.claim("qcwy", "first", 2)
    store.page_done(a, 1, 20, total_pages=5)
    store.page_done(a, 3, 20, total_pages=5)
    checkpoint = open_checkpoint(jobdir, "qcwy", store.today().isoformat(), "first")
    for lease, pages in ((a, [2, 3, 4]), (b, [1])):  # page 5 of A was asked for after its last save
        checkpoint.hold(lease.key)
        for page in pages:
            checkpoint.queued(lease.key, page)
    checkpoint.flush()
    checkpoint.file.close()
    store.engine.dispose()
    crawler = make_crawler(sqlite_url, ROWS, FARM_LEASES_IN_FLIGHT=3, JOBDIR=str(jobdir), FARM_CRAWLER_ID="second")
    crawler.engine = recording_engine()
    try:
        middleware = KeywordLeaseMiddleware.from_crawler(crawler)
        assert crawler.get_extension(CrawlParts).crawler_id == "first"  # the same holder
        send(crawler, scrapy_signals.spider_opened)
        await db_barrier(crawler)
        await db_barrier(crawler)  # the take-back, then the claim it makes room for
        token = {kid: keyword_row(crawler, kid)["lease_token"] for kid in (a.id, b.id, 3)}
        assert token[a.id] != a.lease_token and token[b.id] != b.lease_token  # new tokens: the old are fenced
        asked = sorted(
            (r.meta["farm_lease"].id, r.meta["farm_lease"].lease_token, r.meta["farm_page"])
            for r in crawler.engine.scheduled
        )
        # A: 2 and 4 from the checkpoint, 5 from the table, not 3 (done); B: its page 1; then a fresh claim
        assert asked == [
            (a.id, token[a.id], 2),
            (a.id, token[a.id], 4),
            (a.id, token[a.id], 5),
            (b.id, token[b.id], 1),
            (3, token[3], 1),
        ]
        assert crawler.stats.get_value("farm/checkpoint/taken_back") == 2
        assert keyword_row(crawler, a.id)["crawler_id"] == "first"
        assert set(middleware.runs) == {(a.id, token[a.id]), (b.id, token[b.id]), (3, token[3])}
    finally:
        crawler.get_extension(CrawlParts).close()


@pytest_twisted.ensureDeferred
async def test_claims_are_made_by_the_state_writer_not_on_the_crawls_database_thread(crawler, middleware):
    # on the database thread, each claim cost the crawl's own thread 1.4 to 4.5 ms (GIL handoffs)
    runtime = crawler.get_extension(CrawlParts)
    await writer_started(crawler)
    release = threading.Event()
    busy = runtime.run(release.wait, 60)  # the database thread is busy (a heartbeat on a slow database)
    try:
        send(crawler, scrapy_signals.spider_opened)
        await runtime.outbox.drain().addTimeout(30, reactor)  # a writer that never answers fails the test
        assert len(middleware.runs) == 2  # claimed meanwhile
        assert [r.meta["farm_page"] for r in crawler.engine.scheduled] == [1, 1]
    finally:
        release.set()
        await busy


@pytest_twisted.ensureDeferred
async def test_until_the_state_writer_has_started_a_claim_is_made_on_the_database_thread(crawler, middleware):
    # the writer takes a third of a second to start: the crawl's first claim does not wait for it
    runtime = crawler.get_extension(CrawlParts)
    runtime.writer.ready = False  # as it is for that third of a second
    send(crawler, scrapy_signals.spider_opened)
    assert not runtime.outbox.queued and not runtime.outbox.in_flight
    await runtime.run(lambda: None).addTimeout(30, reactor)  # the database thread, first in first out
    assert len(middleware.runs) == 2
