"""Pause and resume with JOBDIR (farm.extensions.checkpoint): real crawls, killed, paused, resumed.

Every test keeps FARM_LEASE_TIMEOUT at 1800 s and never reaps: a resumed crawl must take
back its keywords at once, from its checkpoint, or the keywords stay ``crawling`` and the
test fails.
"""

import os
import random
import signal
import sqlite3
from datetime import date, timedelta
from pathlib import Path

import pytest
from sqlalchemy import update

from farm.crawl.backends.checkpoint import CRASH_AT_SAVE_ENV
from farm.sandbox.testing import SandboxProcess
from farm.state.clock import utcnow
from farm.state.db import make_engine
from farm.state.models import Keyword
from tests.e2e.harness import (
    crawl_stat,
    expected_crawl,
    fetched_pages,
    keywords,
    kill_and_settle,
    kill_at_a_random_moment,
    prepare_db,
    run_crawl,
    running,
    served,
    start_crawl,
    state_writer_of,
    stop,
    stored_postings,
    wait_until,
)

pytestmark = pytest.mark.e2e

CHECKPOINT = "farm-checkpoint.sqlite"
PAGES_IN_FLIGHT = 8
MAX_PAGES = 10
SETTINGS = {
    "FARM_QCWY_MAX_PAGES": MAX_PAGES,
    "CONCURRENT_REQUESTS": 4,
    "FARM_LEASES_IN_FLIGHT": 3,
    "FARM_PAGES_IN_FLIGHT": PAGES_IN_FLIGHT,
    "FARM_LEASE_TIMEOUT": 1800,  # never waited for: taken back from the checkpoint at once
    "FARM_CHECKPOINT_INTERVAL": 0.2,
}
# the random moments one crawl is killed at: `make test` 5, `make soak` (FARM_SOAK=1) 20
KILLS = 20 if os.environ.get("FARM_SOAK") else 5
CITIES, JOBS = ("北京", "上海", "广州", "深圳"), ("python", "java", "前端", "测试", "运维")


def qcwy_rows(cities=CITIES[:2], jobs=JOBS[:3]):
    return [("qcwy", city, job) for city in cities for job in jobs]


def recorded_pages(db_url):
    """Pages the keyword table records done, all keywords together."""
    rows = keywords(db_url)
    return sum(
        row["last_completed_page"] + len([p for p in (row["pages_ahead"] or "").split(",") if p]) for row in rows
    )


def assert_crawled_once(db_url, sandbox, rows):
    """The final tables equal an uninterrupted crawl's: every keyword completed at its last page
    with its postings counted once, every posting stored once, every page fetched."""
    pages, ids, per_keyword = expected_crawl(sandbox, "qcwy", rows, MAX_PAGES)
    states = {
        (k["city"], k["job"]): (k["crawl_status"], k["last_completed_page"], k["total_pages"], k["jobs_found"])
        for k in keywords(db_url)
        if k["source"] == "qcwy"
    }
    assert states == {key: ("completed", last, last, jobs) for key, (last, jobs) in per_keyword.items()}
    stored = stored_postings(db_url, "qcwy")
    assert len(stored) == len(set(stored)) and set(stored) == ids
    fetches = fetched_pages(sandbox, "qcwy")
    assert set(fetches) == pages
    return sum(fetches.values()) - len(pages)  # pages fetched again


def checkpoint_leases(jobdir):
    conn = sqlite3.connect(jobdir / CHECKPOINT)
    try:
        return set(conn.execute("SELECT keyword_id, token FROM lease"))
    finally:
        conn.close()


def checkpoint_contents(jobdir):
    conn = sqlite3.connect(jobdir / CHECKPOINT)
    try:
        return list(conn.iterdump())
    finally:
        conn.close()


def test_kill_9_at_random_moments_resumes_at_once_and_loses_nothing(sqlite_url, tmp_path):
    """Killed at KILLS random moments (5; 20 in `make soak`), the crawl takes its keywords back from its
    checkpoint at once: without it they would stay crawling until FARM_LEASE_TIMEOUT."""
    rows = qcwy_rows(CITIES, JOBS[:4])
    prepare_db(sqlite_url, rows)
    jobdir = tmp_path / "job"
    chance = random.Random(2610)
    log = tmp_path / "crawls.log"
    kills, unrecorded = 0, []
    with SandboxProcess(seed=3, postings=(200, 200)) as sandbox:
        for _ in range(KILLS):
            start = lambda: start_crawl("qcwy", sqlite_url, sandbox.url, log, JOBDIR=jobdir, **SETTINGS)  # noqa: E731
            kills += kill_at_a_random_moment(sandbox, start, chance, 0, 10)  # 0: killed while it starts
            # pages fetched but not recorded: the most this kill may cost in pages fetched again
            unrecorded.append(len(fetched_pages(sandbox, "qcwy")) - recorded_pages(sqlite_url))
        final = run_crawl("qcwy", sqlite_url, sandbox.url, JOBDIR=jobdir, **SETTINGS)
        assert final.returncode == 0, final.output[-3000:]
        assert "Spider closed (finished)" in final.output and "Traceback" not in final.output
        refetched = assert_crawled_once(sqlite_url, sandbox, rows)

    assert kills >= KILLS * 9 // 10, f"only {kills} of {KILLS} crawls were still running when killed"
    assert refetched <= sum(unrecorded), (refetched, unrecorded)
    assert refetched <= kills * PAGES_IN_FLIGHT
    assert not (jobdir / CHECKPOINT).exists()  # the crawl finished: its checkpoint is gone
    text = log.read_text()
    assert "Traceback" not in text and "took back" in text


@pytest.mark.parametrize("pause", [signal.SIGINT, signal.SIGTERM], ids=["SIGINT", "SIGTERM"])
def test_a_first_signal_pauses_and_the_same_command_resumes(mariadb_url, tmp_path, pause):
    rows = qcwy_rows()
    prepare_db(mariadb_url, rows)
    jobdir = tmp_path / "job"
    with SandboxProcess(seed=4, postings=(200, 200)) as sandbox:
        crawler = start_crawl(
            "qcwy", mariadb_url, sandbox.url, tmp_path / "first.log", JOBDIR=jobdir, DOWNLOAD_DELAY=0.05, **SETTINGS
        )
        try:
            wait_until(lambda: served(sandbox) >= 12 or crawler.poll() is not None, 60, "12 pages")
            assert crawler.poll() is None, "the crawl ended before it could be paused"
            crawler.send_signal(pause)
            assert crawler.wait(60) == 0
        finally:
            crawler.kill()
            crawler.wait(30)
        log = (tmp_path / "first.log").read_text()
        assert "Traceback" not in log
        assert f"farm: paused; to resume, run the same command with the same JOBDIR={jobdir}" in log
        held = {(row["id"], row["lease_token"]) for row in keywords(mariadb_url) if row["crawl_status"] == "partial"}
        assert held and "crawling" not in {row["crawl_status"] for row in keywords(mariadb_url)}
        assert checkpoint_leases(jobdir) == held  # the keywords released at the pause, as the table has them
        assert not (jobdir / "requests.queue").exists() and not (jobdir / "requests.seen").exists()
        at_pause = fetched_pages(sandbox, "qcwy")

        resumed = run_crawl("qcwy", mariadb_url, sandbox.url, JOBDIR=jobdir, **SETTINGS)
        assert resumed.returncode == 0, resumed.output[-3000:]
        assert crawl_stat(resumed.output, "farm/checkpoint/taken_back") == len(held)
        assert f"took back {len(held)} keyword(s) at once" in resumed.output
        assert "Spider closed (finished)" in resumed.output
        refetched = assert_crawled_once(mariadb_url, sandbox, rows)
        counts = fetched_pages(sandbox, "qcwy")
    # what was in flight at the pause finished before the crawl closed: nothing is fetched again
    assert refetched == 0, {page: n for page, n in counts.items() if n > 1}
    assert len(at_pause) < len(counts)
    assert not (jobdir / CHECKPOINT).exists()


def test_a_second_sigint_stops_at_once_and_the_checkpoint_still_resumes(sqlite_url, tmp_path):
    rows = qcwy_rows()
    prepare_db(sqlite_url, rows)
    jobdir = tmp_path / "job"
    log = tmp_path / "first.log"
    # half the pages answer after 3 s: the graceful close is still waiting for one at the second signal
    with SandboxProcess(
        seed=6, postings=(200, 200), fault_rate=0.5, fault_kinds=["slow"], fault_seed=1, slow_ms=3000
    ) as sandbox:
        crawler = start_crawl("qcwy", sqlite_url, sandbox.url, log, JOBDIR=jobdir, **SETTINGS)
        try:
            wait_until(lambda: served(sandbox) >= 10 or crawler.poll() is not None, 60, "10 pages")
            assert crawler.poll() is None
            crawler.send_signal(signal.SIGINT)
            wait_until(lambda: "Closing spider (shutdown)" in log.read_text(), 30, "the graceful close to begin")
            crawler.send_signal(signal.SIGINT)  # Scrapy: "forcing unclean shutdown"
            crawler.wait(60)
            writer = state_writer_of(crawler.pid)
        finally:
            crawler.kill()
            crawler.wait(30)
        if writer is not None:
            wait_until(lambda: not running(writer), 30, "the state writer to exit")
        assert "forcing unclean shutdown" in log.read_text()
        with sqlite3.connect(jobdir / CHECKPOINT) as conn:
            assert conn.execute("PRAGMA integrity_check").fetchone() == ("ok",)

        sandbox.set_faults()  # the slow pages did their part: the resumed crawl need not wait for them
        resumed = run_crawl("qcwy", sqlite_url, sandbox.url, JOBDIR=jobdir, **SETTINGS)
        assert resumed.returncode == 0, resumed.output[-3000:]
        assert crawl_stat(resumed.output, "farm/checkpoint/taken_back") >= 1
        refetched = assert_crawled_once(sqlite_url, sandbox, rows)
    assert refetched <= PAGES_IN_FLIGHT


def test_a_kill_in_the_middle_of_a_save_leaves_the_previous_checkpoint(sqlite_url, tmp_path, monkeypatch):
    rows = qcwy_rows()
    prepare_db(sqlite_url, rows)
    jobdir = tmp_path / "job"
    log = tmp_path / "first.log"
    with SandboxProcess(seed=7, postings=(200, 200)) as sandbox:
        # the 4th save kills the crawl after writing its rows, before its COMMIT
        with monkeypatch.context() as crash:
            crash.setenv(CRASH_AT_SAVE_ENV, "4")
            crawler = start_crawl("qcwy", sqlite_url, sandbox.url, log, JOBDIR=jobdir, DOWNLOAD_DELAY=0.05, **SETTINGS)
        try:
            assert crawler.wait(60) == -signal.SIGKILL
            writer = state_writer_of(crawler.pid)
        finally:
            crawler.kill()
            crawler.wait(30)
        if writer is not None:
            wait_until(lambda: not running(writer), 30, "the state writer to exit")
        assert "killing the crawl inside a save" in log.read_text()
        assert {row["crawl_status"] for row in keywords(sqlite_url)} & {"crawling"}
        assert checkpoint_leases(jobdir)  # what the third save committed

        resumed = run_crawl("qcwy", sqlite_url, sandbox.url, JOBDIR=jobdir, **SETTINGS)
        assert resumed.returncode == 0, resumed.output[-3000:]
        assert crawl_stat(resumed.output, "farm/checkpoint/taken_back") >= 1
        refetched = assert_crawled_once(sqlite_url, sandbox, rows)
    assert refetched <= PAGES_IN_FLIGHT


def _killed_crawl(db_url, sandbox, jobdir, log, pages=12):
    crawler = start_crawl("qcwy", db_url, sandbox.url, log, JOBDIR=jobdir, DOWNLOAD_DELAY=0.05, **SETTINGS)
    try:
        wait_until(lambda: served(sandbox) >= pages or crawler.poll() is not None, 60, f"{pages} pages")
        assert crawler.poll() is None
        wait_until(lambda: (jobdir / CHECKPOINT).exists() and checkpoint_leases(jobdir), 30, "a saved lease")
        kill_and_settle(crawler)
    finally:
        crawler.kill()
        crawler.wait(30)


def _open_files(pid):
    """The paths of the files process ``pid`` has open."""
    found = set()
    for fd in (Path("/proc") / str(pid) / "fd").iterdir():
        try:
            found.add(os.readlink(fd))
        except OSError:
            pass
    return found


def test_a_second_crawl_on_a_live_jobdir_is_refused_naming_the_holder_and_the_first_finishes_alone(
    sqlite_url, tmp_path
):
    rows = qcwy_rows()
    prepare_db(sqlite_url, rows)
    jobdir = tmp_path / "job"
    log = tmp_path / "first.log"
    # every page answers after 2 s until the second crawl is refused: the first is still crawling then
    with SandboxProcess(
        seed=12, postings=(200, 200), fault_rate=1, fault_kinds=["slow"], fault_seed=1, slow_ms=2000
    ) as sandbox:
        first = start_crawl("qcwy", sqlite_url, sandbox.url, log, JOBDIR=jobdir, FARM_CRAWLER_ID="first", **SETTINGS)
        try:
            wait_until(lambda: served(sandbox) >= 4 or first.poll() is not None, 60, "4 pages")
            wait_until(lambda: (jobdir / CHECKPOINT).exists() and checkpoint_leases(jobdir), 30, "a saved lease")
            writer = state_writer_of(first.pid)
            assert writer is not None and str(jobdir / "farm.lock") not in _open_files(writer)

            second = run_crawl(
                "qcwy", sqlite_url, sandbox.url, timeout=60, JOBDIR=jobdir, FARM_CRAWLER_ID="second", **SETTINGS
            )
            assert second.returncode != 0, second.output[-3000:]
            # the one line logged (the start-up error path: the crawl refuses before anything opens)
            refusals = [line for line in second.output.splitlines() if "ERROR: farm: JOBDIR=" in line]
            assert len(refusals) == 1, second.output[-3000:]
            assert f"ERROR: farm: JOBDIR={jobdir} is in use by pid {first.pid} on host " in refusals[0]
            assert "(crawler id first, since " in refusals[0] and "one crawl per JOBDIR" in refusals[0]
            assert "Spider opened" not in second.output and "Traceback" not in second.output
            assert first.poll() is None, "the first crawl ended before the second was refused"
            assert (jobdir / CHECKPOINT).exists()  # the second removed nothing
            assert {row["crawler_id"] for row in keywords(sqlite_url) if row["crawler_id"]} == {"first"}

            sandbox.set_faults()
            assert stop(first, 120) == 0, log.read_text()[-3000:]
        finally:
            first.kill()
            first.wait(30)
        output = log.read_text()
        assert "Spider closed (finished)" in output and "Traceback" not in output
        assert crawl_stat(output, "farm/lease/claimed") == len(rows)
        assert assert_crawled_once(sqlite_url, sandbox, rows) == 0  # no page fetched twice
    assert {row["crawler_id"] for row in keywords(sqlite_url)} == {"first"}
    assert not (jobdir / CHECKPOINT).exists()  # removed once, by the crawl that finished


def test_a_killed_holder_frees_its_jobdir_at_once_and_the_next_crawl_resumes(sqlite_url, tmp_path):
    rows = qcwy_rows()
    prepare_db(sqlite_url, rows)
    jobdir = tmp_path / "job"
    with SandboxProcess(seed=13, postings=(200, 200)) as sandbox:
        first = start_crawl(
            "qcwy",
            sqlite_url,
            sandbox.url,
            tmp_path / "first.log",
            JOBDIR=jobdir,
            DOWNLOAD_DELAY=0.05,
            FARM_CRAWLER_ID="first",
            **SETTINGS,
        )
        try:
            wait_until(lambda: served(sandbox) >= 6 or first.poll() is not None, 60, "6 pages")
            wait_until(lambda: (jobdir / CHECKPOINT).exists() and checkpoint_leases(jobdir), 30, "a saved lease")
            writer = state_writer_of(first.pid)
            first.kill()  # kill -9: the kernel drops its lock; its state writer may still be finishing
            first.wait(30)
        finally:
            first.kill()
            first.wait(30)
        resumed = run_crawl("qcwy", sqlite_url, sandbox.url, JOBDIR=jobdir, **SETTINGS)
        assert resumed.returncode == 0, resumed.output[-3000:]
        assert "is in use by" not in resumed.output
        assert crawl_stat(resumed.output, "farm/checkpoint/taken_back") >= 1
        assert_crawled_once(sqlite_url, sandbox, rows)
        if writer is not None:
            wait_until(lambda: not running(writer), 30, "the killed crawl's state writer to exit")
    assert not (jobdir / CHECKPOINT).exists()


def test_a_truncated_checkpoint_is_moved_aside_and_the_crawl_starts_from_the_keyword_table(sqlite_url, tmp_path):
    rows = qcwy_rows()
    prepare_db(sqlite_url, rows)
    jobdir = tmp_path / "job"
    with SandboxProcess(seed=8, postings=(200, 200)) as sandbox:
        _killed_crawl(sqlite_url, sandbox, jobdir, tmp_path / "first.log")
        with sqlite3.connect(jobdir / CHECKPOINT) as conn:  # fold the WAL in, then cut the file in half
            conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        path = jobdir / CHECKPOINT
        os.truncate(path, path.stat().st_size // 2)
        held = {row["id"]: row for row in keywords(sqlite_url) if row["crawl_status"] == "crawling"}
        assert held

        resumed = run_crawl("qcwy", sqlite_url, sandbox.url, JOBDIR=jobdir, **SETTINGS)
        assert resumed.returncode == 0, resumed.output[-3000:]
        assert "Traceback" not in resumed.output
        errors = [line for line in resumed.output.splitlines() if "cannot be used" in line]
        assert len(errors) == 1 and f"JOBDIR={jobdir}" in errors[0] and "moved aside" in errors[0], errors
        assert (jobdir / (CHECKPOINT + ".bad")).exists()
        # the bad checkpoint touched nothing: the killed crawl's keywords wait for their lease timeout
        after = {row["id"]: row for row in keywords(sqlite_url)}
        assert all(after[kid] == row for kid, row in held.items())
        assert crawl_stat(resumed.output, "farm/checkpoint/taken_back") == 0


def test_another_spiders_checkpoint_is_left_alone_and_the_crawl_does_not_run(sqlite_url, tmp_path):
    rows = qcwy_rows() + [("zhilian", "北京", "python")]
    prepare_db(sqlite_url, rows)
    jobdir = tmp_path / "job"
    with SandboxProcess(seed=9, postings=(200, 200)) as sandbox:
        _killed_crawl(sqlite_url, sandbox, jobdir, tmp_path / "first.log")
        before_file, before_table = checkpoint_contents(jobdir), keywords(sqlite_url)

        other = run_crawl("zhilian", sqlite_url, sandbox.url, JOBDIR=jobdir, **SETTINGS)
        assert "Traceback" not in other.output
        errors = [line for line in other.output.splitlines() if "holds the checkpoint of spider" in line]
        assert len(errors) == 1 and f"JOBDIR={jobdir}" in errors[0] and "'qcwy', not 'zhilian'" in errors[0]
        assert "Spider closed (farm_checkpoint_refused)" in other.output
        assert served(sandbox, "zhilian") == 0
        assert keywords(sqlite_url) == before_table and checkpoint_contents(jobdir) == before_file

        resumed = run_crawl("qcwy", sqlite_url, sandbox.url, JOBDIR=jobdir, **SETTINGS)  # its own spider resumes
        assert resumed.returncode == 0, resumed.output[-3000:]
        assert crawl_stat(resumed.output, "farm/checkpoint/taken_back") >= 1
        assert_crawled_once(sqlite_url, sandbox, qcwy_rows())


def test_yesterdays_checkpoint_resumes_nothing(sqlite_url, tmp_path):
    rows = qcwy_rows()
    prepare_db(sqlite_url, rows)
    jobdir = tmp_path / "job"
    with SandboxProcess(seed=10, postings=(200, 200)) as sandbox:
        _killed_crawl(sqlite_url, sandbox, jobdir, tmp_path / "first.log")
        # as if the kill was yesterday (in FARM_TIMEZONE), a day ago: checkpoint and keyword table both
        with sqlite3.connect(jobdir / CHECKPOINT) as conn:
            (day,) = conn.execute("SELECT value FROM meta WHERE name = 'day'").fetchone()
            old = (date.fromisoformat(day) - timedelta(days=1)).isoformat()
            conn.execute("UPDATE meta SET value = ? WHERE name = 'day'", (old,))
        engine = make_engine(sqlite_url)
        with engine.begin() as conn:
            conn.execute(
                update(Keyword)
                .where(Keyword.last_requested_date.is_not(None))
                .values(last_requested_date=date.fromisoformat(old), heartbeat_at=utcnow() - timedelta(days=1))
            )
        engine.dispose()
        assert checkpoint_leases(jobdir)

        resumed = run_crawl("qcwy", sqlite_url, sandbox.url, JOBDIR=jobdir, **SETTINGS)
        assert resumed.returncode == 0, resumed.output[-3000:]
        notes = [line for line in resumed.output.splitlines() if "not today" in line]
        assert len(notes) == 1 and f"the checkpoint is of {old}" in notes[0], notes
        assert crawl_stat(resumed.output, "farm/checkpoint/taken_back") == 0
        # today's rules: every keyword is fresh today, crawled from page 1
        assert crawl_stat(resumed.output, "farm/lease/claimed/fresh") == len(rows)
        assert {row["last_requested_date"].isoformat() for row in keywords(sqlite_url)} == {day}
        assert {row["crawl_status"] for row in keywords(sqlite_url)} == {"completed"}


@pytest.mark.redis
def test_with_redis_a_killed_worker_restarted_on_its_jobdir_takes_its_keywords_back_at_once(
    mariadb_url, shared, tmp_path
):
    """The queue lives in Redis; the checkpoint keeps the worker's id and leases. No survivor, and
    FARM_WORKER_TIMEOUT and FARM_LEASE_TIMEOUT far away: only the checkpoint can bring them back."""
    rows = qcwy_rows(CITIES[:3])
    prepare_db(mariadb_url, rows)
    jobdir = tmp_path / "job"
    settings = {**SETTINGS, "FARM_WORKER_TIMEOUT": 600}
    chance = random.Random(77)
    kills = 0
    with SandboxProcess(seed=11, postings=(200, 200)) as sandbox:
        for _ in range(4):
            start = lambda: start_crawl(  # noqa: E731
                "qcwy",
                mariadb_url,
                sandbox.url,
                tmp_path / "workers.log",
                redis=shared,
                JOBDIR=jobdir,
                **settings,
            )
            kills += kill_at_a_random_moment(sandbox, start, chance, 3, 12)
        final = run_crawl("qcwy", mariadb_url, sandbox.url, redis=shared, JOBDIR=jobdir, timeout=120, **settings)
        assert final.returncode == 0, final.output[-3000:]
        assert "Spider closed (finished)" in final.output and "Traceback" not in final.output
        refetched = assert_crawled_once(mariadb_url, sandbox, rows)
    assert kills >= 3
    assert refetched <= kills * PAGES_IN_FLIGHT
    assert "took back" in (tmp_path / "workers.log").read_text() + final.output
