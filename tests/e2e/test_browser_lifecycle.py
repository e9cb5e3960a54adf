"""The wall browser never hangs a crawl or costs a keyword, against the sandbox's walls in Debian's Chromium.

Chromium killed mid-crawl is started again and every keyword completes; a wall page whose script never yields
is a named block within the browser's timeout, and Ctrl+C while the browser is on it ends the crawl at once,
its keywords partial; a site that refuses each session on its first use ends the crawl as site-refused; and a
crawl of short sessions with sixteen requests in flight, no pace, ends by itself with every keyword done.
A tab is kept for each identity and proxy and passes its walls one after another, each from an empty jar.
"""

import os
import signal
import time
from collections import Counter
from pathlib import Path

import pytest

from farm.sandbox.testing import SandboxProcess
from farm.sandbox.walls import WallConfig
from farm.sessions.browser import Browser, find_chromium
from farm.sessions.disguise import crawl_identity
from farm.sessions.wall import Wall
from tests.e2e.harness import (
    crawl_stat,
    expected_crawl,
    fetched_pages,
    keywords,
    prepare_db,
    run_crawl,
    start_crawl,
    stop,
    stored_postings,
    wait_until,
)
from tests.proxy import ForwardProxy
from tests.unit.loop_helpers import run_loop

pytestmark = [
    pytest.mark.e2e,
    pytest.mark.skipif(find_chromium() is None, reason="no Chromium on the PATH (Debian: apt-get install chromium)"),
]

ROWS = [("qcwy", city, job) for city in ("北京", "上海") for job in ("python", "java", "前端", "测试")]
# the block back-off as farm ships it (the harness shortens it): a block after a wall costs seconds
SHIPPED_BACK_OFF = {"FARM_BLOCK_BASE_DELAY": 2.0, "FARM_BLOCK_MAX_DELAY": 60.0}


def chromium_under(pid: int) -> list[int]:
    """Chromium's processes below ``pid`` (its browser, renderers, GPU and utility processes)."""
    children: dict[int, list[int]] = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                ppid = int((entry / "stat").read_text().rsplit(")", 1)[1].split()[1])
            except (OSError, IndexError, ValueError):
                continue
            children.setdefault(ppid, []).append(int(entry.name))
    found, todo = [], list(children.get(pid, []))
    while todo:
        child = todo.pop()
        todo.extend(children.get(child, []))
        try:
            if Path(f"/proc/{child}/comm").read_text().startswith(("chrom", "headless")):
                found.append(child)
        except OSError:
            pass
    return found


def test_short_sessions_with_sixteen_requests_in_flight_and_no_pace_the_crawl_ends_with_every_keyword_done(
    sqlite_url,
):
    prepare_db(sqlite_url, ROWS)
    walls = WallConfig(sites=("qcwy",), session_seconds=20.0, session_requests=10)
    flight = {"CONCURRENT_REQUESTS": 16, "CONCURRENT_REQUESTS_PER_DOMAIN": 16, "FARM_PAGES_IN_FLIGHT": 16}
    with SandboxProcess(seed=31, postings=(400, 400), walls=walls) as sandbox:
        crawl = run_crawl(
            "qcwy", sqlite_url, sandbox.url, timeout=150, FARM_QCWY_MAX_PAGES=20, **flight, **SHIPPED_BACK_OFF
        )
        pages, ids, _ = expected_crawl(sandbox, "qcwy", ROWS, 20)
        fetched = fetched_pages(sandbox, "qcwy")
    assert crawl.returncode == 0, crawl.output[-3000:]
    assert {row["crawl_status"] for row in keywords(sqlite_url)} == {"completed"}
    assert Counter(stored_postings(sqlite_url, "qcwy")) == Counter(ids)
    assert set(fetched) == pages and set(fetched.values()) == {1}


def test_chromium_killed_mid_crawl_is_started_again_and_no_keyword_fails(sqlite_url, tmp_path):
    prepare_db(sqlite_url, ROWS)
    walls = WallConfig(sites=("qcwy",), session_requests=4)  # a wall every few pages: the browser is needed again
    log = tmp_path / "crawl.log"
    with SandboxProcess(seed=7, postings=(160, 160), walls=walls) as sandbox:
        crawl = start_crawl("qcwy", sqlite_url, sandbox.url, log, FARM_QCWY_MAX_PAGES=8)
        try:
            wait_until(lambda: sandbox.walls()["sessions_issued"]["qcwy"] >= 2, 120, "two sessions earned")
            killed = chromium_under(crawl.pid)
            assert killed, "no Chromium below the crawl"
            for pid in killed:
                os.kill(pid, signal.SIGKILL)
            stop(crawl, 180)
        finally:
            crawl.kill()
            crawl.wait()
        pages, ids, _ = expected_crawl(sandbox, "qcwy", ROWS, 8)
        fetched = fetched_pages(sandbox, "qcwy")
    output = log.read_text(encoding="utf-8")
    assert crawl.returncode == 0, output[-3000:]
    assert {row["crawl_status"] for row in keywords(sqlite_url)} == {"completed"}, output[-3000:]
    assert "headless Chromium died" in output and crawl_stat(output, "farm/browser/restarts") >= 1
    assert Counter(stored_postings(sqlite_url, "qcwy")) == Counter(ids)
    assert set(fetched) == pages and set(fetched.values()) == {1}


def test_a_wall_page_whose_script_never_yields_is_a_named_block_within_the_browser_timeout(sqlite_url):
    rows = ROWS[:2]
    prepare_db(sqlite_url, rows)
    started = time.monotonic()
    with SandboxProcess(seed=5, postings=(40, 40), walls=WallConfig(sites=("qcwy",))) as sandbox:
        sandbox.set_walls(sites=["qcwy"], hang=True)
        crawl = run_crawl(
            "qcwy",
            sqlite_url,
            sandbox.url,
            timeout=120,
            FARM_BROWSER_TIMEOUT=3,
            FARM_BLOCK_RETRIES=1,
            FARM_SITE_REFUSED_AFTER=600,
        )
        assert sandbox.walls()["security_pages"]["qcwy"] >= 1
    assert crawl.returncode == 0, crawl.output[-3000:]
    assert time.monotonic() - started < 100
    statuses = {row["job"]: row for row in keywords(sqlite_url)}
    assert {row["crawl_status"] for row in statuses.values()} == {"partial"}, crawl.output[-3000:]
    assert all("qcwy_acw_sc__v2_timeout" in row["error_message"] for row in statuses.values()), [
        row["error_message"] for row in statuses.values()
    ]
    assert crawl_stat(crawl.output, "farm/wall/not_passed/timeout") >= 1


def test_ctrl_c_while_a_wall_is_being_passed_ends_the_crawl_and_leaves_its_keywords_partial(sqlite_url, tmp_path):
    prepare_db(sqlite_url, ROWS[:4])
    log = tmp_path / "crawl.log"
    with SandboxProcess(seed=5, postings=(40, 40), walls=WallConfig(sites=("qcwy",))) as sandbox:
        sandbox.set_walls(sites=["qcwy"], hang=True)
        # the browser would wait on the page for ten minutes: only Ctrl+C can end the crawl within the test
        crawl = start_crawl("qcwy", sqlite_url, sandbox.url, log, FARM_BROWSER_TIMEOUT=600)
        try:
            wait_until(lambda: chromium_under(crawl.pid), 60, "the browser to start")
            wait_until(lambda: "headless Chromium started" in log.read_text(encoding="utf-8"), 30, "its log line")
            time.sleep(1.0)  # the browser is on the wall page, whose script never yields
            crawl.send_signal(signal.SIGINT)
            stop(crawl, 45)
        finally:
            crawl.kill()
            crawl.wait()
    output = log.read_text(encoding="utf-8")
    assert crawl.returncode == 0, output[-3000:]
    statuses = [row["crawl_status"] for row in keywords(sqlite_url)]
    assert "failed" not in statuses and "crawling" not in statuses, output[-3000:]
    assert "partial" in statuses
    assert not chromium_under(crawl.pid)


# `make test` on Boss, `make soak` (FARM_SOAK=1) on 51job too: the sites share the rule
@pytest.mark.parametrize("source", ["boss", "qcwy"] if os.environ.get("FARM_SOAK") else ["boss"])
def test_a_site_that_refuses_every_session_on_its_first_use_ends_the_crawl_as_site_refused(source, sqlite_url):
    rows = [(source, city, job) for city in ("北京", "上海") for job in ("python", "java")]
    prepare_db(sqlite_url, rows)
    started = time.monotonic()
    with SandboxProcess(seed=8, postings=(40, 40), walls=WallConfig(sites=(source,))) as sandbox:
        sandbox.set_walls(sites=[source], refuse_sessions=True)
        crawl = run_crawl(
            source, sqlite_url, sandbox.url, timeout=120, FARM_SITE_REFUSED_AFTER=4, FARM_BLOCK_BASE_DELAY=0.5
        )
        issued = sandbox.walls()["sessions_issued"][source]
    assert crawl.returncode == 0, crawl.output[-3000:]
    assert "'finish_reason': 'farm_site_refused'" in crawl.output, crawl.output[-3000:]
    assert time.monotonic() - started < 90
    assert 1 <= issued <= 8  # the browser cools down once a request is refused on its own wall page twice
    assert crawl_stat(crawl.output, "farm/session/refused_at_first_use") >= 1
    statuses = {row["crawl_status"] for row in keywords(sqlite_url)}
    assert statuses <= {"partial", "idle", "pending"} and "failed" not in statuses


def test_a_tab_kept_per_proxy_passes_its_walls_one_after_another_each_session_its_own():
    identity = crawl_identity("chrome", find_chromium())

    def wall(sandbox, n):
        url = f"{sandbox.url}/pc/search?keyword=python{n}&searchType=2&jobArea=010000"
        return Wall("qcwy_acw_sc__v2", url, ("acw_sc__v2",), data=("/api/job/search-pc",))

    async def passes(sandbox, first, second):
        browser = Browser("", pages=2, timeout=30)
        try:
            direct = [await browser.earn(wall(sandbox, n), identity, "") for n in range(3)]
            after_three = browser.open_tabs()
            proxied = await browser.earn(wall(sandbox, 3), identity, first)
            after_proxy = browser.open_tabs()
            await browser.earn(wall(sandbox, 4), identity, second)  # a third tab: the least recently used closes
            return direct, proxied, after_three, after_proxy, browser.open_tabs(), browser.pages_opened
        finally:
            await browser.close()

    with SandboxProcess(seed=3, postings=(40, 40), walls=True) as sandbox, ForwardProxy() as one, ForwardProxy() as two:
        direct, proxied, after_three, after_proxy, at_end, opened = run_loop(lambda: passes(sandbox, one.url, two.url))
        seen = sandbox.walls()
    # one tab for the three passes without a proxy; each pass's cookies are its own challenge's
    assert after_three == [("", 3)] and opened == 5
    assert len({c["acw_tc"] for c in direct}) == 3 and len({c["acw_sc__v2"] for c in direct}) == 3
    assert all(set(c) == {"acw_tc", "acw_sc__v2"} for c in [*direct, proxied])
    # a proxy's pass has a tab of its own; no more tabs are open than passes may run at once
    assert after_proxy == [("", 3), (one.url, 1)] and at_end == [(one.url, 1), (two.url, 1)]
    assert seen["bots"]["qcwy"] == 0 and seen["people"]["qcwy"] == 5
    # the page behind the wall never loads in the browser: no use of a session it earned is spent there
    assert seen["with_session"]["qcwy"] == 0 and seen["sessions_issued"]["qcwy"] == 0


def test_a_browser_slower_to_start_than_the_pass_timeout_still_passes_the_wall(tmp_path):
    # a Chromium that takes 4 s to start, as on a busy machine, under a 3 s pass timeout: the start is not the
    # wall's time, so the pass is had, not a block named "browser"
    slow = tmp_path / "slow-chromium"
    slow.write_text(f'#!/bin/sh\nsleep 4\nexec {find_chromium()} "$@"\n')
    slow.chmod(0o755)
    identity = crawl_identity("chrome", find_chromium())

    async def one_pass(sandbox):
        browser = Browser(str(slow), pages=1, timeout=3)
        try:
            url = f"{sandbox.url}/pc/search?keyword=python&searchType=2&jobArea=010000"
            return await browser.earn(
                Wall("qcwy_acw_sc__v2", url, ("acw_sc__v2",), data=("/api/job/search-pc",)), identity, ""
            )
        finally:
            await browser.close()

    with SandboxProcess(seed=3, postings=(40, 40), walls=True) as sandbox:
        cookies = run_loop(lambda: one_pass(sandbox))
    assert set(cookies) == {"acw_tc", "acw_sc__v2"}
