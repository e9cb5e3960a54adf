"""The progress extension: the keyword table follows what is durably stored, and every end is ordered."""

import pytest
import pytest_twisted
from scrapy import signals as scrapy_signals
from scrapy.exceptions import DropItem

from farm.crawl.keywordrun import Outcome
from farm.crawl.parts import CrawlParts
from farm.items import JobPosting
from tests.unit.components import db_barrier, keyword_row, keywords_ended, make_crawler


@pytest.fixture
def crawler(sqlite_url):
    crawler = make_crawler(sqlite_url, [("qcwy", "北京", "python"), ("qcwy", "上海", "java")])
    assert crawler.get_extension(CrawlParts).progress is not None
    yield crawler
    crawler.get_extension(CrawlParts).close()


@pytest.fixture
def ended(crawler):
    return keywords_ended(crawler, lambda lease, outcome: (lease.id, outcome.kind))


def claim(crawler, pages=(1,), last=None):
    """A keyword claimed and held by the crawl, with ``pages`` asked for and taken from the queue."""
    [lease] = crawler.get_extension(CrawlParts).store.claim("qcwy", "test", 1)
    run = crawler.spider.crawl_paging.first_requests(lease) and crawler.spider.crawl_paging.registry.runs[lease.key]
    run.tell_last(last)
    run.ask(pages)
    for page in pages:
        run.taken(page)
    return lease


def run_of(crawler, lease):
    return crawler.spider.crawl_paging.registry.runs[lease.key]


def end(crawler, lease, outcome):
    """What the spider does to end a keyword."""
    crawler.get_extension(CrawlParts).registry.end(lease, outcome)


def send(crawler, signal, **kwargs):
    crawler.signals.send_catch_log(signal, spider=crawler.spider, **kwargs)


def stored(crawler, lease, page):
    """What the postings pipeline says of each posting it has taken."""
    crawler.get_extension(CrawlParts).progress.posting_handled(lease, page)


def parsed(crawler, lease, page, postings):
    """What the spider tells the progress of each page it parsed."""
    crawler.get_extension(CrawlParts).progress.page_parsed(lease, page, postings, crawler.spider)


async def settle(crawler, times=2):
    for _ in range(times):
        await db_barrier(crawler)


@pytest_twisted.ensureDeferred
async def test_a_page_is_done_only_once_all_its_postings_are_stored(crawler, ended):
    lease = claim(crawler, pages=(1, 2), last=2)
    parsed(crawler, lease, 1, 2)
    stored(crawler, lease, 1)
    await db_barrier(crawler)
    assert keyword_row(crawler, lease.id)["last_completed_page"] == 0

    stored(crawler, lease, 1)
    await db_barrier(crawler)
    row = keyword_row(crawler, lease.id)
    assert (row["last_completed_page"], row["jobs_found"], row["crawl_status"]) == (1, 2, "crawling")
    assert crawler.stats.get_value("farm/progress/pages") == 1
    assert ended == []


@pytest_twisted.ensureDeferred
async def test_postings_stored_before_the_page_is_parsed_still_count(crawler, ended):
    lease = claim(crawler, last=1)
    stored(crawler, lease, 1)  # the pipeline may answer before the callback has finished
    parsed(crawler, lease, 1, 1)
    await settle(crawler)
    assert keyword_row(crawler, lease.id)["crawl_status"] == "completed"
    assert ended == [(lease.id, "completed")]


@pytest_twisted.ensureDeferred
async def test_the_last_page_completes_the_keyword_even_out_of_order(crawler, ended):
    lease = claim(crawler, pages=(1, 2, 3), last=3)
    parsed(crawler, lease, 3, 0)
    parsed(crawler, lease, 1, 0)
    await db_barrier(crawler)
    assert keyword_row(crawler, lease.id)["last_completed_page"] == 1
    parsed(crawler, lease, 2, 0)
    await settle(crawler)
    row = keyword_row(crawler, lease.id)
    assert (row["crawl_status"], row["last_completed_page"], row["total_pages"]) == ("completed", 3, 3)
    assert ended == [(lease.id, "completed")]


@pytest_twisted.ensureDeferred
async def test_a_total_that_shrank_still_waits_for_every_page_asked_for(crawler, ended):
    # page 1 said 3 pages, a later page said 1: pages 2 and 3 were asked for, and are kept
    lease = claim(crawler, pages=(1, 2, 3), last=3)
    run_of(crawler, lease).tell_last(1)
    parsed(crawler, lease, 1, 0)
    await settle(crawler)
    assert keyword_row(crawler, lease.id)["crawl_status"] == "crawling"
    parsed(crawler, lease, 3, 0)
    parsed(crawler, lease, 2, 0)
    await settle(crawler)
    assert keyword_row(crawler, lease.id)["crawl_status"] == "completed"
    assert ended == [(lease.id, "completed")]


@pytest_twisted.ensureDeferred
async def test_a_keyword_with_nothing_queued_is_completed_not_left_crawling(crawler, ended):
    # a site that told no total and no next page: once its one page is recorded, nothing is queued
    lease = claim(crawler, pages=(1,), last=None)
    run = run_of(crawler, lease)
    run.requested.clear()  # as if the page's total were never told
    parsed(crawler, lease, 1, 0)
    await settle(crawler, 3)
    assert keyword_row(crawler, lease.id)["crawl_status"] == "completed"
    assert ended == [(lease.id, "completed")]
    assert crawler.stats.get_value("farm/keyword/exhausted") == 1


@pytest_twisted.ensureDeferred
async def test_a_failed_keyword_is_written_once_with_its_reason(crawler, ended):
    lease = claim(crawler)
    end(crawler, lease, Outcome("failed", "qcwy: not JSON at http://x", 1))
    end(crawler, lease, Outcome("failed", "a second error of the same lease", None))
    await settle(crawler)
    row = keyword_row(crawler, lease.id)
    assert (row["crawl_status"], row["error_message"]) == ("failed", "qcwy: not JSON at http://x")
    assert row["retry_at"] is not None
    assert ended == [(lease.id, "failed")]
    assert crawler.stats.get_value("farm/keyword/failed") == 1


@pytest_twisted.ensureDeferred
async def test_a_blocked_keyword_goes_partial_not_failed(crawler, ended):
    lease = claim(crawler)
    end(crawler, lease, Outcome("blocked", "boss_37 abnormal at http://x", 1))
    await settle(crawler)
    row = keyword_row(crawler, lease.id)
    assert (row["crawl_status"], row["blocked_claims"]) == ("partial", 1)
    assert row["error_message"] == "blocked: boss_37 abnormal at http://x"
    assert ended == [(lease.id, "blocked")]


@pytest_twisted.ensureDeferred
async def test_an_end_waits_for_the_pages_its_keyword_is_fetching_and_comes_after_their_progress(crawler, ended):
    lease = claim(crawler, pages=(1, 2, 3), last=3)
    parsed(crawler, lease, 1, 1)  # page 1's posting is still in the pipeline
    end(crawler, lease, Outcome("blocked", "boss_37 at page 3", 3))
    await settle(crawler)
    assert keyword_row(crawler, lease.id)["crawl_status"] == "crawling"  # pages 1 and 2 are on their way
    assert ended == []
    stored(crawler, lease, 1)
    parsed(crawler, lease, 2, 0)
    await settle(crawler)
    row = keyword_row(crawler, lease.id)
    # both pages recorded under the lease, then released: the next claim resumes at page 3
    assert (row["crawl_status"], row["last_completed_page"], row["jobs_found"]) == ("partial", 2, 1)
    assert ended == [(lease.id, "blocked")]
    assert crawler.stats.get_value("farm/progress/pages") == 2
    assert crawler.stats.get_value("farm/progress/fenced") is None


@pytest_twisted.ensureDeferred
async def test_an_ended_keyword_asks_for_no_more_pages(crawler, ended):
    lease = claim(crawler, pages=(1,), last=1)
    run = run_of(crawler, lease)
    end(crawler, lease, Outcome("failed", "boom", None))
    assert run.ask([2, 3]) == []


@pytest_twisted.ensureDeferred
async def test_progress_of_a_lease_taken_over_changes_nothing_and_ends_it(crawler, ended):
    lease = claim(crawler, last=1)
    store = crawler.get_extension(CrawlParts).store
    assert store.release(lease, "taken over")
    [again] = store.claim("qcwy", "another crawler", 1)
    assert again.id == lease.id and again.lease_token != lease.lease_token

    parsed(crawler, lease, 1, 0)
    await settle(crawler)
    row = keyword_row(crawler, lease.id)
    assert (row["crawl_status"], row["crawler_id"], row["last_completed_page"]) == ("crawling", "another crawler", 0)
    assert ended == [(lease.id, "lost")]
    assert crawler.stats.get_value("farm/progress/fenced") == 1


@pytest_twisted.ensureDeferred
async def test_a_posting_dropped_by_an_earlier_pipeline_does_not_hold_its_page(crawler, ended):
    lease = claim(crawler, last=1)
    item = JobPosting(source="qcwy", job_id="j1")
    item._farm_page = (lease, 1)
    parsed(crawler, lease, 1, 1)
    # another pipeline, before farm's, dropped it: farm's pipeline never saw it
    send(crawler, scrapy_signals.item_dropped, item=item, response=None, exception=DropItem("not wanted"))
    await settle(crawler)
    assert keyword_row(crawler, lease.id)["crawl_status"] == "completed"
    assert ended == [(lease.id, "completed")]


@pytest_twisted.ensureDeferred
async def test_a_posting_farm_handled_and_a_later_pipeline_dropped_counts_once(crawler, ended):
    lease = claim(crawler, pages=(1, 2), last=2)
    first, second = JobPosting(source="qcwy", job_id="j1"), JobPosting(source="qcwy", job_id="j2")
    for item in (first, second):
        item._farm_page = (lease, 1)
    parsed(crawler, lease, 1, 2)
    crawler.get_extension(CrawlParts).progress.posting_handled(lease, 1, item=first)
    send(crawler, scrapy_signals.item_dropped, item=first, response=None, exception=DropItem("later"))
    await settle(crawler)
    assert keyword_row(crawler, lease.id)["last_completed_page"] == 0  # the second posting is still out
    crawler.get_extension(CrawlParts).progress.posting_handled(lease, 1, item=second)
    await settle(crawler)
    assert keyword_row(crawler, lease.id)["last_completed_page"] == 1
