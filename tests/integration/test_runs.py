"""The run table's writes on every database (farm.runs.record)."""

import json
from datetime import UTC, date, datetime, timedelta
from zoneinfo import ZoneInfo

from sqlalchemy import select, update

from farm.runs.record import RunNumbers, close_run, keep_day, open_run
from farm.state.db import make_engine
from farm.state.models import CrawlRun, JobPostingRow, Keyword, KeywordDay, PostingDay
from farm.state.posting_fields import POSTING_FIELDS
from farm.state.store import KeywordStore
from tests.migrated import migrated

TZ = ZoneInfo("Asia/Shanghai")
START = datetime(2026, 5, 1, 1, 0, tzinfo=UTC)
END = datetime(2026, 5, 1, 2, 30, tzinfo=UTC)


def test_a_run_is_opened_running_and_closed_with_its_numbers(every_db_url):
    migrated(every_db_url)
    engine = make_engine(every_db_url)
    first = open_run(engine, "qcwy", "host-1", "host", START)
    second = open_run(engine, "qcwy", "host-2", "host", START)
    numbers = RunNumbers(3, 3, 12, 240, {"captcha": 2}, {"items": 240, "salary": 230}, {"farm/progress/pages": 12})
    close_run(engine, first, "finished", numbers, END)
    with engine.connect() as connection:
        rows = {row.id: row for row in connection.execute(select(CrawlRun))}
    engine.dispose()
    closed, running = rows[first], rows[second]
    assert (closed.status, closed.ended_at, closed.pages, closed.postings) == ("finished", END, 12, 240)
    assert json.loads(closed.refusals) == {"captcha": 2} and json.loads(closed.coverage)["salary"] == 230
    assert (running.status, running.ended_at, running.crawler_id) == ("running", None, "host-2")


def test_keep_day_copies_the_sources_keywords_of_the_day_and_replaces_an_earlier_copy(every_db_url):
    migrated(every_db_url)
    store = KeywordStore(make_engine(every_db_url))
    store.add_keywords([("qcwy", "北京", "python"), ("qcwy", "上海", "java"), ("boss", "北京", "python")])
    day = date(2026, 5, 1)
    with store.engine.begin() as connection:
        connection.execute(
            update(Keyword).values(last_requested_date=day, crawl_status="partial", jobs_found=10, total_pages=4)
        )
        connection.execute(update(Keyword).where(Keyword.job == "java").values(last_requested_date=date(2026, 4, 30)))
    keep_day(store.engine, "qcwy", day, TZ)
    with store.engine.begin() as connection:
        connection.execute(update(Keyword).values(crawl_status="completed", jobs_found=25))
    keep_day(store.engine, "qcwy", day, TZ)  # the last crawl's picture replaces the first
    with store.engine.connect() as connection:
        kept = connection.execute(select(KeywordDay)).all()
    store.close()
    assert [(k.day, k.source, k.city, k.job, k.crawl_status, k.jobs_found, k.total_pages) for k in kept] == [
        (day, "qcwy", "北京", "python", "completed", 25, 4)
    ]


def _posting(source, job_id):
    return {**dict.fromkeys(POSTING_FIELDS), "source": source, "job_id": job_id, "tags": [], "raw": {}}


def test_keep_day_copies_the_postings_seen_that_day_of_the_source_only(every_db_url):
    migrated(every_db_url)
    store = KeywordStore(make_engine(every_db_url))
    day = date(2026, 5, 1)
    start = datetime(2026, 5, 1, tzinfo=TZ)  # 2026-04-30 16:00 UTC: the day is Shanghai's
    store.upsert_postings([_posting("qcwy", "before"), _posting("qcwy", "again")], start - timedelta(minutes=1))
    store.upsert_postings([_posting("qcwy", "first"), _posting("boss", "other")], start)
    store.upsert_postings([_posting("qcwy", "again")], start + timedelta(hours=23, minutes=59))
    store.upsert_postings([_posting("qcwy", "after")], start + timedelta(days=1))
    keep_day(store.engine, "qcwy", day, TZ)
    keep_day(store.engine, "qcwy", day, TZ)  # a second crawl's copy replaces the first, no row twice
    with store.engine.connect() as connection:
        kept = connection.execute(
            select(JobPostingRow.job_id, PostingDay.day, PostingDay.source)
            .join(JobPostingRow, JobPostingRow.id == PostingDay.posting_id)
            .order_by(JobPostingRow.job_id)
        ).all()
    store.close()
    assert [tuple(row) for row in kept] == [("again", day, "qcwy"), ("first", day, "qcwy")]
