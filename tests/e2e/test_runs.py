"""Every crawl, local or Redis, leaves its row in the run table (farm.extensions.runs)."""

import json

import pytest
from sqlalchemy import select

from farm.sandbox.testing import SandboxProcess
from farm.state.db import make_engine
from farm.state.models import CrawlRun, KeywordDay
from tests.e2e.harness import keywords, prepare_db, run_crawl

pytestmark = pytest.mark.e2e

ROWS = [("qcwy", city, job) for city in ("北京", "上海") for job in ("python", "java", "测试")]


def runs_and_days(db_url):
    engine = make_engine(db_url)
    with engine.connect() as connection:
        runs = connection.execute(select(CrawlRun).order_by(CrawlRun.id)).all()
        days = connection.execute(select(KeywordDay)).all()
    engine.dispose()
    return runs, days


def check_run(run, days, output):
    assert run.status == "finished" and run.ended_at >= run.started_at  # MariaDB keeps whole seconds
    assert (run.keywords_claimed, run.keywords_ended) == (len(ROWS), len(ROWS))
    found = sum(day.jobs_found for day in days)
    assert 0 < run.postings <= found  # a posting two keywords found is one row
    assert run.pages == sum(day.last_completed_page for day in days)
    coverage = json.loads(run.coverage)
    assert coverage["company"] == coverage["items"] == found
    assert {(day.city, day.job, day.crawl_status) for day in days} == {(c, j, "completed") for _, c, j in ROWS}
    assert f"'farm/runs/id': {run.id}" in output


def test_a_local_crawl_is_remembered_with_its_numbers_and_its_keywords_day(sqlite_url, tmp_path, monkeypatch):
    monkeypatch.setenv("TLDEXTRACT_CACHE", str(tmp_path / "tldextract"))  # no suffix list cached, no network
    prepare_db(sqlite_url, ROWS)
    with SandboxProcess(seed=3, postings=(20, 80)) as sandbox:
        proc = run_crawl("qcwy", sqlite_url, sandbox.url, FARM_QCWY_MAX_PAGES=2)
    assert proc.returncode == 0, proc.output[-3000:]
    (run,), days = runs_and_days(sqlite_url)
    check_run(run, days, proc.output)
    # the log says what the crawl did, not what its libraries deprecate or failed to download
    assert "Deprecat" not in proc.output
    assert "Traceback" not in proc.output and "tldextract" not in proc.output


@pytest.mark.redis
def test_a_crawl_sharing_work_through_redis_is_remembered_too(mariadb_url, shared):
    prepare_db(mariadb_url, ROWS)
    with SandboxProcess(seed=3, postings=(20, 80)) as sandbox:
        proc = run_crawl("qcwy", mariadb_url, sandbox.url, redis=shared, FARM_QCWY_MAX_PAGES=2)
    assert proc.returncode == 0, proc.output[-3000:]
    (run,), days = runs_and_days(mariadb_url)
    check_run(run, days, proc.output)


def test_a_crawl_closed_mid_way_copies_its_keywords_day_after_releasing_them(sqlite_url):
    # closed after a few pages: the keywords it held are released partial before keyword_day is copied
    prepare_db(sqlite_url, ROWS)
    with SandboxProcess(seed=3, postings=(300, 400)) as sandbox:
        proc = run_crawl("qcwy", sqlite_url, sandbox.url, CLOSESPIDER_PAGECOUNT=3)
    assert proc.returncode == 0, proc.output[-3000:]
    (run,), days = runs_and_days(sqlite_url)
    assert run.status == "closespider_pagecount"
    statuses = {(row["city"], row["job"]): row["crawl_status"] for row in keywords(sqlite_url)}
    assert "partial" in statuses.values() and "crawling" not in statuses.values()
    assert {(day.city, day.job): day.crawl_status for day in days} == {
        key: status for key, status in statuses.items() if status != "idle"
    }
