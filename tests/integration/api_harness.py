"""A real `farm api` process for the API tests: started on a free port, stopped in a finally.

with ApiServer(url, clock=clock) as server:
    with server.client() as http:
        http.get("/api/v1/keyword/stats")
"""

import os
import random
import re
import secrets
import signal
import subprocess
import sys
import threading
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path
from zoneinfo import ZoneInfo

import httpx

REPO = Path(__file__).resolve().parents[2]
SHANGHAI = ZoneInfo("Asia/Shanghai")
TOKEN = f"test-token-{secrets.token_hex(12)}"
LISTENING = re.compile(r"farm api listening on (http://\S+)")
START_TIMEOUT = 30
STOP_TIMEOUT = 15
DEADLINE = 120  # seconds a client's claiming may take before its test gives up


class ServerClock:
    """The server's clock (``farm api --test-clock FILE``): the time in a file the test moves.
    Whole seconds, so MySQL DATETIME keeps them exactly."""

    def __init__(self, path: Path, now: datetime):
        self.path = path
        self.set(now)

    def __call__(self) -> datetime:
        return self.now

    def set(self, now: datetime) -> None:
        self.now = now.astimezone(UTC).replace(microsecond=0)
        tmp = self.path.with_suffix(".tmp")
        tmp.write_text(self.now.isoformat())
        os.replace(tmp, self.path)  # the server never reads half a time

    def set_local(self, y, m, d, hh, mm, ss=0) -> None:
        self.set(datetime(y, m, d, hh, mm, ss, tzinfo=SHANGHAI))

    def advance(self, **kw) -> None:
        self.set(self.now + timedelta(**kw))


class ApiServer:
    """``farm --db-url URL api --port 0 …`` as a child process, its output in a log file."""

    def __init__(
        self,
        db_url: str,
        log_path: Path,
        *,
        token: str | None = TOKEN,
        clock: ServerClock | None = None,
        env: dict | None = None,
        args=(),
        cwd: Path = REPO,
    ):
        self.db_url = db_url
        self.log_path = log_path
        self.token = token
        self.clock = clock
        self.env = env or {}
        self.args = list(args)
        self.cwd = cwd  # the Scrapy project whose settings the server reads (scrapy.cfg)
        self.process: subprocess.Popen | None = None
        self.url: str | None = None

    def command(self) -> list[str]:
        argv = [sys.executable, "-m", "farm", "--db-url", self.db_url, "api", "--port", "0", *self.args]
        if self.clock is not None:
            argv += ["--test-clock", str(self.clock.path)]
        return argv

    def environment(self) -> dict:
        env = {k: v for k, v in os.environ.items() if not k.startswith("FARM_")}
        if self.token is not None:
            env["FARM_API_TOKEN"] = self.token
        env.update(self.env)
        return env

    def start(self) -> "ApiServer":
        log = open(self.log_path, "wb")
        try:
            self.process = subprocess.Popen(
                self.command(),
                cwd=self.cwd,
                env=self.environment(),
                stdout=log,
                stderr=subprocess.STDOUT,
                stdin=subprocess.DEVNULL,
            )
        finally:
            log.close()
        deadline = time.monotonic() + START_TIMEOUT
        while time.monotonic() < deadline:
            found = LISTENING.search(self.log())
            if found:
                self.url = found.group(1)
                return self
            if self.process.poll() is not None:
                raise RuntimeError(f"farm api exited with {self.process.returncode}:\n{self.log()}")
            time.sleep(0.05)
        self.stop()
        raise RuntimeError(f"farm api did not listen within {START_TIMEOUT}s:\n{self.log()}")

    def stop(self) -> int | None:
        """SIGTERM (uvicorn's graceful stop), then SIGKILL if it hangs; the exit code."""
        if self.process is None:
            return None
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(timeout=STOP_TIMEOUT)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(timeout=STOP_TIMEOUT)
        return self.process.returncode

    def log(self) -> str:
        return self.log_path.read_text(encoding="utf-8", errors="replace") if self.log_path.exists() else ""

    def client(self, token: str | None = "default", headers: dict | None = None) -> httpx.Client:
        """An HTTP client of the server; with its token unless told otherwise (None: no token)."""
        token = self.token if token == "default" else token
        sent = {"Authorization": f"Bearer {token}"} if token else {}
        return httpx.Client(base_url=self.url, headers={**sent, **(headers or {})}, timeout=30)

    def __enter__(self) -> "ApiServer":
        return self.start()

    def __exit__(self, *exc):
        self.stop()


def run_farm_api(db_url: str, *args, env: dict | None = None, timeout: float = 30) -> subprocess.CompletedProcess:
    """`farm --db-url URL api ARGS` run to its end (for the commands that must refuse to start)."""
    base = {k: v for k, v in os.environ.items() if not k.startswith("FARM_")}
    return subprocess.run(
        [sys.executable, "-m", "farm", "--db-url", db_url, "api", *args],
        cwd=REPO,
        env={**base, **(env or {})},
        capture_output=True,
        text=True,
        timeout=timeout,
        stdin=subprocess.DEVNULL,
    )


def claim_until_empty(server, worker, start, results, headers=None):
    """Claim batches of 1..5 until nothing is left; an empty claim while others hold rows locked is no end."""
    rng = random.Random(worker)
    got, error = [], None
    try:
        with server.client(headers=headers) as http:
            start.wait(timeout=DEADLINE)
            deadline = time.monotonic() + DEADLINE
            while time.monotonic() < deadline:
                params = {"source": "boss", "limit": rng.randint(1, 5), "crawler_id": f"client-{worker}"}
                r = http.post("/api/v1/keyword/available", json=params)
                r.raise_for_status()
                answer = r.json()
                got.extend((k["id"], k["lease_token"]) for k in answer["keywords"])
                if not answer["keywords"] and answer["claimable"] == 0:
                    break
            else:
                error = "out of time"
    except Exception as exc:  # the test reports it
        error = repr(exc)
    results[worker] = (got, error)


def claim_all(servers: list, clients: int, headers: dict | None = None) -> dict:
    """``clients`` threads claiming until nothing is left, client w from ``servers[w % len(servers)]``,
    all started at once: {worker: (got, error)}; fails the test on a client out of time or in error."""
    start, results = threading.Event(), {}
    threads = [
        threading.Thread(target=claim_until_empty, args=(servers[w % len(servers)], w, start, results, headers))
        for w in range(clients)
    ]
    for t in threads:
        t.start()
    start.set()
    for t in threads:
        t.join(timeout=DEADLINE + 30)
    assert not any(t.is_alive() for t in threads)
    assert {w: error for w, (_, error) in results.items() if error} == {}
    return results
