"""The farm scheduler: the page window, the site's pace, and ended keywords' requests dropped in the queue."""

import pytest
import pytest_twisted
from scrapy import Request
from twisted.internet import reactor

from farm.crawl.backends.checkpoint import open_checkpoint
from farm.crawl.keywordrun import Outcome
from farm.crawl.parts import CrawlParts
from farm.crawl.scheduler import FarmScheduler
from tests.unit.components import db_barrier, keyword_row, make_crawler

ROWS = [("qcwy", "北京", "python"), ("qcwy", "上海", "java")]
# Scrapy's default queue asks the engine's downloader for its slots: there is no engine here
QUEUE = {"SCHEDULER_PRIORITY_QUEUE": "scrapy.pqueues.ScrapyPriorityQueue"}


@pytest.fixture
def crawler(sqlite_url):
    crawler = make_crawler(sqlite_url, ROWS, FARM_PAGES_IN_FLIGHT=2, FARM_QCWY_RATE=0, **QUEUE)
    yield crawler
    crawler.get_extension(CrawlParts).close()


def scheduler_for(crawler):
    scheduler = FarmScheduler.from_crawler(crawler)
    scheduler.open(crawler.spider)
    return scheduler


def hold(crawler, scheduler, pages):
    """A keyword claimed by the crawl, with requests for ``pages`` queued."""
    [lease] = crawler.get_extension(CrawlParts).store.claim("qcwy", "test", 1)
    spider = crawler.spider
    spider.crawl_paging.first_requests(lease)  # the run; its page 1 request is queued below with the others
    spider.crawl_paging.registry.runs[lease.key].ask(pages)
    for page in pages:
        scheduler.enqueue_request(spider.page_request(lease, page))
    return lease


def pages_out(scheduler):
    out = []
    while (request := scheduler.next_request()) is not None:
        out.append((request.meta["farm_lease"].id, request.meta["farm_page"]))
    return out


def test_a_full_window_holds_requests_in_the_queue(crawler):
    scheduler = scheduler_for(crawler)
    hold(crawler, scheduler, [1, 2, 3])
    assert len(pages_out(scheduler)) == 2  # the window: 2 pages
    assert scheduler.has_pending_requests() and len(scheduler) == 1
    assert crawler.stats.get_value("farm/window/full") >= 1
    runtime = crawler.get_extension(CrawlParts)
    runtime.window.leave(*next(iter(runtime.window.pages)))  # one page recorded
    assert len(pages_out(scheduler)) == 1
    assert not scheduler.has_pending_requests()


@pytest_twisted.ensureDeferred
async def test_an_ended_keywords_requests_are_dropped_and_free_the_window_for_the_others(crawler):
    # a window of 2; keyword A has 5 pages queued, B one; A fails while its pages wait
    scheduler = scheduler_for(crawler)
    b = hold(crawler, scheduler, [1])
    a = hold(crawler, scheduler, [1, 2, 3, 4, 5])  # Scrapy's queue is last in, first out: A's come first
    first_two = pages_out(scheduler)
    assert [lease for lease, _ in first_two] == [a.id, a.id] and scheduler.has_pending_requests()
    # page 2 of A failed: A ends, page 1 of A is still being fetched
    failed_page = first_two[1][1]
    crawler.get_extension(CrawlParts).registry.end(a, Outcome("failed", "HTTP 404", failed_page))
    assert pages_out(scheduler) == [(b.id, 1)]  # A's waiting pages dropped; B goes on
    assert not scheduler.has_pending_requests()
    assert crawler.stats.get_value("farm/lease/dropped_requests") == 3
    runtime = crawler.get_extension(CrawlParts)
    assert runtime.window.pages == {(a.key, first_two[0][1]), (b.key, 1)}
    # A's page still in flight arrives; its progress goes first, then A's end
    runtime.progress.page_parsed(a, first_two[0][1], 0, crawler.spider)
    await db_barrier(crawler)
    await db_barrier(crawler)
    row = keyword_row(crawler, a.id)
    assert (row["crawl_status"], row["error_message"]) == ("failed", "HTTP 404")
    assert row["last_completed_page"] == 0  # page 5 is recorded ahead of the watermark
    assert row["pages_ahead"] == str(first_two[0][1])
    assert runtime.window.pages == {(b.key, 1)}


def test_the_pace_holds_a_request_until_its_turn_and_sets_a_wake_up(sqlite_url):
    crawler = make_crawler(sqlite_url, ROWS, FARM_QCWY_RATE=0.5, **QUEUE)  # one request every 2 s on average
    try:
        scheduler = scheduler_for(crawler)
        hold(crawler, scheduler, [1, 2])
        assert len(pages_out(scheduler)) == 1
        runtime = crawler.get_extension(CrawlParts)
        [identity] = runtime.identities  # no proxies: this machine's own address, at the site's rate
        assert 0.5 <= identity.pace.wait() <= 3.0
        assert scheduler.has_pending_requests()
        assert runtime._wake_call is not None and runtime._wake_call.active()
        identity.pace.next_at = 0.0  # its turn came
        assert len(pages_out(scheduler)) == 1
    finally:
        crawler.get_extension(CrawlParts).close()


def test_requests_that_are_not_farm_pages_pass_as_scrapy_would(crawler):
    scheduler = scheduler_for(crawler)
    scheduler.enqueue_request(Request("http://other.invalid/robots.txt"))
    assert scheduler.next_request().url == "http://other.invalid/robots.txt"


def test_a_retry_of_a_page_in_a_full_window_goes_out_before_requests_waiting_for_room(crawler):
    scheduler = scheduler_for(crawler)
    hold(crawler, scheduler, [1, 2, 3, 4])
    taken = [scheduler.next_request(), scheduler.next_request()]
    assert scheduler.next_request() is None  # the window is full; a request is parked
    # the site failed one of the two pages: its retry comes back to the scheduler
    retry = taken[0].replace(priority=-1)
    retry.meta["retry_times"] = 1  # as get_retry_request makes it
    assert scheduler.enqueue_request(retry)
    assert scheduler.next_request() is retry  # not behind the parked request, which waits for room
    assert scheduler.next_request() is None and len(scheduler) == 2


@pytest_twisted.ensureDeferred
async def test_engine_stopped_never_blocks_the_reactor_while_a_database_call_runs(sqlite_url):
    import time

    from scrapy.utils.defer import deferred_from_coro

    crawler = make_crawler(sqlite_url, ROWS, **QUEUE)
    runtime = crawler.get_extension(CrawlParts)
    busy = runtime.run(time.sleep, 1.0)  # a slow query on the database thread
    started = time.monotonic()
    stopped = deferred_from_coro(runtime.engine_stopped())
    assert time.monotonic() - started < 0.3  # the reactor got control back at once
    await busy
    await stopped
    assert time.monotonic() - started >= 0.9


def test_a_fresh_request_for_a_page_in_the_window_is_not_taken_for_a_retry(crawler):
    scheduler = scheduler_for(crawler)
    lease = hold(crawler, scheduler, [1])
    [taken] = [scheduler.next_request()]
    again = crawler.spider.page_request(lease, taken.meta["farm_page"])  # asked for once more, not retried
    scheduler.enqueue_request(again)
    assert not scheduler._again  # into Scrapy's queue, behind the window like any other


PROXIES = "http://alice:s3cret@10.0.0.1:3128,http://10.0.0.2:3128"


def test_without_proxies_a_page_request_leaves_with_no_proxy(crawler):
    scheduler = scheduler_for(crawler)
    hold(crawler, scheduler, [1])
    request = scheduler.next_request()
    assert crawler.get_extension(CrawlParts).proxies is None and "proxy" not in request.meta


def test_page_requests_take_the_proxies_in_turn_and_wait_parked_when_none_is_free(sqlite_url):
    crawler = make_crawler(
        sqlite_url,
        ROWS,
        FARM_PAGES_IN_FLIGHT=8,
        FARM_QCWY_RATE=0,
        FARM_PROXIES=PROXIES,
        FARM_PROXY_QUARANTINE=60,
        **QUEUE,
    )
    try:
        runtime = crawler.get_extension(CrawlParts)
        scheduler = scheduler_for(crawler)
        hold(crawler, scheduler, [1, 2, 3, 4])
        first, second = scheduler.next_request(), scheduler.next_request()
        assert [first.meta["proxy"], second.meta["proxy"]] == PROXIES.split(",")
        for proxy in runtime.proxies.proxies:
            runtime.proxies.quarantine(proxy.id, "http_403")
        assert scheduler.next_request() is None  # no proxy free: parked, not dropped, not failed
        assert scheduler.has_pending_requests() and len(scheduler) == 2
        assert runtime._wake_call is not None and runtime._wake_call.active()
        assert 59 <= runtime._wake_call.getTime() - reactor.seconds() <= 60.1
        # a retry waits too, and then gets a fresh proxy
        retry = first.replace()
        retry.meta["retry_times"] = 1
        retry.meta["proxy"] = "http://10.0.0.1:3128"  # as HttpProxyMiddleware left it: no credentials
        scheduler.enqueue_request(retry)
        assert scheduler.next_request() is None
        runtime.proxies.until.clear()  # the quarantine is over
        assert scheduler.next_request() is retry and retry.meta["proxy"] == PROXIES.split(",")[0]
        assert scheduler.next_request().meta["proxy"] == PROXIES.split(",")[1]
        assert crawler.stats.get_value("farm/proxy/none_free") == 2
        assert not any(run.over for run in crawler.spider.crawl_paging.registry.runs.values())
    finally:
        crawler.get_extension(CrawlParts).close()


def test_with_jobdir_the_checkpoint_replaces_scrapys_disk_queue_and_requests_seen(sqlite_url, tmp_path):
    jobdir = tmp_path / "job"
    crawler = make_crawler(sqlite_url, ROWS, FARM_QCWY_RATE=0, JOBDIR=str(jobdir), **QUEUE)
    try:
        scheduler = scheduler_for(crawler)
        assert (
            scheduler.backend.queue.dqdir is None and scheduler.backend.queue.df.file is None
        )  # memory queue, no requests.seen
        lease = hold(crawler, scheduler, [1, 2])
        checkpoint = crawler.get_extension(CrawlParts).checkpoint
        checkpoint.flush()
        checkpoint.file.close()
        resumed = open_checkpoint(jobdir, "qcwy", crawler.get_extension(CrawlParts).store.today().isoformat(), "other")
        assert resumed.saved.pages == {lease.key: {1, 2}}  # every page queued is noted
        assert not (jobdir / "requests.queue").exists() and not (jobdir / "requests.seen").exists()
    finally:
        crawler.get_extension(CrawlParts).close()
