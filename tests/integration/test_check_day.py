"""`farm check` on the real databases fails what cron is for: a day nothing ran, a site never crawled, its
keywords not reached, a keyword failed, a run killed before its close; a failed alert has its own status."""

import os
import socket
import subprocess
from datetime import timedelta

from click.testing import CliRunner
from sqlalchemy import update

from farm.cli import farm
from farm.runs.record import RunNumbers, close_run, keep_day, open_run
from farm.state.clock import start_of, today, utcnow
from farm.state.db import make_engine
from farm.state.models import Keyword
from farm.state.store import KeywordStore
from tests.migrated import migrated

ROWS = [("qcwy", "北京", "python"), ("qcwy", "北京", "java"), ("qcwy", "上海", "java"), ("zhilian", "北京", "java")]


def check(url, *args):
    return CliRunner().invoke(farm, ["--db-url", url, "check", *args])


def failures(output):
    return sorted(line for line in output.splitlines() if line.startswith("FAIL"))


def _ended_pid() -> int:
    process = subprocess.Popen(["true"])
    process.wait()
    return process.pid


def test_a_day_on_which_nothing_ran_fails_each_site_by_name_and_day(db_url):
    migrated(db_url)
    store = KeywordStore(make_engine(db_url))
    store.add_keywords(ROWS)
    day = today(utcnow(), store.tz)
    store.close()
    result = check(db_url)
    assert result.exit_code == 1, result.output
    assert failures(result.output) == [
        f"FAIL site_crawled       qcwy: no crawl ran on {day}",
        f"FAIL site_crawled       zhilian: no crawl ran on {day}",
    ]


def test_keywords_not_reached_a_failed_keyword_and_a_killed_run_fail_that_day_and_the_next(db_url):
    migrated(db_url)
    store = KeywordStore(make_engine(db_url))
    store.add_keywords(ROWS)
    now = utcnow()
    day = today(now, store.tz)
    engine = store.engine
    with engine.begin() as connection:  # qcwy's crawl reached two keywords: one completed, one failed
        reached = (Keyword.source == "qcwy") & (Keyword.city == "北京")
        connection.execute(update(Keyword).where(reached).values(last_requested_date=day, crawl_status="completed"))
        connection.execute(update(Keyword).where(reached, Keyword.job == "java").values(crawl_status="failed"))
    # the runs within the last half hour, and within the day however soon after its midnight the test runs
    ago = min(timedelta(minutes=30), now - start_of(day, store.tz))
    finished = open_run(engine, "qcwy", "other-host:1", "other-host", now - ago)
    close_run(
        engine,
        finished,
        "finished",
        RunNumbers(2, 2, 4, 0, stats={"finish_reason": "finished"}),
        now - ago * 2 / 3,
    )
    keep_day(engine, "qcwy", day, store.tz)
    host = socket.gethostname()
    started = now - ago / 3
    killed = open_run(engine, "zhilian", f"{host}:{_ended_pid()}", host, started)
    store.close()

    result = check(db_url)
    assert result.exit_code == 1, result.output
    assert failures(result.output) == sorted(
        [
            f"FAIL keyword_failed     qcwy 北京/java: ended {day} failed",
            f"FAIL keywords_crawled   qcwy: 1 of 3 keywords never crawled on {day}: 上海/java",
            f"FAIL run_unfinished     zhilian run {killed}: started {day} ({started:%Y-%m-%d %H:%M}"
            f" UTC) on {host}, never ended: its crawler is gone (killed before its close)",
            f"FAIL keywords_crawled   zhilian: 1 of 1 keywords never crawled on {day}: 北京/java",
        ]
    )
    assert f"ok   site_crawled       zhilian: 1 run(s) on {day}" in result.output
    following = check(db_url, "--date", str(day + timedelta(days=1)))
    assert f"FAIL run_unfinished     zhilian run {killed}:" in following.output


def test_an_alert_that_cannot_be_sent_says_why_with_its_own_exit_status(sqlite_url):
    migrated(sqlite_url)
    store = KeywordStore(make_engine(sqlite_url))
    store.add_keywords(ROWS)
    store.close()
    result = check(sqlite_url, "--notify", "json://farm:s3cret@127.0.0.1:9/hook")
    assert result.exit_code == 3, result.output
    assert "the failures could not be sent to JSON (1): A Connection error occurred" in result.output
    assert "s3cret" not in result.output


def test_a_run_is_alive_by_its_process_here_by_its_heartbeats_elsewhere(sqlite_url):
    from farm.runs.history import kept_runs
    from farm.runs.live import alive_runs

    migrated(sqlite_url)
    store = KeywordStore(make_engine(sqlite_url))
    store.add_keywords(ROWS)
    engine, now, host = store.engine, utcnow(), socket.gethostname()
    ended = f"{host}:{_ended_pid()}"
    hour = timedelta(hours=1)
    runs = {
        "here, running": open_run(engine, "qcwy", f"{host}:{os.getpid()}", host, now - hour),
        "here, resumed": open_run(engine, "qcwy", ended, host, now - hour),  # its first process gone, beating
        "here, killed": open_run(engine, "zhilian", f"{host}:{_ended_pid()}", host, now - hour),
        "elsewhere, beating": open_run(engine, "boss", "far:1", "far", now - hour),
        "elsewhere, silent": open_run(engine, "boss", "far:2", "far", now - hour),
        "elsewhere, just begun": open_run(engine, "boss", "far:3", "far", now - timedelta(minutes=1)),
    }
    with engine.begin() as connection:
        for crawler, beat in ((ended, now - timedelta(seconds=30)), ("far:1", now - timedelta(minutes=20))):
            connection.execute(
                update(Keyword)
                .where(Keyword.id == {ended: 1, "far:1": 2}[crawler])
                .values(crawl_status="crawling", crawler_id=crawler, heartbeat_at=beat)
            )
    day = today(now, store.tz)
    alive = alive_runs(engine, kept_runs(engine, day - timedelta(days=1), day, store.tz), now, 1800, 60)
    store.close()
    assert {name for name, run_id in runs.items() if run_id in alive} == {
        "here, running",
        "here, resumed",
        "elsewhere, beating",
        "elsewhere, just begun",
    }
