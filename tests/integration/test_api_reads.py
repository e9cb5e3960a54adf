"""farm.api.reads against KeywordStore, on SQLite and on MariaDB: the listing is what a claim takes."""

from datetime import UTC, date, datetime, timedelta

import pytest
from sqlalchemy import update

from farm.api import reads
from farm.state import KeywordStore
from farm.state.db import make_engine
from farm.state.models import Keyword
from tests.migrated import migrated

K = Keyword.__table__
NOW = datetime(2025, 3, 10, 4, 0, 0, tzinfo=UTC)  # 12:00 in Shanghai
TODAY, YESTERDAY = date(2025, 3, 10), date(2025, 3, 9)


@pytest.fixture
def store(db_url):
    migrated(db_url)
    engine = make_engine(db_url)
    yield KeywordStore(
        engine, lease_timeout=600, max_retries=3, retry_delay=600, max_blocked_claims=3, clock=lambda: NOW
    )
    engine.dispose()


def set_row(store, job, **values):
    with store.engine.begin() as conn:
        conn.execute(update(K).where(K.c.job == job).values(**values))


def test_the_listing_is_what_a_claim_takes_in_claim_order(store):
    jobs = [
        "fresh-never-2",
        "fresh-never-1",
        "partial-today",
        "partial-yesterday",
        "failed-due",
        "failed-waiting",
        "failed-spent",
        "failed-blocked",
        "completed-today",
        "crawling-today",
        "crawling-yesterday-live",
        "crawling-yesterday-stale",
        "completed-yesterday",
        "completed-older",
    ]
    store.add_keywords([("boss", "北京", job) for job in jobs] + [("qcwy", "北京", "other-source")])
    live, stale = NOW - timedelta(seconds=60), NOW - timedelta(seconds=601)
    set_row(
        store,
        "partial-today",
        crawl_status="partial",
        last_requested_date=TODAY,
        last_completed_page=2,
        total_pages=5,
        pages_ahead="4,5",
        retry_count=1,
    )
    set_row(store, "partial-yesterday", crawl_status="partial", last_requested_date=YESTERDAY, last_completed_page=1)
    set_row(
        store,
        "failed-due",
        crawl_status="failed",
        last_requested_date=TODAY,
        retry_count=1,
        retry_at=NOW - timedelta(seconds=1),
        last_completed_page=1,
        total_pages=3,
    )
    set_row(
        store, "failed-waiting", crawl_status="failed", last_requested_date=TODAY, retry_at=NOW + timedelta(seconds=60)
    )
    set_row(store, "failed-spent", crawl_status="failed", last_requested_date=TODAY, retry_count=3)
    set_row(store, "failed-blocked", crawl_status="failed", last_requested_date=TODAY, blocked_claims=3)
    set_row(store, "completed-today", crawl_status="completed", last_requested_date=TODAY)
    set_row(store, "crawling-today", crawl_status="crawling", last_requested_date=TODAY, heartbeat_at=stale)
    set_row(store, "crawling-yesterday-live", crawl_status="crawling", last_requested_date=YESTERDAY, heartbeat_at=live)
    set_row(
        store,
        "crawling-yesterday-stale",
        crawl_status="crawling",
        last_requested_date=YESTERDAY,
        heartbeat_at=stale,
        last_completed_page=3,
    )
    set_row(store, "completed-yesterday", crawl_status="completed", last_requested_date=YESTERDAY)
    set_row(store, "completed-older", crawl_status="completed", last_requested_date=YESTERDAY - timedelta(days=3))

    listed = reads.claimable_keywords(store, "boss", 100)
    assert len(listed) == store.outlook("boss").claimable == 8
    assert reads.claimable_keywords(store, "boss", 4) == listed[:4]
    assert {k["crawl_status"] for k in listed if k["job"] == "partial-today"} == {"partial"}
    leases = store.claim("boss", "w", n=100)
    assert [
        (k["id"], k["claim_kind"], k["last_completed_page"], k["total_pages"], k["pages_done_ahead"], k["retry_count"])
        for k in listed
    ] == [
        (
            lease.id,
            lease.from_status,
            lease.start_page - 1,
            lease.total_pages,
            sorted(lease.pages_ahead),
            lease.retry_count - (1 if lease.from_status == "failed" else 0),
        )
        for lease in leases
    ]
    # partial of today, failed of today with a retry due, then fresh: never requested, oldest request, id
    assert [k["job"] for k in listed] == [
        "partial-today",
        "failed-due",
        "fresh-never-2",
        "fresh-never-1",
        "completed-older",
        "partial-yesterday",
        "crawling-yesterday-stale",
        "completed-yesterday",
    ]
    assert reads.claimable_keywords(store, "boss", 100) == []


def test_keyword_state_and_day_progress(store):
    store.add_keywords([("boss", "北京", "a"), ("boss", "北京", "b"), ("qcwy", "北京", "c")])
    a, b = store.claim("boss", "w", n=2)
    store.page_done(a, 1, 10, total_pages=5)
    store.page_done(a, 3, 10)
    store.page_done(a, 5, 10)
    store.page_done(b, 2, 10)
    state = reads.keyword_state(store, a.id, a.lease_token)
    assert (state["crawler_id"], state["lease_current"], state["last_completed_page"]) == ("w", True, 1)
    assert state["heartbeat_at"] == NOW
    assert reads.keyword_state(store, a.id, a.lease_token + 1)["lease_current"] is False
    assert reads.keyword_state(store, 10_000, 1) is None
    # a: watermark 1 and pages 3, 5 beyond it; b: page 2 beyond its watermark 0
    assert reads.day_progress(store, ["boss", "qcwy"], TODAY) == {"boss": (4, NOW)}
    assert reads.day_progress(store, ["boss"], YESTERDAY) == {}
