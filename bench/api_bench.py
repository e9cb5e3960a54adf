"""Claims per second over HTTP: 8 client processes against one `farm api` on MariaDB, beside the
in-process figure (8 processes calling KeywordStore.claim) measured in the same run.

    .venv/bin/python -m bench.api_bench      # FARM_BENCH_MYSQL=mysql+pymysql://root@127.0.0.1:3306

Both run on 10,000 keywords in a throwaway database. Each client is farm's own (farm.api.client's
KeywordClient, as a crawler that is not Scrapy uses it), its connection kept alive; it
claims WARMUP_CLAIMS before the clock starts, then CLAIMS_PER_CLIENT keywords, ``batch`` a request
(``POST /api/v1/keyword/available`` with ``{"source": "boss", "limit": batch}``), one a request and then
claims_bench.CLAIM_BATCH a request, as in process; the rate is all keywords claimed over the wall
time from the start signal to the last client done. The server runs as `farm api` does by
default (one process, its access log on), on the same 2 cores as MariaDB and the clients; then,
on a fresh table, as `farm api --workers 2` (a server process a core).
"""

import multiprocessing
import os
import re
import secrets
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from bench import claims_bench
from bench.mariadb import mariadb_database
from farm.api.client import KeywordClient
from farm.state import KeywordStore
from farm.state.db import make_engine
from farm.state.migrate import upgrade

CLIENTS = 8
CLAIMS_PER_CLIENT = 256
WARMUP_CLAIMS = 10
KEYWORDS = 10_000
REPO = Path(__file__).resolve().parents[1]
SPAWN = multiprocessing.get_context("spawn")


def _client(url, token, worker, batch, ready, start, results):
    crawler = f"bench-{worker}"
    try:
        with KeywordClient(url, token=token, timeout=60, retries=0) as client:
            for _ in range(WARMUP_CLAIMS):
                client.claim("boss", crawler, limit=batch)
            ready.put(worker)
            start.wait()
            claimed = 0
            for _ in range(CLAIMS_PER_CLIENT // batch):
                claims, _ = client.claim("boss", crawler, limit=batch)
                claimed += len(claims)
        results.put((worker, claimed, time.monotonic(), None))
    except Exception as exc:  # reported by the parent
        results.put((worker, 0, time.monotonic(), repr(exc)))


def _serve(url: str, token: str, log, args=()) -> tuple[subprocess.Popen, str]:
    env = {**{k: v for k, v in os.environ.items() if not k.startswith("FARM_")}, "FARM_API_TOKEN": token}
    process = subprocess.Popen(
        [sys.executable, "-m", "farm", "--db-url", url, "api", "--port", "0", *args],
        cwd=REPO,
        env=env,
        stdout=log,
        stderr=subprocess.STDOUT,
        stdin=subprocess.DEVNULL,
    )
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        found = re.search(r"farm api listening on (http://\S+)", Path(log.name).read_text())
        if found:
            return process, found.group(1)
        if process.poll() is not None:
            raise RuntimeError(f"farm api exited with {process.returncode}: {Path(log.name).read_text()[-2000:]}")
        time.sleep(0.05)
    process.kill()
    raise RuntimeError("farm api did not start within 60s")


def _stop(process: subprocess.Popen) -> None:
    if process.poll() is None:
        process.send_signal(signal.SIGTERM)
        try:
            process.wait(timeout=15)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(timeout=15)


def measure_http(batches=claims_bench.BATCHES, args=()) -> dict[int, float]:
    """Keywords claimed per second over HTTP at KEYWORDS keywords, per claim size in ``batches``,
    from `farm api ARGS` (its defaults without)."""
    token = secrets.token_hex(16)
    with mariadb_database() as url, tempfile.NamedTemporaryFile("w+b", suffix=".log") as log:
        upgrade(url)
        engine = make_engine(url)
        claims_bench._fill(engine, KEYWORDS, KeywordStore(engine))
        engine.dispose()
        server, base = _serve(url, token, log, args)
        try:
            return {batch: _rate(base, token, batch) for batch in batches}
        finally:
            _stop(server)


def _rate(base: str, token: str, batch: int) -> float:
    """Keywords claimed per second by CLIENTS clients of the server at ``base``, ``batch`` a request."""
    return claims_bench.race(_client, (base, token), CLIENTS, batch, CLAIMS_PER_CLIENT)


def run() -> list[tuple[str, float, str]]:
    in_process, _, _ = claims_bench.measure(KEYWORDS)
    over_http = measure_http()
    two_workers = measure_http(args=("--workers", "2"))
    rows = []
    for batch in claims_bench.BATCHES:
        rows += [
            (
                f"claims/s in process, {claims_bench.PROCESSES} processes, {batch} a claim",
                in_process[batch],
                "claims/s",
            ),
            (f"claims/s over HTTP (farm api), {CLIENTS} clients, {batch} a claim", over_http[batch], "claims/s"),
            (f"ratio HTTP / in process, {batch} a claim", over_http[batch] / in_process[batch], "x"),
            (
                f"claims/s over HTTP (farm api --workers 2), {CLIENTS} clients, {batch} a claim",
                two_workers[batch],
                "claims/s",
            ),
            (f"ratio HTTP --workers 2 / in process, {batch} a claim", two_workers[batch] / in_process[batch], "x"),
        ]
    return rows


if __name__ == "__main__":
    results = run()
    width = max(len(name) for name, _, _ in results)
    print(f"{'measure':<{width}}  {'value':>10}  unit")
    for name, value, unit in results:
        print(f"{name:<{width}}  {value:>10.2f}  {unit}")
