"""The progress extension: the keyword table follows what is durably stored."""

import pytest
import pytest_twisted

from farm import signals
from farm.extensions.progress import PageProgress
from farm.runtime import FarmRuntime
from tests.unit.components import component, db_barrier, keyword_row, make_crawler


@pytest.fixture
def crawler(sqlite_url):
    crawler = make_crawler(sqlite_url, [("qcwy", "北京", "python"), ("qcwy", "上海", "java")])
    component(crawler, PageProgress)
    yield crawler
    FarmRuntime.of(crawler).engine_stopped()


@pytest.fixture
def ended(crawler):
    outcomes = []

    def lease_ended(lease, outcome, spider):
        outcomes.append((lease.id, outcome))

    crawler.signals.connect(lease_ended, signal=signals.lease_ended, weak=False)
    return outcomes


def claim(crawler):
    [lease] = FarmRuntime.of(crawler).store.claim("qcwy", "test", 1)
    return lease


def send(crawler, signal, **kwargs):
    crawler.signals.send_catch_log(signal, spider=crawler.spider, **kwargs)


def stored(crawler, lease, page):
    """What the postings pipeline says of each posting it has taken."""
    component(crawler, PageProgress).posting_handled(lease, page)


@pytest_twisted.ensureDeferred
async def test_a_page_is_done_only_once_all_its_postings_are_stored(crawler, ended):
    lease = claim(crawler)
    send(crawler, signals.page_parsed, lease=lease, page=1, postings=2, last_page=2)
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
    lease = claim(crawler)
    stored(crawler, lease, 1)  # the pipeline may answer before the callback has finished
    send(crawler, signals.page_parsed, lease=lease, page=1, postings=1, last_page=1)
    await db_barrier(crawler)
    await db_barrier(crawler)
    assert keyword_row(crawler, lease.id)["crawl_status"] == "completed"
    assert ended == [(lease.id, "completed")]


@pytest_twisted.ensureDeferred
async def test_the_last_page_completes_the_keyword_even_out_of_order(crawler, ended):
    lease = claim(crawler)
    send(crawler, signals.page_parsed, lease=lease, page=3, postings=0, last_page=3)
    send(crawler, signals.page_parsed, lease=lease, page=1, postings=0, last_page=3)
    await db_barrier(crawler)
    assert keyword_row(crawler, lease.id)["last_completed_page"] == 1
    send(crawler, signals.page_parsed, lease=lease, page=2, postings=0, last_page=3)
    await db_barrier(crawler)
    await db_barrier(crawler)
    row = keyword_row(crawler, lease.id)
    assert (row["crawl_status"], row["last_completed_page"], row["total_pages"]) == ("completed", 3, 3)
    assert ended == [(lease.id, "completed")]


@pytest_twisted.ensureDeferred
async def test_a_failed_keyword_is_written_once_with_its_reason(crawler, ended):
    lease = claim(crawler)
    send(crawler, signals.keyword_failed, lease=lease, reason="qcwy: response is not JSON at http://x")
    send(crawler, signals.keyword_failed, lease=lease, reason="a second error of the same lease")
    await db_barrier(crawler)
    await db_barrier(crawler)
    row = keyword_row(crawler, lease.id)
    assert (row["crawl_status"], row["error_message"]) == ("failed", "qcwy: response is not JSON at http://x")
    assert ended == [(lease.id, "failed")]
    assert crawler.stats.get_value("farm/keyword/failed") == 1


@pytest_twisted.ensureDeferred
async def test_a_blocked_keyword_goes_partial_not_failed(crawler, ended):
    lease = claim(crawler)
    send(crawler, signals.keyword_blocked, lease=lease, reason="boss_37 access abnormal at http://x")
    await db_barrier(crawler)
    await db_barrier(crawler)
    row = keyword_row(crawler, lease.id)
    assert row["crawl_status"] == "partial"
    assert "boss_37" in row["error_message"]
    assert ended == [(lease.id, "blocked")]


@pytest_twisted.ensureDeferred
async def test_progress_of_a_lease_taken_over_changes_nothing_and_ends_it(crawler, ended):
    lease = claim(crawler)
    store = FarmRuntime.of(crawler).store
    assert store.release(lease, "taken over")
    [again] = store.claim("qcwy", "another crawler", 1)
    assert again.id == lease.id and again.lease_token != lease.lease_token

    send(crawler, signals.page_parsed, lease=lease, page=1, postings=0, last_page=1)
    await db_barrier(crawler)
    await db_barrier(crawler)
    row = keyword_row(crawler, lease.id)
    assert (row["crawl_status"], row["crawler_id"], row["last_completed_page"]) == ("crawling", "another crawler", 0)
    assert ended == [(lease.id, "lost")]
    assert crawler.stats.get_value("farm/progress/fenced") == 1
