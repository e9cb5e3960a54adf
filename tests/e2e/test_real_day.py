"""What a real day brings, against the sandbox's faults: the crawl always ends and loses nothing."""

import json
import os

import pytest

from farm.sandbox.testing import SandboxProcess
from tests.e2e.harness import (
    crawl_stat,
    expected_crawl,
    fetched_pages,
    keywords,
    prepare_db,
    run_crawl,
    start_crawl,
    stored_postings,
    wait_until,
)
from tests.e2e.pipelines import dropped

pytestmark = pytest.mark.e2e

CITIES = ("北京", "上海", "广州", "深圳")
JOBS = ("python", "java", "前端")


def test_a_keyword_failing_while_its_pages_wait_for_the_window_ends_and_the_crawl_goes_on_to_its_end(
    sqlite_url, tmp_path
):
    # a window of 2 pages, a keyword of 20 pages that fails after its first page: its pages
    # waiting for the window must not hold it (nor the downloader) for ever
    rows = [("qcwy", "北京", "python"), ("qcwy", "上海", "java"), ("qcwy", "广州", "坏关键词")]
    prepare_db(sqlite_url, rows)
    settings = {
        "FARM_PAGES_IN_FLIGHT": 2,
        "FARM_LEASES_IN_FLIGHT": 3,
        "FARM_BLOCK_RETRIES": 1,
        "FARM_MAX_RETRIES": 0,
        "FARM_QCWY_MAX_PAGES": 20,
        "CONCURRENT_REQUESTS": 4,
    }
    with SandboxProcess(seed=4, postings=(400, 400)) as sandbox:
        crawl = start_crawl("qcwy", sqlite_url, sandbox.url, tmp_path / "crawl.log", **settings)
        try:
            wait_until(lambda: ("qcwy", "030200", "坏关键词", 1) in fetched_pages(sandbox, "qcwy"), 60, "page 1")
            sandbox.set_faults(keywords={"坏关键词": "http500"})  # from now on every page of it fails
            assert crawl.wait(120) == 0, (tmp_path / "crawl.log").read_text()[-3000:]
        finally:
            crawl.kill()
            crawl.wait()
        by_job = {k["job"]: k for k in keywords(sqlite_url)}
        bad = by_job.pop("坏关键词")
        assert bad["crawl_status"] == "failed" and "HTTP 500" in bad["error_message"]
        assert bad["last_completed_page"] >= 1  # the pages fetched before it failed are kept
        assert {(k["crawl_status"], k["last_completed_page"]) for k in by_job.values()} == {("completed", 20)}


def test_a_pipeline_before_farms_that_drops_postings_does_not_stall_any_keyword(sqlite_url):
    rows = [("zhilian", city, job) for city in CITIES[:2] for job in JOBS]
    prepare_db(sqlite_url, rows)
    pipelines = json.dumps({"tests.e2e.pipelines.DropSomePostings": 100, "farm.pipelines.sql.SqlPostingsPipeline": 300})
    with SandboxProcess(seed=8, postings=(40, 120)) as sandbox:
        proc = run_crawl(
            "zhilian", sqlite_url, sandbox.url, timeout=120, ITEM_PIPELINES=pipelines, FARM_ZHILIAN_MAX_PAGES=6
        )
        assert proc.returncode == 0, proc.output[-3000:]
        _, ids, per_keyword = expected_crawl(sandbox, "zhilian", rows, 6)
    assert {k["crawl_status"] for k in keywords(sqlite_url)} == {"completed"}
    assert set(stored_postings(sqlite_url, "zhilian")) == {i for i in ids if not dropped(i)}
    assert crawl_stat(proc.output, "item_dropped_count") > 0


MAX_PAGES = {"boss": 3, "qcwy": 6, "zhilian": 5}


# every site on SQLite and MariaDB; one on PostgreSQL
# `make test` crawls each site and each database once; `make soak` (FARM_SOAK=1) every site on each
EVERY_DAY = [(source, db) for source in ("boss", "qcwy", "zhilian") for db in ("sqlite", "mariadb")] + [
    ("qcwy", "postgresql")
]
DAYS = (
    EVERY_DAY if os.environ.get("FARM_SOAK") else [("boss", "sqlite"), ("zhilian", "mariadb"), ("qcwy", "postgresql")]
)


@pytest.mark.parametrize(("source", "database_url"), DAYS, indirect=["database_url"])
def test_a_day_of_stale_totals_hostile_postings_and_an_outage_loses_nothing_and_stores_each_posting_once(
    source, database_url
):
    db_url = database_url
    rows = [(source, city, job) for city in CITIES for job in JOBS]
    prepare_db(db_url, rows)
    max_pages = {f"FARM_{source.upper()}_MAX_PAGES": MAX_PAGES[source]}
    faults = dict(seed=12, postings=(0, 160), fault_seed=6, stale_totals=0.33, hostile_rate=0.02)
    with SandboxProcess(**faults) as sandbox:
        pages, ids, per_keyword = expected_crawl(sandbox, source, rows, MAX_PAGES[source])
        stale = [sandbox.truth(source, city, job)["stale"] for _, city, job in rows]
        assert {"under", "over"} <= set(stale) and 3 <= sum(map(bool, stale)) <= 7
        hostile = {i for _, city, job in rows for i in sandbox.truth(source, city, job)["hostile"]} & ids
        assert hostile, "the seed must give some hostile postings among those crawled"
        # the site drops every connection for 10 s once half the pages were served
        sandbox.start_outage(10, after_pages=len(pages) // 2)
        runs = []
        for _ in range(2):  # a second run is allowed for the outage
            runs.append(run_crawl(source, db_url, sandbox.url, timeout=180, **max_pages))
            assert runs[-1].returncode == 0, runs[-1].output[-3000:]
            if {k["crawl_status"] for k in keywords(db_url)} == {"completed"}:
                break
            wait_until(lambda: not sandbox.outage()["active"], 30, "the outage to end")
        assert sandbox.outage()["dropped"] > 0, "the outage must have hit the crawl"

    progress = {(k["city"], k["job"]): (k["crawl_status"], k["jobs_found"]) for k in keywords(db_url)}
    assert progress == {key: ("completed", jobs) for key, (_, jobs) in per_keyword.items()}
    stored = stored_postings(db_url, source)
    assert len(stored) == len(set(stored)) and set(stored) == ids
    output = "".join(run.output for run in runs)
    assert crawl_stat(output, "farm/site/errors") > 0
    assert "Traceback" not in output
