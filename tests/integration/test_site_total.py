"""keyword.site_total on real databases (SQLite, MariaDB, PostgreSQL): written with the pages, kept
by a resumed claim, cleared by a fresh one, fenced like every write, and added by migration 0010 to
rows that have none."""

from datetime import UTC, datetime, timedelta
from zoneinfo import ZoneInfo

import pytest
from sqlalchemy import select, text

from farm.state import KeywordStore
from farm.state.db import make_engine
from farm.state.migrate import HEAD, current_revision, upgrade
from farm.state.models import SITE_TOTAL_MAX, Keyword
from tests.migrated import migrated

SHANGHAI = ZoneInfo("Asia/Shanghai")


class Clock:
    def __init__(self):
        self.now = datetime(2026, 3, 10, 12, 0, tzinfo=SHANGHAI).astimezone(UTC)

    def __call__(self):
        return self.now


@pytest.fixture
def clock():
    return Clock()


@pytest.fixture
def store(every_db_url, clock):
    migrated(every_db_url)
    engine = make_engine(every_db_url)
    store = KeywordStore(engine, timezone="Asia/Shanghai", retry_delay=0, clock=clock)
    store.add_keywords([("boss", "北京", "python")])
    yield store
    engine.dispose()


def site_total(store, keyword_id):
    with store.engine.connect() as conn:
        return conn.execute(select(Keyword.site_total).where(Keyword.id == keyword_id)).scalar_one()


def test_the_site_total_goes_with_the_pages_and_the_latest_told_wins(store):
    [lease] = store.claim("boss", "w")
    assert site_total(store, lease.id) is None
    store.page_done(lease, 1, 15, site_total=385)
    assert site_total(store, lease.id) == 385
    store.page_done(lease, 2, 15)  # a page that tells none leaves it
    assert site_total(store, lease.id) == 385
    write = store.page_done(lease, 3, 15, total_pages=3, site_total=390)
    assert write.completed and site_total(store, lease.id) == 390


def test_one_write_of_several_pages_keeps_the_last_count_told(store):
    [lease] = store.claim("boss", "w")
    store.pages_done([(lease, 1, 15, None, 100), (lease, 2, 15, None, 120), (lease, 3, 15, None, None)])
    assert site_total(store, lease.id) == 120


def test_a_count_beyond_the_column_is_cut_and_a_negative_one_ignored(store):
    [lease] = store.claim("boss", "w")
    store.page_done(lease, 1, 15, site_total=2**40)
    assert site_total(store, lease.id) == SITE_TOTAL_MAX
    store.page_done(lease, 2, 15, site_total=-1)
    assert site_total(store, lease.id) == SITE_TOTAL_MAX


def test_a_fenced_write_leaves_the_site_total(store):
    [lease] = store.claim("boss", "w")
    store.page_done(lease, 1, 15, site_total=385)
    assert store.release(lease, "stop")
    write = store.page_done(lease, 2, 15, site_total=999)
    assert not write.applied and site_total(store, lease.id) == 385


def test_a_resumed_claim_keeps_the_count_and_the_first_page_of_the_next_day_replaces_it(store, clock):
    [lease] = store.claim("boss", "w")
    store.page_done(lease, 1, 15, site_total=385)
    assert store.release(lease, "stop")
    [resumed] = store.claim("boss", "w")
    assert resumed.from_status == "partial"
    store.page_done(resumed, 2, 15)
    assert site_total(store, resumed.id) == 385
    assert store.release(resumed, "stop")
    clock.now += timedelta(days=1)
    [fresh] = store.claim("boss", "w")
    assert fresh.from_status == "fresh"
    store.page_done(fresh, 2, 15)  # the day's first page done tells none: yesterday's count goes
    assert site_total(store, fresh.id) is None
    store.page_done(fresh, 1, 15, site_total=12)
    assert site_total(store, fresh.id) == 12


def test_migration_0010_adds_the_column_to_rows_that_have_none(every_db_url):
    upgrade(every_db_url, revision="0009")
    engine = make_engine(every_db_url)
    try:
        with engine.begin() as conn:
            conn.execute(
                text(
                    "INSERT INTO keyword (source, city, job, crawl_status, created_at, updated_at) "
                    "VALUES ('qcwy', '上海', 'java', 'completed', :now, :now)"
                ),
                {"now": datetime(2026, 3, 1, 8, 0)},
            )
        migrated(every_db_url)
        assert current_revision(engine) == HEAD  # 0010 and every migration after it
        with engine.connect() as conn:
            rows = conn.execute(select(Keyword.job, Keyword.crawl_status, Keyword.site_total)).all()
        assert [tuple(row) for row in rows] == [("java", "completed", None)]
    finally:
        engine.dispose()
