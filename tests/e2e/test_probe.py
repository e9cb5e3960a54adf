"""`farm probe` against the sandbox: without walls, with walls the browser passes, with a slider on every search
of one site, and with nothing listening, each the real command (its crawls in child processes), the user's
database (FARM_DB_URL) never created; a project's own site; and the runner's deadline, over a child that will
not stop."""

import importlib.util
import json
import os
import shutil
import socket
import subprocess
import sys
import threading
import time
from http.server import ThreadingHTTPServer

import pytest

from farm.probe.plan import Probe
from farm.probe.runner import GRACE, run_probes
from farm.sandbox.testing import SandboxProcess
from farm.sandbox.walls import WallConfig
from farm.sites.boss.spider import BossSpider
from farm.sites.qcwy.spider import QcwySpider
from farm.sites.zhilian.spider import ZhilianSpider
from tests.e2e.harness import REPO, wait_until

EXAMPLE = REPO / "docs/examples/tinyjobs"
SPIDERS = {"boss": BossSpider, "qcwy": QcwySpider, "zhilian": ZhilianSpider}
CHROMIUM = shutil.which("chromium") or ("/usr/bin/chromium" if os.path.exists("/usr/bin/chromium") else None)
needs_chromium = pytest.mark.skipif(CHROMIUM is None, reason="no chromium (Debian's chromium package)")


def probe(tmp_path, base_url, *args, timeout=120):
    """`farm probe ARGS`, every site at ``base_url``; (exit status, stdout, seconds it took). The user's
    database is a file under tmp_path that the probe must not create."""
    env = dict(os.environ, FARM_DB_URL=f"sqlite:///{tmp_path / 'users.db'}", PYTHONFAULTHANDLER="1")
    env.pop("FARM_REDIS_URL", None)
    for site in SPIDERS:
        env[f"FARM_{site.upper()}_BASE_URL"] = base_url
        env[f"FARM_{site.upper()}_RATE"] = "0"  # the sandbox is local: no politeness pace
    started = time.monotonic()
    done = subprocess.run(
        [sys.executable, "-m", "farm", "probe", *args],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        timeout=timeout,
    )
    assert not (tmp_path / "users.db").exists(), "the probe touched the user's database"
    return done.returncode, done.stdout, time.monotonic() - started


def closed_port():
    """A port nothing listens on: bound, then closed."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def page_one(sandbox, site, city="北京", job="python"):
    """The postings the sandbox serves on page 1 of a search, at the spider's page size."""
    spider = SPIDERS[site]
    truth = sandbox.truth(site, spider.city_codes[city], job, page_size=spider.page_size)
    return len(truth["ids"][: truth["page_size"]])


def test_probe_without_walls_counts_each_sites_postings_on_page_one(tmp_path):
    with SandboxProcess(seed=3, postings=(40, 40)) as sandbox:
        code, out, _ = probe(tmp_path, sandbox.url, "--json")
        expected = {site: page_one(sandbox, site) for site in SPIDERS}
        served = {key: n for key, n in sandbox.counts().items()}
    verdicts = {v["site"]: v for v in json.loads(out)}
    assert code == 0, out
    assert {site: v["status"] for site, v in verdicts.items()} == dict.fromkeys(SPIDERS, "ok")
    assert {site: v["postings"] for site, v in verdicts.items()} == expected
    assert all(n > 0 for n in expected.values())
    assert all(v["wall"] is None and v["blocks"] == {} for v in verdicts.values())
    # one search a site: page 1 of the probe's keyword, once
    assert served == {(site, SPIDERS[site].city_codes["北京"], "python", 1): 1 for site in SPIDERS}


@needs_chromium
def test_probe_with_walls_passes_each_in_the_browser(tmp_path):
    with SandboxProcess(seed=3, postings=(40, 40), walls=True) as sandbox:
        code, out, _ = probe(tmp_path, sandbox.url)
        expected = {site: page_one(sandbox, site) for site in SPIDERS}
        issued = sandbox.walls()["sessions_issued"]
    lines = dict(line.split(None, 1) for line in out.splitlines())
    assert code == 0, out
    walls = {"boss": "boss_security_check", "qcwy": "qcwy_acw_sc__v2", "zhilian": "zhilian_verification"}
    for site, wall in walls.items():
        assert lines[site].startswith(f"ok: {expected[site]} postings on page 1; wall {wall} passed by the browser in ")
        assert issued[site] >= 1


@needs_chromium
def test_probe_of_a_site_that_answers_every_search_with_a_slider_cannot_pass(tmp_path):
    walls = WallConfig(slider_keywords=("boss:python",))
    with SandboxProcess(seed=3, postings=(40, 40), walls=walls) as sandbox:
        code, out, _ = probe(tmp_path, sandbox.url, "boss", "--json")
        sliders = sandbox.walls()["sliders"]["boss"]
    (boss,) = json.loads(out)
    assert code == 1
    assert (boss["status"], boss["what"]) == ("slider", "cannot pass (boss_security_check_slider)")
    assert "FARM_BOSS_RATE" in boss["fix"] and "FARM_PROXIES" in boss["fix"]
    assert boss["blocks"] == {"boss_security_check_slider": 3}  # the page and its two retries
    assert sliders >= 1


def test_probe_with_nothing_listening_says_no_network_within_its_time(tmp_path):
    port = closed_port()
    code, out, took = probe(tmp_path, f"http://127.0.0.1:{port}", "--timeout", "20", timeout=60)
    lines = dict(line.split(None, 1) for line in out.splitlines())
    assert code == 1
    assert set(lines) == set(SPIDERS)
    for site, line in lines.items():
        assert line.startswith(f"no network: ConnectionError: curl: (7) Failed to connect to 127.0.0.1:{port}"), line
        assert line.endswith(f"— check FARM_{site.upper()}_BASE_URL and the proxy (FARM_PROXIES)")
    assert took < 20 + 10  # its --timeout, and the command's own start


def test_a_probe_that_outlives_its_deadline_is_killed_with_everything_it_started(tmp_path):
    # a child that ignores SIGTERM and has a process of its own: both must be gone once the runner returns
    pid_file = tmp_path / "grandchild.pid"
    stubborn = tmp_path / "python"
    stubborn.write_text(f"#!/bin/sh\ntrap '' TERM\nsleep 300 &\necho $! > {pid_file}\nwait\n")
    stubborn.chmod(0o755)
    started = time.monotonic()
    (verdict,) = run_probes([Probe("boss", "北京", "python", 1.0)], python=str(stubborn))
    took = time.monotonic() - started
    assert verdict.line() == (
        "boss     timeout: no outcome within 1 s — raise --timeout, or check FARM_BOSS_BASE_URL and the proxy "
        "(FARM_PROXIES)"
    )
    assert 1.0 <= took < 1.0 + GRACE + 3
    grandchild = int(pid_file.read_text())
    wait_until(lambda: not _alive(grandchild), 5, f"process {grandchild} to end")


def test_a_probe_stopped_with_sigterm_ends_its_child_crawl_and_removes_its_folder(tmp_path):
    # a site that takes the connection and never answers: the child's crawl waits on it
    silent = socket.socket()
    silent.bind(("127.0.0.1", 0))
    silent.listen(16)
    temporary = tmp_path / "tmp"
    temporary.mkdir()
    env = dict(os.environ, FARM_DB_URL=f"sqlite:///{tmp_path / 'users.db'}", TMPDIR=str(temporary))
    env["FARM_BOSS_BASE_URL"] = f"http://127.0.0.1:{silent.getsockname()[1]}"
    command = [sys.executable, "-m", "farm", "probe", "boss", "--timeout", "120"]
    runner = subprocess.Popen(command, cwd=REPO, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        wait_until(lambda: _probe_children(temporary), 60, "the probe's child crawl to start")
        (child,) = _probe_children(temporary)
        wait_until(lambda: any(temporary.glob("farm-probe-*/boss/crawl.log")), 60, "the child's crawl to log")
        runner.terminate()
        _, err = runner.communicate(timeout=30)
    finally:
        silent.close()
        if runner.poll() is None:
            runner.kill()
            runner.wait()
    assert runner.returncode == 128 + 15, err
    assert "farm probe: stopped by SIGTERM" in err
    wait_until(lambda: not _alive(child), 5, f"the child crawl {child} to end")
    assert list(temporary.iterdir()) == []


def _probe_children(temporary):
    """The pids of the probe children whose folder is under ``temporary``."""
    found = []
    for entry in os.scandir("/proc"):
        if not entry.name.isdigit():
            continue
        try:
            cmdline = open(f"/proc/{entry.name}/cmdline", "rb").read().split(b"\0")
        except OSError:
            continue
        if b"farm.probe.child" in cmdline and any(str(temporary).encode() in arg for arg in cmdline):
            if _alive(int(entry.name)):
                found.append(int(entry.name))
    return found


def _alive(pid):
    try:
        state = open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()[0]
    except FileNotFoundError:
        return False
    return state != "Z"  # a zombie has ended; its new parent reaps it


def test_probe_of_a_projects_own_site_searches_its_first_city(tmp_path):
    """In a project that crawls a site of its own (a copy of docs/examples/tinyjobs, its site's address set to
    the site served here), `farm probe` probes that site by default, and leaves the project's database alone."""
    spec = importlib.util.spec_from_file_location("tinyjobs_site", EXAMPLE / "site.py")
    site = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(site)
    server = ThreadingHTTPServer(("127.0.0.1", 0), site.Search)
    serving = threading.Thread(target=server.serve_forever, daemon=True)
    serving.start()
    project = shutil.copytree(EXAMPLE, tmp_path / "tinyjobs", ignore=shutil.ignore_patterns("*.db", "__pycache__"))
    settings = project / "tinyjobs" / "settings.py"
    address = f"http://127.0.0.1:{server.server_port}"
    settings.write_text(settings.read_text().replace("http://127.0.0.1:8765", address))
    env = {name: value for name, value in os.environ.items() if not name.startswith(("FARM_", "SCRAPY_"))}
    env["PYTHONPATH"] = str(REPO)
    for name in SPIDERS:  # were farm's three probed as well, never the real sites from a test
        env[f"FARM_{name.upper()}_BASE_URL"] = f"http://127.0.0.1:{closed_port()}"
    try:
        done = subprocess.run(
            [sys.executable, "-m", "farm", "probe", "--json"],
            cwd=project,
            env=env,
            capture_output=True,
            text=True,
            timeout=120,
        )
    finally:
        server.shutdown()
        server.server_close()
    assert done.returncode == 0, done.stdout + done.stderr[-3000:]
    verdicts = {v["site"]: v for v in json.loads(done.stdout)}
    assert list(verdicts) == ["tinyjobs"]  # the one site the project crawls (farm's three are not its spiders)
    tinyjobs = verdicts["tinyjobs"]
    assert (tinyjobs["status"], tinyjobs["city"], tinyjobs["job"]) == ("ok", "Springfield", "python"), done.stdout
    assert tinyjobs["postings"] == min(site.PAGE_SIZE, site.postings("spr", "python"))
    assert not (project / "tinyjobs.db").exists()


def test_probe_through_each_proxy_says_which_to_drop(tmp_path, monkeypatch):
    from tests.proxy import ForwardProxy

    with (
        SandboxProcess(seed=3, postings=(40, 40)) as sandbox,
        ForwardProxy(auth=("good", "pa55-Good-7f3a")) as good,
        ForwardProxy(auth=("bad", "pa55-Bad-91c2"), blocking=True) as bad,
    ):
        monkeypatch.setenv("FARM_PROXIES", f"{good.url_with_credentials},{bad.url_with_credentials}")
        code, out, _ = probe(tmp_path, sandbox.url, "qcwy", "--each-proxy")
        expected = page_one(sandbox, "qcwy")
    good_label, bad_label = f"http://good:***@127.0.0.1:{good.port}", f"http://bad:***@127.0.0.1:{bad.port}"
    lines = [" ".join(line.split()) for line in out.splitlines()]  # the names padded to one width
    assert code == 1, out  # a probe failed
    assert lines[0].startswith(f"qcwy via {good_label} ok: {expected} postings on page 1"), out
    assert lines[1].startswith(f"qcwy via {bad_label} blocked: http_403"), out
    assert lines[2] == f"drop from FARM_PROXIES: {bad_label}"
    assert "pa55" not in out  # passwords masked
    assert good.relayed == 1 and bad.blocked >= 1 and bad.relayed == 0  # each probe through its own proxy
