"""`farm stats`: pages, the recent rate and the ETA of a table in a known state; `--watch`."""

import json
import os
import pty
import select
import signal
import subprocess
import sys
import time
from datetime import UTC, datetime, timedelta

import pytest

import farm.cli.context
from farm.runs.record import RunNumbers, close_run, open_run
from farm.state.db import make_engine
from farm.state.store import KeywordStore
from tests.integration.test_cli import DEMO_KEYWORDS, key, parse_table, run, set_rows, upgraded

DESIGN_FIELDS = ["date", "source", "total", "used", "unused", "crawl_status", "jobs_found"]
NEW_FIELDS = [
    "pages",
    "done",
    "remaining",
    "recent",
    "eta",
    "eta_seconds",
    "crawlers_alive",
    "salary",
    "caps",
    "door",
    "identities",
]


def today(url):
    engine = make_engine(url)
    try:
        return KeywordStore(engine, timezone=farm.cli.context.project_settings().get("FARM_TIMEZONE")).today()
    finally:
        engine.dispose()


def live_run(url, source, started, ended=None, crawler="elsewhere:1"):
    """A run of ``source`` in the run table: ended, or alive through a fresh heartbeat of its crawler."""
    engine = make_engine(url)
    try:
        run_id = open_run(engine, source, crawler, crawler.split(":")[0], started)
        if ended is not None:
            close_run(engine, run_id, "finished", RunNumbers(), ended)
    finally:
        engine.dispose()


def seed(url):
    """boss today (12 keywords): 4 completed (3 of them 2 minutes ago), 2 failed, 1 crawling, 1 partial,
    crawled by a run that started 40 minutes ago and is alive (its crawling keyword's heartbeat is fresh).

    pages 3+2+1+3 (completed) + 0+1 (failed) + 2 (crawling) + 1 (partial) = 13
    done: the 4 completed and the failed one with no retry left (FARM_MAX_RETRIES=3) = 5; left 12 - 5 = 7
    ended in the last 10 minutes: 3 completed (2 min), 2 failed (1 and 5 min) = 5 keywords, 3+2+1+0+1 = 7 pages
    """
    upgraded(url)
    run(url, "keywords", "import", str(DEMO_KEYWORDS))
    day = today(url)
    now = datetime.now(UTC)
    for (city, job), status, pages, ago, retries in [
        (("北京", "python"), "completed", 3, 2, 0),
        (("北京", "java"), "completed", 2, 2, 0),
        (("北京", "前端"), "completed", 1, 2, 0),
        (("上海", "python"), "completed", 3, 30, 0),
        (("上海", "java"), "failed", 0, 1, 3),
        (("上海", "前端"), "failed", 1, 5, 1),
        (("深圳", "python"), "crawling", 2, 0, 0),  # held by the live run
        (("深圳", "java"), "partial", 1, 20, 0),
    ]:
        set_rows(
            url,
            key("boss", city, job),
            crawl_status=status,
            last_requested_date=day,
            last_completed_page=pages,
            jobs_found=pages * 10,
            retry_count=retries,
            updated_at=now - timedelta(minutes=ago),
        )
    set_rows(url, key("boss", "深圳", "python"), crawler_id="elsewhere:1", heartbeat_at=now)
    live_run(url, "boss", now - timedelta(minutes=40))
    # yesterday's work counts neither in pages nor in the rate
    set_rows(
        url,
        key("qcwy", "北京", "python"),
        crawl_status="completed",
        last_requested_date=day - timedelta(days=1),
        last_completed_page=9,
        updated_at=now - timedelta(minutes=1),
    )
    # all the other rows were written at the import: not "ended recently", they are idle
    return day


def test_stats_json_keeps_its_shape_and_adds_pages_rate_and_eta(db_url):
    day = seed(db_url)
    before = datetime.now(UTC)
    result = run(db_url, "stats", "--json")
    after = datetime.now(UTC)
    assert result.exit_code == 0, result.output
    rows = json.loads(result.output)
    assert [list(row) for row in rows] == [DESIGN_FIELDS + NEW_FIELDS] * 3
    boss, qcwy, zhilian = rows
    assert {name: boss[name] for name in DESIGN_FIELDS} == {
        "date": day.isoformat(),
        "source": "boss",
        "total": 12,
        "used": 8,
        "unused": 4,
        "crawl_status": {"crawling": 1, "completed": 4, "failed": 2, "partial": 1},
        "jobs_found": 130,
    }
    assert boss["pages"] == 13
    assert (boss["done"], boss["remaining"]) == (5, 7)
    assert boss["recent"]["spans"][0][1] <= after.isoformat()
    assert {**boss["recent"], "spans": None} == {
        "window": 10.0,
        "minutes": 10.0,
        "spans": None,
        "keywords": 5,
        "pages": 7,
        "keywords_per_minute": 0.5,
        "pages_per_minute": 0.7,
    }
    # 7 keywords left at 0.5 a minute: 14 minutes
    assert boss["eta_seconds"] == 840
    eta = datetime.fromisoformat(boss["eta"])
    assert before + timedelta(seconds=839) <= eta <= after + timedelta(seconds=841)
    assert eta.utcoffset() == timedelta(hours=8)  # in FARM_TIMEZONE (Asia/Shanghai)
    # nothing of qcwy today: no pages, no rate, no ETA
    assert (qcwy["pages"], qcwy["done"], qcwy["remaining"], qcwy["recent"]["keywords"]) == (0, 0, 12, 0)
    assert (qcwy["eta"], qcwy["eta_seconds"]) == (None, None)
    assert zhilian["remaining"] == 12


def test_stats_window_counts_only_the_keywords_ended_within_it(sqlite_url):
    seed(sqlite_url)
    rows = json.loads(run(sqlite_url, "stats", "--json", "--source", "boss", "--window", "3").output)
    # 3 completed 2 minutes ago and the failed one 1 minute ago; not the one failed 5 minutes ago
    assert {**rows[0]["recent"], "spans": None} == {
        "window": 3.0,
        "minutes": 3.0,
        "spans": None,
        "keywords": 4,
        "pages": 6,
        "keywords_per_minute": 1.333,
        "pages_per_minute": 2.0,
    }
    assert rows[0]["eta_seconds"] == round(7 / (4 / 3) * 60)
    everything = json.loads(run(sqlite_url, "stats", "--json", "--source", "boss", "--window", "60").output)
    assert everything[0]["recent"]["keywords"] == 6  # the one completed 30 minutes ago too


def test_stats_table_shows_pages_and_the_rate_table(sqlite_url):
    seed(sqlite_url)
    result = run(sqlite_url, "stats")
    assert result.exit_code == 0
    counts = {row["source"]: row for row in parse_table(result.output)}
    assert counts["boss"]["pages"] == "13" and counts["all"]["pages"] == "13"
    assert counts["boss"]["jobs found"] == "130"
    rate_part = result.output[result.output.index("the last 10 minutes") :]
    assert rate_part.startswith(
        "the last 10 minutes: keywords ended (completed or failed) and their pages, per minute crawled\n"
    )
    rates = {row["source"]: row for row in parse_table(rate_part)}
    assert list(rates) == ["boss", "qcwy", "zhilian", "all"]
    boss = rates["boss"]
    assert (boss["done"], boss["left"], boss["keywords/min"], boss["pages/min"]) == ("5", "7", "0.5", "0.7")
    assert boss["ETA"].endswith("(in 0h14m)")
    assert boss["crawled"] == "10.0 min"
    assert rates["qcwy"]["ETA"] == "no crawler" and rates["qcwy"]["crawled"] == "-"
    # all three sites: 31 left at 0.5 a minute
    assert rates["all"]["left"] == "31" and rates["all"]["ETA"].endswith(" (in 1h02m)")


def test_a_crawl_of_seconds_is_a_rate_over_its_seconds_and_no_crawler_alive_gives_no_eta(sqlite_url):
    day = seed(sqlite_url)
    now = datetime.now(UTC)
    # qcwy: a crawl of 6 seconds, ended a minute ago, that completed 3 keywords of 30 pages
    for city, job in [("北京", "python"), ("北京", "java"), ("北京", "前端")]:
        set_rows(
            sqlite_url,
            key("qcwy", city, job),
            crawl_status="completed",
            last_requested_date=day,
            last_completed_page=10,
            updated_at=now - timedelta(seconds=62),
        )
    live_run(sqlite_url, "qcwy", now - timedelta(seconds=66), ended=now - timedelta(seconds=60))
    rows = {row["source"]: row for row in json.loads(run(sqlite_url, "stats", "--json").output)}
    qcwy = rows["qcwy"]
    assert qcwy["recent"]["minutes"] == 0.1 and qcwy["recent"]["pages_per_minute"] == 300.0
    assert qcwy["recent"]["keywords_per_minute"] == 30.0
    assert (qcwy["crawlers_alive"], qcwy["eta"], qcwy["remaining"]) == (0, None, 9)  # its crawler ended
    assert rows["boss"]["crawlers_alive"] == 1 and rows["boss"]["eta_seconds"] == 840
    shown = run(sqlite_url, "stats").output
    text = shown[shown.index("the last 10 minutes") :]
    rates = {row["source"]: row for row in parse_table(text)}
    assert (rates["qcwy"]["crawled"], rates["qcwy"]["pages/min"], rates["qcwy"]["ETA"]) == (
        "6 s",
        "300.0",
        "no crawler",
    )


def test_stats_watch_with_json_is_a_usage_error(sqlite_url):
    upgraded(sqlite_url)
    result = run(sqlite_url, "stats", "--watch", "--json")
    assert result.exit_code == 2
    assert "--watch draws a table" in result.output


def read_until(fd, buffer, condition, timeout):
    """Read the pty into ``buffer`` (a bytearray) until ``condition(text)`` holds; fails after ``timeout``."""
    deadline = time.monotonic() + timeout
    while not condition(buffer.decode("utf-8", "replace")):
        left = deadline - time.monotonic()
        if left <= 0:
            raise AssertionError(f"timed out; the terminal showed:\n{buffer.decode('utf-8', 'replace')[-3000:]}")
        ready, _, _ = select.select([fd], [], [], left)
        if ready:
            try:
                chunk = os.read(fd, 65536)
            except OSError:  # the child closed the terminal
                break
            if not chunk:
                break
            buffer += chunk
    return buffer.decode("utf-8", "replace").replace("\r\n", "\n")  # the terminal's line ends


def test_stats_watch_redraws_in_place_and_exits_0_on_ctrl_c(sqlite_url, tmp_path):
    seed(sqlite_url)
    master, slave = pty.openpty()  # a terminal, as a person runs it
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "farm",
            "--db-url",
            sqlite_url,
            "stats",
            "--watch",
            "--interval",
            "0.3",
            "--source",
            "boss",
        ],
        stdin=slave,
        stdout=slave,
        stderr=slave,
        cwd=tmp_path,
        env={**os.environ, "COLUMNS": "200"},
    )
    os.close(slave)
    screen = bytearray()
    try:
        frames = lambda text: text.count("farm stats every 0.3s (Ctrl+C to stop)")  # noqa: E731
        # three headings: the second frame is whole (a frame may reach the terminal in pieces)
        text = read_until(master, screen, lambda t: frames(t) >= 3, 60)
        # each frame starts by taking the cursor home and clearing the screen
        assert text.count("\x1b[H\x1b[2J") == frames(text)
        # the second frame has the rate between two refreshes
        assert "pages/min now" in text.split("\x1b[H\x1b[2J")[2]
        # a change in the table shows in a later frame: 13 pages become 23
        set_rows(sqlite_url, key("boss", "深圳", "python"), last_completed_page=12)
        shown = frames(text)
        text = read_until(master, screen, lambda t: frames(t) > shown + 2, 60)  # one drawn after the change
        complete = text.split("\x1b[H\x1b[2J")[-2]  # the frame before the one being drawn
        assert {row["source"]: row["pages"] for row in parse_table(complete)} == {"boss": "23"}
        proc.send_signal(signal.SIGINT)
        # read on, as a terminal does (a process writing to a terminal nobody reads waits, Ctrl+C
        # or not), until the watch closes it
        read_until(master, screen, lambda text: False, 30)
        assert proc.wait(30) == 0
        text = screen.decode("utf-8", "replace")
        assert "Traceback" not in text and "Aborted" not in text
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait(30)
        os.close(master)


@pytest.mark.parametrize("interval", ["0", "-1"])
def test_stats_watch_interval_must_be_positive(sqlite_url, interval):
    upgraded(sqlite_url)
    result = run(sqlite_url, "stats", "--watch", "--interval", interval)
    assert result.exit_code == 2
