"""`farm check` on the real databases fails what cron is for: a day nothing ran, a site never crawled, its
keywords not reached, a keyword failed, a run killed before its close; a failed alert has its own status."""

import socket
import subprocess
from datetime import timedelta

from click.testing import CliRunner
from sqlalchemy import update

from farm.cli import farm
from farm.runs.record import RunNumbers, close_run, keep_day, open_run
from farm.state.clock import today, utcnow
from farm.state.db import make_engine
from farm.state.migrate import upgrade
from farm.state.models import Keyword
from farm.state.store import KeywordStore

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
    upgrade(db_url)
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
    upgrade(db_url)
    store = KeywordStore(make_engine(db_url))
    store.add_keywords(ROWS)
    now = utcnow()
    day = today(now, store.tz)
    engine = store.engine
    with engine.begin() as connection:  # qcwy's crawl reached two keywords: one completed, one failed
        reached = (Keyword.source == "qcwy") & (Keyword.city == "北京")
        connection.execute(update(Keyword).where(reached).values(last_requested_date=day, crawl_status="completed"))
        connection.execute(update(Keyword).where(reached, Keyword.job == "java").values(crawl_status="failed"))
    finished = open_run(engine, "qcwy", "other-host:1", "other-host", now - timedelta(minutes=30))
    close_run(
        engine,
        finished,
        "finished",
        RunNumbers(2, 2, 4, 0, stats={"finish_reason": "finished"}),
        now - timedelta(minutes=20),
    )
    keep_day(engine, "qcwy", day, store.tz)
    host = socket.gethostname()
    started = now - timedelta(minutes=10)
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
    upgrade(sqlite_url)
    store = KeywordStore(make_engine(sqlite_url))
    store.add_keywords(ROWS)
    store.close()
    result = check(sqlite_url, "--notify", "json://farm:s3cret@127.0.0.1:9/hook")
    assert result.exit_code == 3, result.output
    assert "the failures could not be sent to JSON (1): A Connection error occurred" in result.output
    assert "s3cret" not in result.output
