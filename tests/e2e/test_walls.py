"""The sites' walls raised in the sandbox: crawls pass them in Debian's headless Chromium, as on the real sites.

Every posting is stored once and every page fetched once (the sandbox counts a page only when it is served to a
request that carries a valid session); a session that expires mid-keyword is earned again; a slider is not passed:
its keyword goes partial with the wall's name, and a site that answers nothing but sliders ends the crawl.
"""

import ast
import csv
import json
import os
import re
import subprocess
import sys
import time
from collections import Counter
from importlib.resources import files

import pytest

from farm.sandbox.testing import SandboxProcess
from farm.sandbox.walls import WallConfig
from farm.sessions.browser import find_chromium
from tests.e2e.harness import (
    CRAWL_SETTINGS,
    crawl_stat,
    expected_crawl,
    fetched_pages,
    keywords,
    prepare_db,
    run_crawl,
    start_crawl,
    stop,
    stored_postings,
)

pytestmark = [
    pytest.mark.e2e,
    pytest.mark.skipif(find_chromium() is None, reason="no Chromium on the PATH (Debian: apt-get install chromium)"),
]

DEMO_ROWS = [
    (row["source"], row["city"], row["job"])
    for row in csv.DictReader(files("farm.demo").joinpath("keywords.csv").open(encoding="utf-8"))
]
MAX_PAGES = {"boss": 3, "qcwy": 4, "zhilian": 4}
# the browser's memory (PSS of its processes) a crawl may reach with FARM_BROWSER_PAGES=2
BROWSER_MEMORY_BOUND = 700 * 2**20
CITIES = ("北京", "上海", "广州", "深圳")
JOBS = ("python", "java", "数据", "前端", "测试")


# `make test` crawls one site's demo keywords here (test_demo.py and test_probe.py pass every site's wall, and
# the next test 51job's) and 51job's hundreds of pages; `make soak` (FARM_SOAK=1) every site in each
SOAK = bool(os.environ.get("FARM_SOAK"))


@pytest.mark.parametrize("source", ["boss", "qcwy", "zhilian"] if SOAK else ["boss"])
def test_the_demo_keywords_crawl_to_completion_through_the_walls_every_posting_once(source, sqlite_url):
    rows = [row for row in DEMO_ROWS if row[0] == source]
    prepare_db(sqlite_url, rows)
    cap = {f"FARM_{source.upper()}_MAX_PAGES": MAX_PAGES[source]}
    with SandboxProcess(seed=2026, postings=(20, 120), walls=True) as sandbox:
        crawl = run_crawl(source, sqlite_url, sandbox.url, timeout=240, **cap)
        walls = sandbox.walls()
        seen = sandbox.identity()
        pages, ids, _ = expected_crawl(sandbox, source, rows, MAX_PAGES[source])
        fetched = fetched_pages(sandbox, source)
    assert crawl.returncode == 0, crawl.output[-3000:]
    # the wall pages' BotD judged farm's browser a person, every time; every request the Chrome it claims
    assert walls["bots"][source] == 0 and walls["people"][source] >= 1, walls
    assert seen["incoherent"] == 0, seen
    assert {row["crawl_status"] for row in keywords(sqlite_url)} == {"completed"}
    stored = stored_postings(sqlite_url, source)
    assert Counter(stored) == Counter(ids)  # every posting the site holds within the cap, once
    assert set(fetched) == pages and set(fetched.values()) == {1}  # every page once, each with a session
    assert walls["sessions_issued"][source] >= 1 and walls["with_session"][source] >= len(pages)
    assert crawl_stat(crawl.output, "farm/session/earned") == walls["sessions_issued"][source]
    assert "passed in the browser" in crawl.output
    assert 0 < crawl_stat(crawl.output, "farm/browser/rss_max") < BROWSER_MEMORY_BOUND


@pytest.mark.parametrize("source", ["qcwy", "zhilian"] if SOAK else ["qcwy"])
def test_a_crawl_of_hundreds_of_pages_is_coherent_and_keeps_its_connections(source, sqlite_url):
    # 300 pages: 51job reaches 50 pages a keyword, 智联 15
    cities, jobs = (("北京", "上海"), ("python", "java", "数据")) if source == "qcwy" else (CITIES, JOBS)
    rows = [(source, city, job) for city in cities for job in jobs]
    prepare_db(sqlite_url, rows)
    walls = WallConfig(sites=(source,), session_requests=1000)
    with SandboxProcess(seed=5, postings=(1000, 1000), walls=walls) as sandbox:
        crawl = run_crawl(
            source,
            sqlite_url,
            sandbox.url,
            timeout=240,
            **{f"FARM_{source.upper()}_MAX_PAGES": 50},
        )
        seen = sandbox.identity()
        pages, _, _ = expected_crawl(sandbox, source, rows, 50)
    assert crawl.returncode == 0, crawl.output[-3000:]
    assert {row["crawl_status"] for row in keywords(sqlite_url)} == {"completed"}
    assert len(pages) >= 250 and seen["requests"] >= len(pages)
    assert seen["incoherent"] == 0, seen
    # kept by farm's default handler (scrapy-impersonate's, and ChromeRequestsHandler, send one request a connection)
    assert seen["requests_per_connection"] >= 5, seen


def test_a_session_that_expires_mid_keyword_is_earned_again_and_no_page_is_lost_or_fetched_twice(sqlite_url):
    rows = [("qcwy", "上海", "python"), ("qcwy", "北京", "java")]
    prepare_db(sqlite_url, rows)
    walls = WallConfig(sites=("qcwy",), session_requests=4)
    with SandboxProcess(seed=9, postings=(150, 150), walls=walls) as sandbox:
        crawl = run_crawl("qcwy", sqlite_url, sandbox.url, timeout=240, FARM_QCWY_MAX_PAGES=8)
        seen = sandbox.walls()
        pages, ids, _ = expected_crawl(sandbox, "qcwy", rows, 8)
        fetched = fetched_pages(sandbox, "qcwy")
    assert crawl.returncode == 0, crawl.output[-3000:]
    assert {row["crawl_status"] for row in keywords(sqlite_url)} == {"completed"}
    # 16 pages, 4 requests a session: the first session's end is met by the requests in flight on it (one or
    # two keywords'), after which its life is learned and the next ones are earned ahead
    assert seen["expired"]["qcwy"] >= 1 and seen["sessions_issued"]["qcwy"] >= 4
    # the site counts a session at its first use: one earned ahead and never taken is earned, not issued (at
    # most FARM_SESSIONS_AHEAD, 2); one a pass was earning as the crawl closed may reach the site uncounted
    earned, issued = crawl_stat(crawl.output, "farm/session/earned"), seen["sessions_issued"]["qcwy"]
    assert issued - 2 <= earned <= issued + 2, (earned, issued)
    assert Counter(stored_postings(sqlite_url, "qcwy")) == Counter(ids)
    assert set(fetched) == pages and set(fetched.values()) == {1}


def test_once_a_sessions_life_is_learned_no_request_is_sent_on_a_session_the_site_counts_as_run_out(sqlite_url):
    # sessions of 10 requests, six keywords of 20 pages with nothing in between: a session runs out every few
    # tenths of a second, faster than a pass
    rows = [("qcwy", city, job) for city in ("北京", "上海") for job in ("python", "java", "数据")]
    prepare_db(sqlite_url, rows)
    walls = WallConfig(sites=("qcwy",), session_requests=10)
    with SandboxProcess(seed=7, postings=(400, 400), walls=walls) as sandbox:
        crawl = run_crawl("qcwy", sqlite_url, sandbox.url, timeout=240, FARM_QCWY_MAX_PAGES=20, FARM_QCWY_RATE=0)
        seen = sandbox.walls()
        fetched = fetched_pages(sandbox, "qcwy")
    assert crawl.returncode == 0, crawl.output[-3000:]
    assert {row["crawl_status"] for row in keywords(sqlite_url)} == {"completed"}
    assert seen["sessions_issued"]["qcwy"] >= 12 and set(fetched.values()) == {1}  # 120 pages, each once
    # the first session's end is learned from the site's wall, met by the requests then in flight (the
    # crawl's CONCURRENT_REQUESTS at most); after it, a request due past a session's learned end waits for the
    # next session: no other session is retired by a wall, each is replaced by the next one earned
    in_flight = CRAWL_SETTINGS["CONCURRENT_REQUESTS"]
    assert seen["walls_served"]["qcwy"].get("expired", 0) <= in_flight, seen["walls_served"]
    retired = re.search(r"'farm/session/retired': (\{[^}]*\})", crawl.output)
    assert retired is not None, crawl.output[-3000:]
    assert ast.literal_eval(retired.group(1)).get("refused") == 1, retired.group(1)


def test_a_slider_is_not_passed_its_keyword_goes_partial_named_and_the_others_complete(sqlite_url, tmp_path):
    rows = [("zhilian", "北京", "python"), ("zhilian", "上海", "java")]
    prepare_db(sqlite_url, rows)
    walls = WallConfig(sites=("zhilian",), slider_keywords=("zhilian:java",))
    # the sandbox shows the slider to one keyword; a real site shows it to the client, which farm's cooldown
    # (FARM_BROWSER_COOLDOWN: no browser for the site meanwhile) answers: off here, so the other keyword
    # earns its own session on its next attempt
    with SandboxProcess(seed=4, postings=(30, 30), walls=walls) as sandbox:
        crawl = run_crawl(
            "zhilian", sqlite_url, sandbox.url, timeout=240, FARM_BLOCK_RETRIES=3, FARM_BROWSER_COOLDOWN=0
        )
    assert crawl.returncode == 0, crawl.output[-3000:]
    status = {row["job"]: row for row in keywords(sqlite_url)}
    assert status["python"]["crawl_status"] == "completed"
    assert status["java"]["crawl_status"] == "partial"
    assert "slider" in status["java"]["error_message"]
    assert crawl_stat(crawl.output, "farm/wall/not_passed/slider") >= 1
    assert "the browser cannot pass it" in crawl.output
    shown = subprocess.run(
        [sys.executable, "-m", "farm", "--db-url", sqlite_url, "stats"], capture_output=True, text=True, timeout=60
    )
    lines = shown.stdout.splitlines()
    assert lines[0] == "the sites' doors", shown.stdout + shown.stderr
    assert re.fullmatch(
        r"zhilian: blocked by slider since \d\d:\d\d \(zhilian_verification_slider: 1 keyword partial\), "
        r"1 keyword waiting",
        lines[1],
    )
    assert re.fullmatch(r"zhilian: zhilian_verification passed in the browser: \d+ sessions? earned, .*", lines[2])
    report = tmp_path / "report.html"
    made = subprocess.run(
        [sys.executable, "-m", "farm", "--db-url", sqlite_url, "report", "--out", str(report)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert made.returncode == 0, made.stdout + made.stderr
    page = report.read_text(encoding="utf-8")
    doors = page.split("<h2 id=doors>", 1)[1].split("</ul>", 1)[0]
    assert f"<li>{lines[1]}</li>" in doors and f"<li>{lines[2]}</li>" in doors


def test_a_site_that_answers_nothing_but_sliders_ends_the_crawl_with_that_reason(sqlite_url):
    rows = [("boss", city, job) for city in ("北京", "上海") for job in ("python", "java", "前端", "测试")]
    prepare_db(sqlite_url, rows)
    walls = WallConfig(sites=("boss",), slider_rate=1.0)
    started = time.monotonic()
    with SandboxProcess(seed=4, postings=(30, 30), walls=walls) as sandbox:
        crawl = run_crawl(
            "boss", sqlite_url, sandbox.url, timeout=240, FARM_SITE_REFUSED_AFTER=4, FARM_BLOCK_BASE_DELAY=0.5
        )
    assert crawl.returncode == 0, crawl.output[-3000:]
    assert "'finish_reason': 'farm_site_refused'" in crawl.output
    assert "it refuses this crawl" in crawl.output
    assert time.monotonic() - started < 60
    assert {row["crawl_status"] for row in keywords(sqlite_url)} <= {"partial", "idle", "pending"}
    assert not any(row["crawl_status"] in ("completed", "failed") for row in keywords(sqlite_url))


def test_a_pace_slower_than_a_session_lives_still_gets_through(sqlite_url):
    # sessions live 3 s from their challenge; the site's pace is a request every 5 s (2.5 to 7.5 s): a request
    # sent again with a fresh session at the pace's turn would mostly carry an expired one, and earn session
    # after session (a dozen and more, over minutes) until a short gap let one through
    rows = [("boss", "北京", "python")]
    prepare_db(sqlite_url, rows)
    walls = WallConfig(sites=("boss",), session_seconds=3.0)
    with SandboxProcess(seed=6, postings=(30, 30), walls=walls) as sandbox:
        crawl = run_crawl("boss", sqlite_url, sandbox.url, timeout=240, FARM_BOSS_RATE=0.2, FARM_BOSS_MAX_PAGES=2)
        seen = sandbox.walls()
        pages, ids, _ = expected_crawl(sandbox, "boss", rows, 2)
        fetched = fetched_pages(sandbox, "boss")
    assert crawl.returncode == 0, crawl.output[-3000:]
    assert [row["crawl_status"] for row in keywords(sqlite_url)] == ["completed"]
    assert Counter(stored_postings(sqlite_url, "boss")) == Counter(ids)
    assert set(fetched) == pages and set(fetched.values()) == {1}
    earned = crawl_stat(crawl.output, "farm/session/earned")
    assert earned == seen["sessions_issued"]["boss"]
    assert 1 <= earned <= 2 * len(pages) and crawl_stat(crawl.output, "scheduler/dequeued/farm_fresh_session") >= 1


def test_workers_sharing_work_through_redis_each_earn_their_session_and_fetch_every_page_once(
    mariadb_url, shared, tmp_path
):
    rows = [("qcwy", city, job) for city in ("北京", "上海") for job in ("python", "java", "数据", "测试")]
    prepare_db(mariadb_url, rows)
    with SandboxProcess(seed=3, postings=(60, 120), walls=WallConfig(sites=("qcwy",))) as sandbox:
        # paced (the two share this machine's identity, so its pace): the crawl lasts longer than one worker
        # may take to start after the other on a loaded machine, and each meets the wall
        workers = [
            start_crawl(
                "qcwy",
                mariadb_url,
                sandbox.url,
                tmp_path / f"w{n}.log",
                redis=shared,
                FARM_QCWY_MAX_PAGES=6,
                FARM_QCWY_RATE=6,
            )
            for n in range(2)
        ]
        try:
            for worker in workers:
                stop(worker, 240)  # one that does not end by itself fails the test
        finally:
            for worker in workers:
                worker.kill()
                worker.wait()
        pages, ids, _ = expected_crawl(sandbox, "qcwy", rows, 6)
        fetched = fetched_pages(sandbox, "qcwy")
        issued = sandbox.walls()["sessions_issued"]["qcwy"]
    logs = [(tmp_path / f"w{n}.log").read_text(encoding="utf-8") for n in range(2)]
    assert [worker.returncode for worker in workers] == [0, 0], logs[0][-2000:] + logs[1][-2000:]
    assert {row["crawl_status"] for row in keywords(mariadb_url)} == {"completed"}
    assert Counter(stored_postings(mariadb_url, "qcwy")) == Counter(ids)
    assert set(fetched) == pages and set(fetched.values()) == {1}
    # each worker is its own client: it earns its own session in its own browser
    assert issued == sum(crawl_stat(log, "farm/session/earned") for log in logs) >= 2
    assert all("passed in the browser" in log for log in logs)


def test_farm_stats_tells_a_wall_passed_while_the_crawl_still_runs(sqlite_url, tmp_path):
    from click.testing import CliRunner

    from farm.cli import farm

    rows = [row for row in DEMO_ROWS if row[0] == "qcwy"]
    prepare_db(sqlite_url, rows)
    with SandboxProcess(seed=2026, postings=(20, 120), walls=True) as sandbox:
        # paced, so that keywords are left for seconds after the first pass
        crawl = start_crawl("qcwy", sqlite_url, sandbox.url, tmp_path / "crawl.log", FARM_QCWY_RATE=4)
        try:
            seen = left = None
            deadline = time.monotonic() + 120
            while seen is None and crawl.poll() is None and time.monotonic() < deadline:
                shown = CliRunner().invoke(farm, ["--db-url", sqlite_url, "stats", "--source", "qcwy", "--json"])
                assert shown.exit_code == 0, shown.output
                (row,) = json.loads(shown.output)
                if row["door"]["sessions_earned"]:
                    seen, left = row["door"]["lines"], row["remaining"]
                time.sleep(0.2)
        finally:
            stop(crawl, 120)
    log = (tmp_path / "crawl.log").read_text(encoding="utf-8")
    assert crawl.returncode == 0, log[-3000:]
    assert "passed in the browser" in log
    assert seen is not None and left, "farm stats told the wall passed only once the keywords were done"
    assert "passed in the browser" in seen[0] and "plain requests, no wall met" not in seen
