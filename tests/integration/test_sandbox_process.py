"""The sandbox in a child process, as SandboxProcess starts it for the e2e tests and the benchmarks:
it leaves no process behind, a failed start says why, the command says where it listens once it does,
and one seed gives the same ids in every process."""

import json
import subprocess
import sys
import time
import urllib.request

import pytest

from farm.sandbox.testing import SandboxProcess
from tests.unit.sandbox_conftest_helpers import CANDIDATES, CITIES, page_ids


@pytest.fixture(scope="module")
def sandbox():
    """One sandbox for the module: seed 7, the default spread of keyword sizes, no faults."""
    with SandboxProcess(seed=7) as sb:
        yield sb


def _alive(pid):
    try:
        with open(f"/proc/{pid}/stat") as stat:
            return stat.read().split(")")[-1].split()[0] != "Z"
    except FileNotFoundError:
        return False


def test_stop_leaves_no_process_even_when_the_block_fails():
    with pytest.raises(ZeroDivisionError):
        with SandboxProcess() as sandbox:
            pid = sandbox.proc.pid
            assert _alive(pid)
            1 / 0  # noqa: B018 - the block fails
    deadline = time.monotonic() + 10
    while _alive(pid) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not _alive(pid) and sandbox.proc.returncode is not None


def test_a_failed_start_raises_and_leaves_nothing():
    sandbox = SandboxProcess(postings=(5, 1))
    with pytest.raises(RuntimeError, match="postings"):
        sandbox.start()
    assert sandbox.proc.poll() is not None


def test_cli_prints_its_url_once_ready():
    proc = subprocess.Popen([sys.executable, "-m", "farm.sandbox", "--port", "0"], stdout=subprocess.PIPE, text=True)
    try:
        line = proc.stdout.readline()
        assert line.startswith("farm sandbox listening on http://127.0.0.1:")
        url = line.split()[-1]
        assert json.loads(urllib.request.urlopen(url + "/_sandbox/health", timeout=10).read())["status"] == "ok"
    finally:
        proc.terminate()
        assert proc.wait(timeout=10) == 0
        proc.stdout.close()


def test_ids_are_stable_across_processes_with_one_seed(sandbox):
    with SandboxProcess(seed=7) as again, SandboxProcess(seed=8) as other:
        for site, city in CITIES.items():
            keyword = next(k for k in CANDIDATES if sandbox.truth(site, city, k)["total"] > 40)
            first = page_ids(site, sandbox.url, keyword, city, 2)[0]
            assert first and page_ids(site, again.url, keyword, city, 2)[0] == first
            assert page_ids(site, sandbox.url, keyword, city, 2)[0] == first
            assert sandbox.truth(site, city, keyword)["ids"] == again.truth(site, city, keyword)["ids"]
            assert not set(other.truth(site, city, keyword)["ids"]) & set(first)
