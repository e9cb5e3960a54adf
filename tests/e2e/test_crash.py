"""kill -9 at random moments: nothing lost, nothing stored twice, little fetched twice."""

import random
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
    prepare_db,
    run_crawl,
    served,
    start_crawl,
    stored_postings,
    wait_until,
)

pytestmark = pytest.mark.e2e

KILLS = 10
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


def test_kill_9_at_random_moments_loses_nothing(db_url, tmp_path):
    cities, jobs = ("北京", "上海", "广州", "深圳"), ("python", "java", "前端", "测试", "运维")
    rows = [("qcwy", city, job) for city in cities for job in jobs]
    prepare_db(db_url, rows)
    chance = random.Random(2026)
    log = tmp_path / "crawls.log"
    with SandboxProcess(seed=3, postings=(200, 200)) as sandbox:
        kills = 0
        for _ in range(KILLS):
            # a random moment into the crawl: after 1 to 15 more pages were served
            target = served(sandbox) + chance.randint(1, 15)
            crawler = start_crawl("qcwy", db_url, sandbox.url, log, **SETTINGS)
            try:
                wait_until(lambda: served(sandbox) >= target or crawler.poll() is not None, 60, "pages")
                if crawler.poll() is None:
                    crawler.kill()
                    kills += 1
            finally:
                crawler.kill()
                crawler.wait(30)
            reap_dead_leases(db_url)
        final = run_crawl("qcwy", db_url, sandbox.url, **SETTINGS)
        assert final.returncode == 0, final.output[-3000:]

        pages, ids, per_keyword = expected_crawl(sandbox, "qcwy", rows, 10)
        fetches = fetched_pages(sandbox, "qcwy")

    assert kills == KILLS, f"only {kills} crawls were still running when killed"
    assert len(pages) == 200  # 20 keywords x 10 pages
    states = {
        (k["city"], k["job"]): (k["crawl_status"], k["last_completed_page"], k["jobs_found"])
        for k in keywords(db_url)
    }
    assert states == {key: ("completed", last, jobs) for key, (last, jobs) in per_keyword.items()}
    stored = stored_postings(db_url, "qcwy")
    assert len(stored) == len(set(stored)) and set(stored) == ids
    assert set(fetches) == pages
    refetched = sum(fetches.values()) - len(pages)
    assert refetched <= kills * PAGES_IN_FLIGHT, f"{refetched} pages fetched again after {kills} kills"
