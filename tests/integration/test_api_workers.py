"""`farm api` under many clients: its database connections stay within its pool, and with
`--workers 2` two processes serve one port, never hand out one keyword twice, replace a worker
that dies and stop when their command is gone."""

import os
import re
import signal
import threading
import time
from collections import Counter

import pytest
from sqlalchemy import text

from farm.state import KeywordStore
from farm.state.db import make_engine
from tests.integration.api_harness import ApiServer, claim_all
from tests.migrated import migrated

CLIENTS = 8
KEYWORDS = 1500
POOL_SIZE = 3  # the connections the server keeps (--db-connections), fewer than its clients
STOPPED = re.compile(r"farm api stopped: (.*)")
STARTED = re.compile(r"Application startup complete")


def _filled(url: str) -> tuple[KeywordStore, set[int]]:
    migrated(url)
    store = KeywordStore(make_engine(url))
    store.add_keywords(("boss", "北京", f"job{i}") for i in range(KEYWORDS))
    return store, {r["id"] for r in store.list_keywords()}


def _each_once(results: dict, all_ids: set[int]) -> None:
    claimed = [kid for got, _ in results.values() for kid, _ in got]
    assert [kid for kid, n in Counter(claimed).items() if n > 1] == []
    assert set(claimed) == all_ids


def _children(pid: int) -> list[int]:
    with open(f"/proc/{pid}/task/{pid}/children") as f:
        return [int(child) for child in f.read().split()]


def _until(condition, what: str, timeout: float = 30):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        found = condition()
        if found:
            return found
        time.sleep(0.05)
    raise AssertionError(f"not within {timeout}s: {what}")


def _gone(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] == "Z"  # exited, not yet reaped
    except FileNotFoundError:
        return True


@pytest.mark.mariadb
def test_many_clients_are_served_on_the_pools_connections(mariadb_url, tmp_path):
    """Eight keep-alive clients claim at once: the server never opens more connections than it
    keeps (--db-connections; none opened and closed again a request)."""
    store, all_ids = _filled(mariadb_url)
    database = store.engine.url.database
    seen, done = set(), threading.Event()
    watcher = make_engine(mariadb_url)

    def watch():
        with watcher.connect() as conn:
            query = text("SELECT ID FROM information_schema.PROCESSLIST WHERE DB = :db AND ID <> CONNECTION_ID()")
            while not done.is_set():
                seen.update(conn.execute(query, {"db": database}).scalars())

    with ApiServer(mariadb_url, tmp_path / "api.log", args=["--db-connections", str(POOL_SIZE)]) as server:
        store.engine.dispose()  # the test's own connections are not the server's
        watching = threading.Thread(target=watch)
        watching.start()
        try:
            results = claim_all([server], CLIENTS)
        finally:
            done.set()
            watching.join(timeout=30)
    watcher.dispose()
    _each_once(results, all_ids)
    assert 1 <= len(seen) <= POOL_SIZE, f"the server used {len(seen)} connections"


@pytest.mark.mariadb
def test_two_workers_serve_one_port_and_never_hand_out_one_keyword_twice(mariadb_url, tmp_path):
    store, all_ids = _filled(mariadb_url)
    server = ApiServer(mariadb_url, tmp_path / "api.log", args=["--workers", "2"])
    with server:
        assert len(_children(server.process.pid)) == 2
        # a connection a claim: the kernel hands connections to both workers
        results = claim_all([server], CLIENTS, headers={"Connection": "close"})
    assert server.process.returncode == 0
    _each_once(results, all_ids)
    rows = store.list_keywords()
    token = {kid: token for got, _ in results.values() for kid, token in got}
    assert {r["crawl_status"] for r in rows} == {"crawling"}
    assert {r["id"]: r["lease_token"] for r in rows} == token, "each row holds its one claim's token"
    log = server.log()
    assert "2 workers" in log and "Traceback" not in log
    stopped = STOPPED.findall(log)
    assert len(stopped) == 2 and all("keywords_claimed" in line for line in stopped), stopped
    store.engine.dispose()


def test_a_dead_worker_is_replaced_and_the_workers_stop_when_their_command_is_killed(sqlite_url, tmp_path):
    migrated(sqlite_url)
    server = ApiServer(sqlite_url, tmp_path / "api.log", args=["--workers", "2"]).start()
    command = server.process.pid
    try:
        first = _children(command)
        assert len(first) == 2
        os.kill(first[0], signal.SIGKILL)
        replaced = _until(lambda: [c for c in _children(command) if c not in first], "a new worker", 90)
        workers = [first[1], *replaced]
        with server.client() as http:
            # a new worker imports the whole app before it serves: tens of seconds on a loaded machine
            assert _until(lambda: len(STARTED.findall(server.log())) == 3, "the new worker serves", 90)
            for _ in range(4):
                assert http.post("/api/v1/keyword/available", json={"source": "boss"}).status_code == 200
        os.kill(command, signal.SIGKILL)
        server.process.wait(timeout=30)
        _until(lambda: all(_gone(pid) for pid in workers), "the workers stop")
    finally:
        server.stop()
    assert "worker 0" in server.log() and "SIGKILL" in server.log()
