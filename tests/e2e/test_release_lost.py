"""A Redis-mode worker whose database goes away before it closes: what it cannot release is taken back.

The worker's keywords stay ``crawling`` under it in the keyword table when the release at close
cannot be written. It stays listed in Redis as a worker taking keywords on, so that a worker that
finds it silent for FARM_WORKER_TIMEOUT adopts them once the database answers again, without
waiting for FARM_LEASE_TIMEOUT.
"""

import re
import time

import pytest

from farm.crawl.registry import GIVE_BACK_TIMEOUTS
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
            # a claim whose answer went with the dropped connection may have committed: the keyword table then
            # holds a keyword this crawl never knew it had, which it cannot count, and which is adopted as the others
            counted = re.search(r"farm: (\d+) keyword\(s\) could not be released", lost[0])
            assert counted is not None and 1 <= int(counted.group(1)) <= len(held), (lost[0], held)
            assert "FARM_WORKER_TIMEOUT (2s)" in lost[0], lost[0]
            assert crawl_stat(output, "farm/lease/release_lost") == int(counted.group(1))
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


def test_a_database_silent_at_close_costs_one_deadline_and_fails_the_run(mariadb_url, tmp_path):
    # each keyword's give-back waited for the database on its own, one after another (FARM_OUTAGE_GRACE
    # each), and the process exited 0: cron, scrapyd and systemd saw a run that went well
    rows = [("qcwy", city, f"job{i}") for i, city in enumerate(["北京", "上海", "广州", "深圳"] * 3)]
    prepare_db(mariadb_url, rows)
    relay, via_relay = relay_to_database(mariadb_url)
    log = tmp_path / "crawl.log"
    db_timeout = 1
    try:
        with SandboxProcess(seed=15, postings=(200, 200)) as sandbox:
            crawl = start_crawl(
                "qcwy",
                via_relay,
                sandbox.url,
                log,
                FARM_LEASES_IN_FLIGHT=8,
                FARM_DB_TIMEOUT=db_timeout,
                FARM_OUTAGE_GRACE=2,
                DOWNLOAD_DELAY=0.05,
                CONCURRENT_REQUESTS=2,
            )
            try:
                wait_until(lambda: served(sandbox) >= 10 or crawl.poll() is not None, 60, "10 pages")
                assert crawl.poll() is None, "the crawl ended before its database fell silent"
                relay.stall()  # the server keeps every connection and answers nothing
                wait_until(
                    lambda: "releasing 8 keyword(s)" in log.read_text() or crawl.poll() is not None, 60, "the close"
                )
                giving_back = time.monotonic()
                status = stop(crawl, 60)
                elapsed = time.monotonic() - giving_back
            finally:
                crawl.kill()
                crawl.wait(30)
    finally:
        relay.stop()
    output = log.read_text()
    assert status == 1, output[-3000:]
    deadline = GIVE_BACK_TIMEOUTS * db_timeout
    # one deadline for the eight keywords, and the close after it (each alone took about 4 s, 32 s in all): on
    # a quiet machine 4.7 s, on a busy one up to 10 s
    assert elapsed < 3 * deadline + 3, (elapsed, output[-3000:])
    assert f"8 keyword(s) could not be released at close (the database: no answer within {deadline}s)" in output
    assert crawl_stat(output, "farm/lease/release_lost") == 8
    assert sum(row["crawl_status"] == "crawling" for row in keywords(mariadb_url)) == 8  # left to their lease
