"""The postings a site says a keyword holds (keyword.site_total) go with the page writes: told by a
parsed page, carried by every later write of the keyword, completion included, through the outbox
and the state writer to the row."""

import pytest
import pytest_twisted

from farm.crawl.parts import CrawlParts
from farm.state.models import SITE_TOTAL_MAX
from farm.writer.frames import HEADER, decode, frame
from tests.unit.components import db_barrier, keyword_row, make_crawler


@pytest.fixture
def crawler(sqlite_url):
    crawler = make_crawler(sqlite_url, [("qcwy", "北京", "python")])
    yield crawler
    crawler.get_extension(CrawlParts).close()


def claim(crawler, pages, last):
    [lease] = crawler.get_extension(CrawlParts).store.claim("qcwy", "test", 1)
    crawler.spider.crawl_paging.first_requests(lease)
    run = crawler.spider.crawl_paging.registry.runs[lease.key]
    run.tell_last(last)
    run.ask(pages)
    for page in pages:
        run.taken(page)
    return lease, run


def page_parsed(crawler, lease, page, postings):
    progress = crawler.get_extension(CrawlParts).progress
    progress.page_parsed(lease, page, postings, crawler.spider)


@pytest_twisted.ensureDeferred
async def test_the_site_total_a_page_told_is_stored_with_the_page_and_kept_by_the_completing_write(crawler):
    lease, run = claim(crawler, pages=(1, 2), last=2)
    registry = crawler.get_extension(CrawlParts).registry
    registry.tell_site_total(run, 637)
    page_parsed(crawler, lease, 1, 0)
    await db_barrier(crawler)
    row = keyword_row(crawler, lease.id)
    assert (row["last_completed_page"], row["site_total"]) == (1, 637)

    registry.tell_site_total(run, None)  # a page that tells none leaves the count as it was
    registry.tell_site_total(run, 640)
    page_parsed(crawler, lease, 2, 0)
    for _ in range(2):
        await db_barrier(crawler)
    row = keyword_row(crawler, lease.id)
    assert (row["crawl_status"], row["site_total"]) == ("completed", 640)


def test_a_site_total_beyond_the_column_is_cut_and_a_negative_one_is_not_told(crawler):
    _, run = claim(crawler, pages=(1,), last=1)
    run.tell_site_total(2**70)
    assert run.site_total == SITE_TOTAL_MAX
    run.tell_site_total(-5)
    assert run.site_total == SITE_TOTAL_MAX


def test_a_frame_carries_each_pages_site_total_to_the_writer():
    from farm.state.lease import Lease

    lease = Lease(id=3, source="boss", city="北京", job="python", lease_token=9, start_page=1, from_status="fresh")
    payload = frame([], [(lease, 1, 15, None, 385), (lease, 2, 15, 3, None)])
    pages = decode(payload[HEADER:]).pages
    assert [(page, jobs, total, told) for _, page, jobs, total, told in pages] == [(1, 15, None, 385), (2, 15, 3, None)]
    assert pages[0][0].key == lease.key
