"""A Redis-mode worker whose database goes away before it closes: what it cannot release is taken back.

The worker's keywords stay ``crawling`` under it in the keyword table when the release at close
cannot be written. It stays listed in Redis as a worker taking keywords on, so that a worker that
finds it silent for FARM_WORKER_TIMEOUT adopts them once the database answers again, without
waiting for FARM_LEASE_TIMEOUT.
"""

import re

import pytest

from farm.sandbox.testing import SandboxProcess
from tests.e2e.harness import (
    crawl_stat,
    expected_crawl,
    fetched_pages,
    keywords,
    prepare_db,
    served,
    start_crawl,
    stop,
    stored_postings,
    wait_until,
)
from tests.relay import relay_to_database

pytestmark = [pytest.mark.e2e, pytest.mark.redis]

MAX_PAGES = 10
SETTINGS = {
    "FARM_QCWY_MAX_PAGES": MAX_PAGES,
    "FARM_WORKER_TIMEOUT": 2,
    "FARM_PAGES_IN_FLIGHT": 8,
    "FARM_LEASES_IN_FLIGHT": 3,
    "FARM_LEASE_TIMEOUT": 1800,
}
LOG_LINE = re.compile(r"\d{4}-\d\d-\d\d \d\d:\d\d:\d\d \[")
ROWS = [("qcwy", city, job) for city in ("北京", "上海", "广州") for job in ("python", "java", "前端")]


def test_a_worker_that_loses_the_database_before_its_release_leaves_its_keywords_to_be_adopted(
    mariadb_url, shared, tmp_path
):
    prepare_db(mariadb_url, ROWS)
    relay, via_relay = relay_to_database(mariadb_url)
    first_log, second_log = tmp_path / "first.log", tmp_path / "second.log"
    try:
        with SandboxProcess(seed=14, postings=(200, 200)) as sandbox:
            first = start_crawl(
                "qcwy",
                via_relay,
                sandbox.url,
                first_log,
                redis=shared,
                FARM_CRAWLER_ID="first",
                FARM_OUTAGE_GRACE=2,
                CONCURRENT_REQUESTS=8,
                **SETTINGS,
            )
            try:
                wait_until(lambda: served(sandbox) >= 20 or first.poll() is not None, 60, "20 pages")
                assert first.poll() is None, "the crawl ended before its database went away"
                relay.stop()  # the database goes away: connections drop, new ones are refused
                stop(first, 60)
            finally:
                first.kill()
                first.wait(30)
            relay.restart()  # the database answers again

            held = [row for row in keywords(mariadb_url) if row["crawl_status"] == "crawling"]
            assert held and {row["crawler_id"] for row in held} == {"first"}
            output = first_log.read_text()
            lost = [line for line in output.splitlines() if "could not be released" in line]
            assert len(lost) == 1 and "ERROR: farm: " in lost[0], output[-3000:]
            assert f"{len(held)} keyword(s)" in lost[0] and "FARM_WORKER_TIMEOUT (2s)" in lost[0], lost[0]
            assert crawl_stat(output, "farm/lease/release_lost") == len(held)
            assert "releasing" not in output.split("could not be released")[1]
            # "Spider closed" is the crawl's last log line: nothing goes on after it
            after = output.split("] INFO: Spider closed (", 1)[1].splitlines()[1:]
            assert not [line for line in after if LOG_LINE.match(line)], after

            second = start_crawl(
                "qcwy", mariadb_url, sandbox.url, second_log, redis=shared, FARM_CRAWLER_ID="second", **SETTINGS
            )
            try:
                assert stop(second, 90) == 0, second_log.read_text()[-3000:]
            finally:
                second.kill()
                second.wait(30)
            adopted = second_log.read_text()
            assert "held by first in the keyword table, adopted" in adopted, adopted[-3000:]

            pages, ids, per_keyword = expected_crawl(sandbox, "qcwy", ROWS, MAX_PAGES)
            progress = {(k["city"], k["job"]): (k["crawl_status"], k["jobs_found"]) for k in keywords(mariadb_url)}
            assert progress == {key: ("completed", jobs) for key, (_, jobs) in per_keyword.items()}
            stored = stored_postings(mariadb_url, "qcwy")
            assert len(stored) == len(set(stored)) and set(stored) == ids
            assert set(fetched_pages(sandbox, "qcwy")) == pages
    finally:
        relay.stop()
