"""The lease middleware against real databases: when an empty claim is the end, and when it is not."""

import asyncio
import time
from types import SimpleNamespace

import pymysql
import pytest_twisted
from scrapy import signals as scrapy_signals
from sqlalchemy import create_engine, text
from sqlalchemy.exc import OperationalError

from farm.crawl.keywordrun import Outcome
from farm.crawl.leases import KeywordLeaseMiddleware
from farm.crawl.parts import CrawlParts
from tests.unit.components import db_barrier, make_crawler, until


def recording_engine():
    engine = SimpleNamespace(scheduled=[], closed=[], spider="open")  # Scrapy's: None once closed
    engine.crawl = engine.scheduled.append

    def close_spider_async(*, reason):
        engine.closed.append(reason)
        return asyncio.sleep(0)

    engine.close_spider_async = close_spider_async
    return engine


def crawler_for(db_url, rows, **settings):
    crawler = make_crawler(db_url, rows, **settings)
    crawler.engine = recording_engine()
    middleware = KeywordLeaseMiddleware.from_crawler(crawler)
    return crawler, middleware


@pytest_twisted.ensureDeferred
async def test_an_empty_claim_while_other_claimers_hold_rows_locked_is_not_the_end(server_db_url):
    rows = [("qcwy", "北京", "python"), ("qcwy", "上海", "java")]
    crawler, middleware = crawler_for(server_db_url, rows, FARM_LEASES_IN_FLIGHT=2)
    other = create_engine(server_db_url, isolation_level="READ COMMITTED")
    try:
        with other.connect() as conn:
            # another crawler's claim transaction, holding both rows locked (SKIP LOCKED hides them)
            conn.execute(text("SELECT id FROM keyword FOR UPDATE")).all()
            crawler.signals.send_catch_log(scrapy_signals.spider_opened, spider=crawler.spider)
            await until(lambda: crawler.stats.get_value("farm/lease/claim_busy"), 10, "an empty claim")
            assert crawler.engine.closed == [] and middleware.runs == {}
            conn.rollback()  # that claim took nothing after all
        await until(lambda: len(middleware.runs) == 2, 10, "the rows to be claimed")
        assert crawler.engine.closed == []
        assert len(crawler.engine.scheduled) == 2
    finally:
        other.dispose()
        crawler.get_extension(CrawlParts).close()


@pytest_twisted.ensureDeferred
async def test_a_failed_keyword_is_waited_for_until_its_retry_is_due(sqlite_url):
    crawler, middleware = crawler_for(sqlite_url, [("qcwy", "北京", "python")], FARM_RETRY_DELAY=0.5)
    try:
        crawler.signals.send_catch_log(scrapy_signals.spider_opened, spider=crawler.spider)
        await db_barrier(crawler)
        [run] = middleware.runs.values()
        runtime = crawler.get_extension(CrawlParts)
        runtime.registry.end(run.lease, Outcome("failed", "HTTP 404 at http://x"))
        failed_at = time.monotonic()
        await until(lambda: crawler.stats.get_value("farm/lease/waiting_for_retry"), 10, "the wait")
        assert crawler.engine.closed == []
        await until(lambda: middleware.runs, 10, "the retry")
        assert time.monotonic() - failed_at >= 0.45
        [again] = middleware.runs.values()
        assert (again.lease.id, again.lease.from_status, again.lease.retry_count) == (run.lease.id, "failed", 1)
    finally:
        crawler.get_extension(CrawlParts).close()


@pytest_twisted.ensureDeferred
async def test_with_nothing_claimable_and_nothing_to_wait_for_the_crawl_closes(sqlite_url):
    crawler, middleware = crawler_for(sqlite_url, [("qcwy", "北京", "python")], FARM_MAX_RETRIES=0)
    try:
        crawler.signals.send_catch_log(scrapy_signals.spider_opened, spider=crawler.spider)
        await db_barrier(crawler)
        [run] = middleware.runs.values()
        crawler.get_extension(CrawlParts).registry.end(run.lease, Outcome("failed", "HTTP 404 at http://x"))
        await until(lambda: crawler.engine.closed, 10, "the crawl to close")
        assert crawler.engine.closed == ["finished"]
        assert crawler.stats.get_value("farm/lease/waiting_for_retry") is None
    finally:
        crawler.get_extension(CrawlParts).close()


def test_a_reap_skips_rows_another_claimer_holds_locked_instead_of_waiting_for_them(server_db_url):
    from datetime import timedelta

    from farm.state.clock import utcnow
    from farm.state.db import make_engine
    from farm.state.store import KeywordStore
    from tests.migrated import migrated

    migrated(server_db_url)
    store = KeywordStore(make_engine(server_db_url), lease_timeout=60)
    store.add_keywords([("qcwy", "北京", "python"), ("qcwy", "上海", "java")])
    store.claim("qcwy", "dead crawler", 2)
    later = KeywordStore(store.engine, lease_timeout=60, clock=lambda: utcnow() + timedelta(hours=1))
    other = create_engine(server_db_url, isolation_level="READ COMMITTED")
    try:
        with other.connect() as conn:
            conn.execute(text("SELECT id FROM keyword FOR UPDATE")).all()  # a claimer at work
            started = time.monotonic()
            assert later.reap() == 0  # skipped, not waited for (the lock wait timeout is 50 s)
            assert time.monotonic() - started < 5
            conn.rollback()
        assert later.reap() == 2
    finally:
        other.dispose()
        store.close()


@pytest_twisted.ensureDeferred
async def test_a_claim_whose_commit_lost_its_answer_keeps_the_rows_it_took(mariadb_url):
    rows = [("qcwy", city, "python") for city in ("北京", "上海", "广州", "深圳", "杭州", "成都")]
    crawler, middleware = crawler_for(mariadb_url, rows, FARM_LEASES_IN_FLIGHT=2)
    store = crawler.get_extension(CrawlParts).store
    claim, committed = store.claim_once, []

    def commit_then_lose_the_answer(*args):
        leases = claim(*args)
        if not committed:  # the connection drops after the COMMIT reached the server
            committed.extend(leases)
            lost = pymysql.err.OperationalError(2013, "Lost connection to MySQL server during query")
            raise OperationalError("COMMIT", {}, lost, connection_invalidated=True)
        return leases

    store.claim_once = commit_then_lose_the_answer
    try:
        crawler.signals.send_catch_log(scrapy_signals.spider_opened, spider=crawler.spider)
        await until(lambda: middleware.runs, 10, "a claim")
        await db_barrier(crawler)
        with store.engine.connect() as conn:
            held = conn.execute(
                text("SELECT id, lease_token FROM keyword WHERE crawl_status = 'crawling' AND crawler_id = :me"),
                {"me": crawler.get_extension(CrawlParts).crawler_id},
            ).all()
        assert len(committed) == 2
        assert set(middleware.runs) == {lease.key for lease in committed} == {tuple(row) for row in held}
        assert crawler.stats.get_value("farm/lease/claimed/recovered") == 2
    finally:
        crawler.get_extension(CrawlParts).close()
