"""Ctrl+C mid-crawl, and two crawlers sharing one keyword table."""

import signal

import pytest

from farm.sandbox.testing import SandboxProcess
from tests.e2e.harness import (
    expected_crawl,
    fetched_pages,
    keywords,
    prepare_db,
    run_crawl,
    served,
    start_crawl,
    stored_postings,
    wait_until,
)

pytestmark = pytest.mark.e2e

CITIES = ("北京", "上海", "广州", "深圳")
JOBS = ("python", "java", "前端")
ROWS = [("qcwy", city, job) for city in CITIES for job in JOBS]
SETTINGS = {"FARM_QCWY_MAX_PAGES": 10, "CONCURRENT_REQUESTS": 4, "FARM_LEASES_IN_FLIGHT": 2}


def test_ctrl_c_releases_keywords_as_partial_and_the_next_run_fetches_no_page_twice(sqlite_url, tmp_path):
    prepare_db(sqlite_url, ROWS)
    with SandboxProcess(seed=4, postings=(200, 200)) as sandbox:
        # slowed down, so that the keywords held at the Ctrl+C still have pages to fetch
        crawler = start_crawl("qcwy", sqlite_url, sandbox.url, tmp_path / "crawl.log", DOWNLOAD_DELAY=0.05, **SETTINGS)
        try:
            wait_until(lambda: served(sandbox) >= 25 or crawler.poll() is not None, 60, "25 pages")
            assert crawler.poll() is None, "the crawl ended before it could be stopped"
            crawler.send_signal(signal.SIGINT)
            assert crawler.wait(60) == 0
        finally:
            crawler.kill()
            crawler.wait(30)
        log = (tmp_path / "crawl.log").read_text()
        assert "releasing" in log and "partial" in log
        states = {row["crawl_status"] for row in keywords(sqlite_url)}
        assert "crawling" not in states and "partial" in states

        resumed = run_crawl("qcwy", sqlite_url, sandbox.url, **SETTINGS)
        assert resumed.returncode == 0, resumed.output[-3000:]
        pages, ids, _ = expected_crawl(sandbox, "qcwy", ROWS, 10)
        assert fetched_pages(sandbox, "qcwy") == {page: 1 for page in pages}
    assert {row["crawl_status"] for row in keywords(sqlite_url)} == {"completed"}
    assert sorted(stored_postings(sqlite_url, "qcwy")) == sorted(ids)


@pytest.mark.parametrize("second_start", ["together", "while_the_first_runs"])
def test_two_crawlers_on_one_database_share_the_keywords_and_fetch_no_page_twice(mariadb_url, tmp_path, second_start):
    """Started together, or the second while the first is under way (cron starting the day's crawl
    again before the last one ended): the second joins the work through the leases."""
    # enough work (24 keywords x 8-10 pages) that the second crawler's start-up cannot miss it all
    rows = [("qcwy", city, job) for city in CITIES for job in JOBS + ("测试", "运维", "产品经理")]
    prepare_db(mariadb_url, rows)
    with SandboxProcess(seed=6, postings=(150, 200)) as sandbox:
        first_settings = dict(SETTINGS)
        if second_start == "while_the_first_runs":
            first_settings["DOWNLOAD_DELAY"] = 0.1  # slow: it is still at it when the second starts
        crawlers = [
            start_crawl(
                "qcwy", mariadb_url, sandbox.url, tmp_path / "crawl-1.log", FARM_CRAWLER_ID="c1", **first_settings
            )
        ]
        try:
            if second_start == "while_the_first_runs":
                wait_until(lambda: served(sandbox) >= 10 or crawlers[0].poll() is not None, 60, "10 pages")
                assert crawlers[0].poll() is None, "the first crawl ended before the second started"
            crawlers.append(
                start_crawl(
                    "qcwy", mariadb_url, sandbox.url, tmp_path / "crawl-2.log", FARM_CRAWLER_ID="c2", **SETTINGS
                )
            )
            assert [crawler.wait(120) for crawler in crawlers] == [0, 0]
        finally:
            for crawler in crawlers:
                crawler.kill()
                crawler.wait(30)
        pages, ids, _ = expected_crawl(sandbox, "qcwy", rows, 10)
        assert fetched_pages(sandbox, "qcwy") == {page: 1 for page in pages}
    done = keywords(mariadb_url)
    assert {row["crawl_status"] for row in done} == {"completed"}
    assert {row["crawler_id"] for row in done} == {"c1", "c2"}  # both did a share
    assert sorted(stored_postings(mariadb_url, "qcwy")) == sorted(ids)
