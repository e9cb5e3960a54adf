"""kill -9 at random moments: nothing lost, nothing stored twice, little fetched twice."""

import os
import random
import signal
from datetime import timedelta

import pytest

from farm.sandbox.testing import SandboxProcess
from farm.state.clock import utcnow
from farm.state.db import make_engine
from farm.state.store import KeywordStore
from tests.e2e.harness import (
    expected_crawl,
    fetched_pages,
    keywords,
    kill_at_a_random_moment,
    prepare_db,
    run_crawl,
    served,
    start_crawl,
    state_writer_of,
    stored_postings,
    wait_until,
)

pytestmark = pytest.mark.e2e

# `make test` kills a crawl KILLS times on PostgreSQL and a state writer on SQLite (test_checkpoint.py kills
# crawls on SQLite, test_shared.py on MariaDB); `make soak` (FARM_SOAK=1) each test on every database, the
# crawl killed twice as often
SOAK = bool(os.environ.get("FARM_SOAK"))
KILLS = 10 if SOAK else 5
# At most this many pages a crawler has fetched without their progress recorded
# (the page window): what one kill -9 may cost in pages fetched again.
PAGES_IN_FLIGHT = 8
SETTINGS = {
    "FARM_QCWY_MAX_PAGES": 10,
    "CONCURRENT_REQUESTS": 4,
    "FARM_LEASES_IN_FLIGHT": 3,
    "FARM_PAGES_IN_FLIGHT": PAGES_IN_FLIGHT,
}


def reap_dead_leases(db_url):
    """The killed crawler is gone: judge its leases from an hour later, as a reaper would."""
    store = KeywordStore(make_engine(db_url), clock=lambda: utcnow() + timedelta(hours=1))
    store.reap()
    store.engine.dispose()


@pytest.mark.parametrize("database_url", ["sqlite", "mariadb", "postgresql"] if SOAK else ["postgresql"], indirect=True)
def test_kill_9_at_random_moments_loses_nothing(database_url, tmp_path):
    db_url = database_url
    cities, jobs = ("北京", "上海", "广州", "深圳"), ("python", "java", "前端", "测试", "运维")
    rows = [("qcwy", city, job) for city in cities for job in jobs]
    prepare_db(db_url, rows)
    chance = random.Random(2026)
    log = tmp_path / "crawls.log"
    with SandboxProcess(seed=3, postings=(200, 200)) as sandbox:
        kills = 0
        for _ in range(KILLS):
            # a random moment into the crawl: after 1 to 15 more pages were served
            start = lambda: start_crawl("qcwy", db_url, sandbox.url, log, **SETTINGS)  # noqa: E731
            kills += kill_at_a_random_moment(sandbox, start, chance, 1, 15)
            reap_dead_leases(db_url)
        final = run_crawl("qcwy", db_url, sandbox.url, **SETTINGS)
        assert final.returncode == 0, final.output[-3000:]

        pages, ids, per_keyword = expected_crawl(sandbox, "qcwy", rows, 10)
        fetches = fetched_pages(sandbox, "qcwy")

    assert kills == KILLS, f"only {kills} crawls were still running when killed"
    assert len(pages) == 200  # 20 keywords x 10 pages
    states = {
        (k["city"], k["job"]): (k["crawl_status"], k["last_completed_page"], k["jobs_found"]) for k in keywords(db_url)
    }
    assert states == {key: ("completed", last, jobs) for key, (last, jobs) in per_keyword.items()}
    stored = stored_postings(db_url, "qcwy")
    assert len(stored) == len(set(stored)) and set(stored) == ids
    assert set(fetches) == pages
    refetched = sum(fetches.values()) - len(pages)
    assert refetched <= kills * PAGES_IN_FLIGHT, f"{refetched} pages fetched again after {kills} kills"


@pytest.mark.parametrize("database_url", ["sqlite", "mariadb"] if SOAK else ["sqlite"], indirect=True)
def test_a_killed_state_writer_stops_the_crawl_and_the_next_run_loses_nothing(database_url, tmp_path):
    db_url = database_url
    rows = [("qcwy", city, job) for city in ("北京", "上海") for job in ("python", "java", "前端")]
    prepare_db(db_url, rows)
    with SandboxProcess(seed=5, postings=(200, 200)) as sandbox:
        crawler = start_crawl("qcwy", db_url, sandbox.url, tmp_path / "crawl.log", DOWNLOAD_DELAY=0.02, **SETTINGS)
        try:
            wait_until(lambda: served(sandbox) >= 12 or crawler.poll() is not None, 60, "12 pages")
            writer = state_writer_of(crawler.pid)
            assert writer is not None and crawler.poll() is None, "no crawl with a state writer to kill"
            os.kill(writer, signal.SIGKILL)
            assert crawler.wait(60) is not None
        finally:
            crawler.kill()
            crawler.wait(30)
        log = (tmp_path / "crawl.log").read_text()
        assert "the state writer was killed by signal 9" in log and "farm_db_error" in log
        # the crawl released what it held on its way out: nothing waits for a reaper
        assert "crawling" not in {row["crawl_status"] for row in keywords(db_url)}

        final = run_crawl("qcwy", db_url, sandbox.url, **SETTINGS)
        assert final.returncode == 0, final.output[-3000:]
        pages, ids, _ = expected_crawl(sandbox, "qcwy", rows, 10)
        fetches = fetched_pages(sandbox, "qcwy")
    assert {row["crawl_status"] for row in keywords(db_url)} == {"completed"}
    stored = stored_postings(db_url, "qcwy")
    assert len(stored) == len(set(stored)) and set(stored) == ids
    assert set(fetches) == pages
    assert sum(fetches.values()) - len(pages) <= PAGES_IN_FLIGHT  # the pages whose progress was lost
