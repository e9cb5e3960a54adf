"""`farm check` over two days of real crawls: a keyword whose postings the sandbox halved fails it, and the
failures reach a webhook (a local HTTP server) through apprise."""

import json
import os
import subprocess
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from zoneinfo import ZoneInfo

import pytest
from click.testing import CliRunner

from farm.cli import farm
from farm.sandbox.market import ENVIRONMENT
from farm.sandbox.testing import SandboxProcess
from farm.state.clock import today, utcnow
from tests.e2e.days import move_a_day_back
from tests.e2e.harness import kill_and_settle, prepare_db, run_crawl, served, start_crawl, wait_until

pytestmark = pytest.mark.e2e

ROWS = [("qcwy", city, job) for city in ("北京", "上海") for job in ("python", "java", "测试")]


class Hook(BaseHTTPRequestHandler):
    received: list = []

    def do_POST(self):
        self.received.append(json.loads(self.rfile.read(int(self.headers["Content-Length"]))))
        self.send_response(200)
        self.end_headers()

    def log_message(self, *args):
        pass


@pytest.fixture
def webhook():
    Hook.received = []
    server = ThreadingHTTPServer(("127.0.0.1", 0), Hook)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"json://127.0.0.1:{server.server_address[1]}/farm-hook", Hook.received
    server.shutdown()
    server.server_close()
    thread.join(10)


def crawl_day(db_url):
    with SandboxProcess(seed=5, postings=(40, 40)) as sandbox:
        proc = run_crawl("qcwy", db_url, sandbox.url)
    assert proc.returncode == 0, proc.output[-3000:]


def check(db_url, *args):
    return CliRunner().invoke(farm, ["--db-url", db_url, "check", *args])


def test_check_fails_on_a_halved_keyword_and_sends_the_failures_to_a_webhook(sqlite_url, webhook, monkeypatch):
    url, received = webhook
    prepare_db(sqlite_url, ROWS)
    crawl_day(sqlite_url)
    first = check(sqlite_url, "--notify", url)
    assert first.exit_code == 0, first.output
    assert "0 failed" in first.output and "ok   run_finished" in first.output and received == []

    move_a_day_back(sqlite_url)
    monkeypatch.setenv(ENVIRONMENT, json.dumps({"halve": ["java"]}))
    crawl_day(sqlite_url)
    second = check(sqlite_url, "--notify", url)
    day = today(utcnow(), ZoneInfo("Asia/Shanghai"))
    assert second.exit_code == 1, second.output
    failures = [line for line in second.output.splitlines() if line.startswith("FAIL")]
    assert sorted(failures) == [
        "FAIL postings_drop      qcwy 上海/java: 20 postings, median 40 over 1 day(s) before",
        "FAIL postings_drop      qcwy 北京/java: 20 postings, median 40 over 1 day(s) before",
    ]
    assert "ok   postings_drop      qcwy 北京/python" in second.output
    (sent,) = received
    assert sent["title"].startswith(f"farm check {day} on sqlite {sqlite_url.removeprefix('sqlite:///')}: 2 of ")
    assert "qcwy 北京/java" in sent["message"]
    assert "the failures sent to: JSON" in second.output
    assert "farm-hook" not in second.output  # the URL, which may hold a secret, is never printed


def test_a_crawl_killed_mid_crawl_fails_the_check_naming_its_run_and_day(sqlite_url, tmp_path):
    prepare_db(sqlite_url, ROWS)
    beat = {"FARM_REAP_INTERVAL": "1"}  # heartbeats every second: a killed crawl is told within three
    with SandboxProcess(seed=5, postings=(40, 40)) as sandbox:
        crawler = start_crawl("qcwy", sqlite_url, sandbox.url, tmp_path / "crawl.log", FARM_QCWY_RATE=4, **beat)
        try:
            wait_until(lambda: served(sandbox) >= 4 or crawler.poll() is not None, 60, "the crawl's first pages")
            assert crawler.poll() is None, (tmp_path / "crawl.log").read_text()[-3000:]
            kill_and_settle(crawler)
        finally:
            crawler.kill()
            crawler.wait(30)
    env = {**os.environ, **beat, "FARM_DB_URL": sqlite_url}
    checked = []

    def told():
        done = subprocess.run([sys.executable, "-m", "farm", "check"], env=env, capture_output=True, text=True)
        checked.append(done)
        return "FAIL run_unfinished" in done.stdout

    wait_until(told, 30, "farm check to tell the killed run")
    assert checked[-1].returncode == 1, checked[-1].stdout
    day = today(utcnow(), ZoneInfo("Asia/Shanghai"))
    (killed,) = [line for line in checked[-1].stdout.splitlines() if line.startswith("FAIL run_unfinished")]
    assert killed.startswith(f"FAIL run_unfinished     qcwy run 1: started {day} (")
    assert killed.endswith("never ended: its crawler is gone (killed before its close)")
