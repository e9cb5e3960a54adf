"""Identities in real crawls: six real forward proxies (tests/proxy.py's, and Debian's tinyproxy, which farm
did not write), each connecting to the sandbox from an address of its own (127.0.0.2 and on), in front of
a sandbox that holds each client (address) to a pace and bans one that goes faster
(farm/sandbox/clientpace.py).

FARM_<SITE>_RATE is one identity's pace: with six proxies the crawl's take is six identities' paces, each
kept under what the sandbox tolerates from one client, and a proxy the sandbox holds to a lower pace
learns it from its own refusals while the others keep theirs.
"""

import json
import os

import pytest
from click.testing import CliRunner
from sqlalchemy import select

from farm.cli import farm as farm_command
from farm.crawl.proxies import Proxy
from farm.sandbox.testing import SandboxProcess
from farm.sandbox.walls import WallConfig
from farm.sessions.browser import find_chromium
from farm.state.db import make_engine
from farm.state.models import IdentityPaceRow
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
from tests.tinyproxy import TinyProxy
from tests.tinyproxy import available as tinyproxy_installed

pytestmark = pytest.mark.e2e

CITIES = ("北京", "上海", "广州", "深圳", "杭州", "成都")
# The crawl's pace for one identity (requests a second), and what the sandbox tolerates from one client.
# Six identities' sum stays well under what one crawl, its proxies and the sandbox can do on two cores.
RATE = 2.5
TOLERATED = 3.2
MAX_PAGES = 3
POSTINGS = (60, 60)  # three pages a keyword


def rows_for(n):
    return [("qcwy", CITIES[i % len(CITIES)], f"job{i}") for i in range(n)]


def proxies(n, kind=ForwardProxy):
    """``n`` proxies of a ``kind`` (tests/proxy.py's ForwardProxy, or tinyproxy), each connecting to the
    site from an address of its own."""
    return [kind(source=f"127.0.0.{2 + i}").start() for i in range(n)]


# `make test` crawls through tinyproxy, a real proxy farm did not write (the tests' own proxy where it is
# missing); `make soak` (FARM_SOAK=1) through both
PROXY_KINDS = [
    pytest.param(
        ForwardProxy,
        id="test-proxy",
        marks=pytest.mark.skipif(
            tinyproxy_installed() and not os.environ.get("FARM_SOAK"), reason="make soak: tinyproxy serves make test"
        ),
    ),
    pytest.param(TinyProxy, id="tinyproxy", marks=pytest.mark.skipif(not tinyproxy_installed(), reason="no tinyproxy")),
]


def crawl_through(db_url, sandbox, through, **settings):
    return run_crawl(
        "qcwy",
        db_url,
        sandbox.url,
        timeout=120,
        FARM_QCWY_MAX_PAGES=MAX_PAGES,
        FARM_QCWY_RATE=RATE,
        FARM_PROXIES=",".join(proxy.url for proxy in through),
        FARM_PROXY_QUARANTINE=0.5,
        FARM_BLOCK_BASE_DELAY=0.5,
        FARM_BLOCK_MAX_DELAY=2,
        FARM_LEASES_IN_FLIGHT=24,  # every keyword at once: the identities, not the keywords, set the pace
        **settings,
    )


def check_completed(db_url, sandbox, rows):
    pages, ids, per_keyword = expected_crawl(sandbox, "qcwy", rows, MAX_PAGES)
    progress = {(k["city"], k["job"]): (k["crawl_status"], k["jobs_found"]) for k in keywords(db_url)}
    assert progress == {key: ("completed", jobs) for key, (_, jobs) in per_keyword.items()}
    stored = stored_postings(db_url, "qcwy")
    assert len(stored) == len(set(stored)) and set(stored) == ids  # every posting, once
    assert fetched_pages(sandbox, "qcwy") == {page: 1 for page in pages}
    return pages


def took(clients):
    """Seconds from the first request the sandbox had from any client (proxy) to the last."""
    return max(c["last"] for c in clients.values()) - min(c["first"] for c in clients.values())


def judged_too_fast(clients):
    """Requests the sandbox judged too fast (or sent while banned), all clients together."""
    return sum(client["too_fast"] + client["banned"] for client in clients.values())


@pytest.mark.parametrize("kind", PROXY_KINDS)
def test_six_proxies_take_six_identities_paces_each_within_what_the_site_tolerates(tmp_path, kind):
    rows = rows_for(12)
    timings = {}
    with SandboxProcess(seed=4, postings=POSTINGS) as sandbox:
        for count in (1, 6):
            db_url = f"sqlite:///{tmp_path / f'farm{count}.db'}"
            prepare_db(db_url, rows)
            sandbox.reset()
            sandbox.set_pace(rate=TOLERATED, burst=2, strikes=3, ban_seconds=2)
            through = proxies(count, kind)
            try:
                proc = crawl_through(db_url, sandbox, through)
                assert proc.returncode == 0, proc.output[-3000:]
                pages = check_completed(db_url, sandbox, rows)
                clients = sandbox.pace()["clients"]
                timings[count] = took(clients)
                assert set(clients) == {proxy.source for proxy in through}  # each proxy a client of its own
                assert all(client["served"] > 0 for client in clients.values())
                assert judged_too_fast(clients) < 0.05 * len(pages), clients
            finally:
                for proxy in through:
                    proxy.stop()
    print(f"pages {len(pages)}, seconds through 1 and 6 proxies: {timings}")
    assert len(pages) >= 30  # one proxy takes seconds: a quarter of them is more than start-up's noise
    assert timings[6] <= timings[1] / 4, timings


def test_a_proxy_held_to_a_fifth_of_the_pace_learns_it_and_the_others_keep_theirs(sqlite_url):
    rows = rows_for(24)
    db_url = sqlite_url
    prepare_db(db_url, rows)
    through = proxies(6)
    slow = through[0]
    try:
        with SandboxProcess(seed=4, postings=POSTINGS) as sandbox:
            sandbox.set_pace(rate=TOLERATED, burst=2, strikes=3, ban_seconds=2, rates={slow.source: RATE / 5})
            proc = crawl_through(db_url, sandbox, through)
            assert proc.returncode == 0, proc.output[-3000:]
            check_completed(db_url, sandbox, rows)
            clients = sandbox.pace()["clients"]
    finally:
        for proxy in through:
            proxy.stop()
    labels = {Proxy.of(proxy.url).label: proxy for proxy in through}
    blocks = {label: crawl_stat(proc.output, f"farm/identity/{label}/blocks") for label in labels}
    slow_label = Proxy.of(slow.url).label
    assert blocks[slow_label] >= 1  # its own refusals ...
    assert clients[slow.source]["too_fast"] + clients[slow.source]["banned"] == blocks[slow_label]
    engine = make_engine(db_url)
    with engine.connect() as conn:
        table = IdentityPaceRow.__table__
        learned = dict(conn.execute(select(table.c.identity, table.c.pace).where(table.c.source == "qcwy")).all())
    engine.dispose()
    # ... backed it off, and the pace it learned is kept for the next run; the others keep the setting
    assert learned[Proxy.of(slow.url).id] <= RATE * 0.35, learned
    # (one whose requests a busy machine bunched may be refused too: that one backs off as it should, so a
    # proxy the site never refused keeps the setting, and most were never refused)
    refused = {proxy.source: clients[proxy.source]["too_fast"] + clients[proxy.source]["banned"] for proxy in through}
    others = [Proxy.of(proxy.url).id for proxy in through[1:] if not refused[proxy.source]]
    assert len(others) >= len(through) - 2, refused
    assert all(learned[i] >= RATE * 0.9 for i in others), (learned, refused)
    # farm stats shows the identities as the crawl left them (the run table's stats)
    result = CliRunner(catch_exceptions=False).invoke(farm_command, ["--db-url", db_url, "stats", "--json"])
    [row] = [row for row in json.loads(result.stdout) if row["source"] == "qcwy"]
    seen = {i["identity"]: i for i in row["identities"]["identities"]}
    assert set(seen) == set(labels)
    assert seen[slow_label]["pace"] == pytest.approx(learned[Proxy.of(slow.url).id], abs=1e-3)
    assert seen[slow_label]["blocks"] == blocks[slow_label] and seen[slow_label]["state"] in ("cooling", "quarantined")


def busiest(proxy, seconds=2.0):
    """The most requests ``proxy`` relayed within any ``seconds``."""
    times = sorted(proxy.times)
    most, first = 0, 0
    for last, at in enumerate(times):
        while at - times[first] > seconds:
            first += 1
        most = max(most, last - first + 1)
    return most


@pytest.mark.redis
def test_two_workers_through_redis_share_six_proxies_and_drive_none_above_its_pace(mariadb_url, shared, tmp_path):
    rows = rows_for(24)
    prepare_db(mariadb_url, rows)
    through = proxies(6)
    try:
        with SandboxProcess(seed=4, postings=POSTINGS) as sandbox:
            sandbox.set_pace(rate=TOLERATED, burst=2, strikes=3, ban_seconds=2)
            workers = [
                start_crawl(
                    "qcwy",
                    mariadb_url,
                    sandbox.url,
                    tmp_path / f"worker{i}.log",
                    redis=shared,
                    FARM_CRAWLER_ID=f"worker{i}",
                    FARM_QCWY_MAX_PAGES=MAX_PAGES,
                    FARM_QCWY_RATE=RATE,
                    FARM_PROXIES=",".join(proxy.url for proxy in through),
                    FARM_PROXY_QUARANTINE=0.5,
                    FARM_BLOCK_BASE_DELAY=0.5,
                    FARM_BLOCK_MAX_DELAY=2,
                    FARM_WORKER_TIMEOUT=2,
                )
                for i in range(2)
            ]
            try:
                for worker in workers:
                    assert stop(worker, 120) == 0
            finally:
                for worker in workers:
                    worker.kill()
                    worker.wait()
            pages = check_completed(mariadb_url, sandbox, rows)
            clients = sandbox.pace()["clients"]
    finally:
        for proxy in through:
            proxy.stop()
    logs = [(tmp_path / f"worker{i}.log").read_text() for i in range(2)]
    labels = [Proxy.of(proxy.url).label for proxy in through]
    for log in logs:  # both workers crawled, through the proxies they share
        assert sum(crawl_stat(log, f"farm/identity/{label}/pages") for label in labels) > 0
    # no proxy driven above its pace: the sandbox judged (almost) none too fast, and none relayed more in
    # any two seconds than its pace allows, and a burst a busy machine bunches (each worker keeping its own
    # pace would relay twice as many: 10 in two seconds, and its bursts)
    assert judged_too_fast(clients) < 0.05 * len(pages), clients
    assert max(busiest(proxy) for proxy in through) <= 2 * RATE + 3, [busiest(proxy) for proxy in through]


def identities_shown(db_url):
    """`farm stats --json`'s identities of qcwy: {"status", "ended_at", "identities": {label: row}}, or None."""
    result = CliRunner(catch_exceptions=False).invoke(farm_command, ["--db-url", db_url, "stats", "--json"])
    [row] = [row for row in json.loads(result.stdout) if row["source"] == "qcwy"]
    shown = row["identities"]
    if shown is not None:
        shown["identities"] = {i["identity"]: i for i in shown["identities"]}
    return shown, result.output


@pytest.mark.skipif(find_chromium() is None, reason="no Chromium on the PATH (Debian: apt-get install chromium)")
def test_farm_stats_and_the_report_show_each_proxys_sessions_and_pages_a_session_its_password_masked(
    sqlite_url, tmp_path
):
    rows = rows_for(8)
    prepare_db(sqlite_url, rows)
    through = [ForwardProxy(auth=("alice", "s3cret")).start(), ForwardProxy().start()]
    masked, plain = f"http://alice:***@127.0.0.1:{through[0].port}", through[1].url
    running = []  # what farm stats showed while the crawl ran

    def both_earned_while_running(crawl):
        if crawl.poll() is not None:
            return True  # ended: what was seen is checked below
        shown, _ = identities_shown(sqlite_url)
        if shown is None or shown["ended_at"] is not None:
            return False
        if all(shown["identities"].get(label, {}).get("sessions") for label in (masked, plain)):
            running.append(shown)
            return True
        return False

    try:
        with SandboxProcess(seed=4, postings=POSTINGS, walls=WallConfig(sites=("qcwy",), session_requests=3)) as sb:
            crawl = start_crawl(
                "qcwy",
                sqlite_url,
                sb.url,
                tmp_path / "crawl.log",
                FARM_QCWY_MAX_PAGES=MAX_PAGES,
                FARM_QCWY_RATE=2,  # 24 pages through two identities: seconds, so that they are seen running
                FARM_PROXIES=f"{through[0].url_with_credentials},{through[1].url}",
            )
            try:
                wait_until(lambda: both_earned_while_running(crawl), 120, "the identities' sessions while it runs")
                assert stop(crawl, 120) == 0, (tmp_path / "crawl.log").read_text()[-3000:]
            finally:
                crawl.kill()
                crawl.wait()
            issued = sb.walls()["sessions_issued"]["qcwy"]
    finally:
        for proxy in through:
            proxy.stop()
    assert {k["crawl_status"] for k in keywords(sqlite_url)} == {"completed"}
    # seen while it ran: each proxy's sessions, within a second of their being earned (the run's row)
    assert running and running[0]["status"] == "running", "the crawl ended before farm stats showed it running"
    shown, output = identities_shown(sqlite_url)
    seen = shown["identities"]
    assert set(seen) == {masked, plain} and "s3cret" not in output and shown["status"] == "finished"
    # each proxy earned sessions of its own, and each session served pages through it
    assert all(seen[label]["sessions"] >= 1 and seen[label]["session_pages"] >= 1 for label in seen), seen
    # every session the crawl earned is an identity's; the site counts a session at its first use, so one
    # earned ahead and never taken is earned and not issued (at most FARM_SESSIONS_AHEAD, 2, an identity), and
    # one a pass was earning as the crawl closed may reach the site uncounted (one an identity)
    earned = crawl_stat((tmp_path / "crawl.log").read_text(), "farm/session/earned")
    assert sum(i["sessions"] for i in seen.values()) == earned
    assert issued - len(through) <= earned <= issued + 2 * len(through), (earned, issued)
    for i in seen.values():
        assert i["pages_a_session"] == round(i["session_pages"] / i["sessions"], 1)
    report = tmp_path / "report.html"
    made = CliRunner(catch_exceptions=False).invoke(
        farm_command, ["--db-url", sqlite_url, "report", "--out", str(report)]
    )
    assert made.exit_code == 0, made.output
    page = report.read_text(encoding="utf-8")
    assert "<h3>Identities</h3>" in page and "s3cret" not in page
    assert f"<td class=w>{masked}</td>" in page and f"<td class=w>{plain}</td>" in page
