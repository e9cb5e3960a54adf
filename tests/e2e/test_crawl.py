"""Whole crawls: `scrapy crawl` processes against the sandbox, state in SQLite and in MariaDB."""

import os
from collections import Counter
from datetime import UTC, datetime

import pytest
from sqlalchemy import insert

from farm.sandbox.testing import SandboxProcess
from farm.state.models import Keyword
from tests.e2e.harness import (
    crawl_stat,
    expected_crawl,
    fetched_pages,
    keywords,
    prepare_db,
    run_crawl,
    stored_postings,
)

pytestmark = pytest.mark.e2e

CITIES = ("北京", "上海", "深圳")
JOBS = ("python", "java", "前端")
MAX_PAGES = {"boss": 3, "qcwy": 6, "zhilian": 5}


def rows_for(source, cities=CITIES, jobs=JOBS):
    return [(source, city, job) for city in cities for job in jobs]


def max_pages_setting(source):
    return {f"FARM_{source.upper()}_MAX_PAGES": MAX_PAGES[source]}


# each site once and each database once; `make soak` (FARM_SOAK=1) every site on each (test_real_day.py
# crawls the sites on the other databases)
EVERY_CRAWL = [(source, db) for source in ("boss", "qcwy", "zhilian") for db in ("sqlite", "mariadb")]
CRAWLS = (
    EVERY_CRAWL if os.environ.get("FARM_SOAK") else [("boss", "mariadb"), ("qcwy", "sqlite"), ("zhilian", "sqlite")]
)


@pytest.mark.parametrize(("source", "database_url"), CRAWLS, indirect=["database_url"])
def test_full_crawl_stores_every_posting_once_and_fetches_every_page_once(source, database_url):
    db_url = database_url
    rows = rows_for(source) + [(source, "杭州", "python")]
    prepare_db(db_url, rows)
    with SandboxProcess(seed=7, postings=(0, 160)) as sandbox:
        proc = run_crawl(source, db_url, sandbox.url, **max_pages_setting(source))
        assert proc.returncode == 0, proc.output[-3000:]
        pages, ids, per_keyword = expected_crawl(sandbox, source, rows, MAX_PAGES[source])
        assert f"farm {source}: keywords {len(rows)} done, 0 in flight | pages {len(pages)} (" in proc.output

        progress = {
            (k["city"], k["job"]): (k["crawl_status"], k["last_completed_page"], k["total_pages"], k["jobs_found"])
            for k in keywords(db_url)
        }
        assert progress == {key: ("completed", last, last, jobs) for key, (last, jobs) in per_keyword.items()}
        stored = stored_postings(db_url, source)
        assert len(stored) == len(set(stored))
        assert set(stored) == ids
        assert fetched_pages(sandbox, source) == {page: 1 for page in pages}
        # postings shared by two keywords were found twice but stored once
        assert sum(jobs for _, jobs in per_keyword.values()) > len(ids)

        again = run_crawl(source, db_url, sandbox.url, **max_pages_setting(source))
        assert again.returncode == 0, again.output[-3000:]
        assert f"no {source} keyword left to claim for today" in again.output
        assert fetched_pages(sandbox, source) == {page: 1 for page in pages}


def test_blocks_are_retried_and_everything_completes(sqlite_url):
    rows = rows_for("qcwy")
    prepare_db(sqlite_url, rows)
    kinds = ["qcwy_waf", "qcwy_slider", "http429", "http503"]
    with SandboxProcess(seed=11, postings=(100, 200), fault_rate=0.05, fault_kinds=kinds, fault_seed=3) as sandbox:
        proc = run_crawl("qcwy", sqlite_url, sandbox.url, FARM_QCWY_MAX_PAGES=10)
        assert proc.returncode == 0, proc.output[-3000:]
        pages, ids, _ = expected_crawl(sandbox, "qcwy", rows, 10)
        assert all(k["crawl_status"] == "completed" for k in keywords(sqlite_url))
        assert set(stored_postings(sqlite_url, "qcwy")) == ids
        # a blocked response is not a served page: each page was served exactly once
        assert fetched_pages(sandbox, "qcwy") == {page: 1 for page in pages}
    blocks = crawl_stat(proc.output, "farm/block/count")
    assert blocks > 0
    assert crawl_stat(proc.output, "farm/block/retry/count") == blocks


def test_a_failing_keyword_ends_failed_after_three_retries_and_a_blocked_one_partial_then_failed_for_the_day(
    mariadb_url,
):
    rows = [
        ("zhilian", "北京", "python"),
        ("zhilian", "上海", "java"),
        ("zhilian", "北京", "坏关键词"),
        ("zhilian", "上海", "被封锁"),
    ]
    prepare_db(mariadb_url, rows)
    failing = {"坏关键词": "http500", "被封锁": "zhilian_verify"}
    with SandboxProcess(seed=5, postings=(30, 90), fail_keywords=failing) as sandbox:
        proc = run_crawl("zhilian", mariadb_url, sandbox.url, FARM_BLOCK_RETRIES=2, FARM_MAX_BLOCKED_CLAIMS=2)
        assert proc.returncode == 0, proc.output[-3000:]
        by_job = {k["job"]: k for k in keywords(mariadb_url)}
        check_first_run(by_job, proc)
        # the next run claims the blocked keyword first; blocked again, it is done for the day
        again = run_crawl("zhilian", mariadb_url, sandbox.url, FARM_BLOCK_RETRIES=2, FARM_MAX_BLOCKED_CLAIMS=2)
        assert again.returncode == 0, again.output[-3000:]
    blocked = next(k for k in keywords(mariadb_url) if k["job"] == "被封锁")
    assert (blocked["crawl_status"], blocked["blocked_claims"]) == ("failed", 2)
    assert blocked["error_message"].startswith("blocked 2 times today; last: zhilian_")
    assert crawl_stat(again.output, "farm/keyword/blocked_all_day") == 1
    third = run_crawl("zhilian", mariadb_url, "http://127.0.0.1:9")  # nothing left to claim: no request made
    assert third.returncode == 0 and "no zhilian keyword left to claim for today" in third.output


def check_first_run(by_job, proc):
    bad, blocked = by_job.pop("坏关键词"), by_job.pop("被封锁")
    assert (bad["crawl_status"], bad["retry_count"]) == ("failed", 3)
    assert "HTTP 500" in bad["error_message"] and "/sou/jl530" in bad["error_message"]
    # a block is not the keyword's fault: partial, with the reason, left for the next run
    assert (blocked["crawl_status"], blocked["retry_count"]) == ("partial", 0)
    assert "blocked: zhilian_" in blocked["error_message"] and "/sou/jl538" in blocked["error_message"]
    assert {k["crawl_status"] for k in by_job.values()} == {"completed"}
    assert crawl_stat(proc.output, "farm/keyword/failed") == 4
    assert crawl_stat(proc.output, "farm/keyword/blocked") == 1
    assert crawl_stat(proc.output, "farm/block/gave_up") == 1
    assert crawl_stat(proc.output, "farm/site/gave_up") == 0  # one keyword's 500s are its own fault


def test_unknown_city_fails_that_keyword_and_others_go_on(sqlite_url):
    store = prepare_db(sqlite_url, [("boss", "北京", "python")])
    # `farm keywords import` and the store refuse an unknown city; a row written by other
    # means (or before that check) still meets the crawl-time one
    now = datetime.now(UTC)
    with store.engine.begin() as conn:
        conn.execute(insert(Keyword).values(source="boss", city="火星", job="python", created_at=now, updated_at=now))
    store.engine.dispose()
    with SandboxProcess(seed=1, postings=(10, 40)) as sandbox:
        proc = run_crawl("boss", sqlite_url, sandbox.url, FARM_MAX_RETRIES=0)
        assert proc.returncode == 0, proc.output[-3000:]
    status = Counter((k["city"], k["crawl_status"]) for k in keywords(sqlite_url))
    assert status == {("北京", "completed"): 1, ("火星", "failed"): 1}
    mars = next(k for k in keywords(sqlite_url) if k["city"] == "火星")
    assert "unknown city '火星'" in mars["error_message"]
