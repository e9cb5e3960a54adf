"""Redis commands a keyword and a page: what farm's Redis mode costs the Redis server, counted by it.

Two `scrapy crawl qcwy` workers share FARM_REDIS_URL and a keyword table on the machine's MariaDB and
crawl the sandbox's keywords (at CONCURRENT_REQUESTS 16 and FARM_QCWY_RATE 0, farm's defaults else),
against a redis-server of the bench's own on a free port: its counters are the crawl's alone. Three
crawls, each on a new Redis and a new database: keywords of 8 pages (160 postings, 20 a page), the same
number of keywords of 1 page, and none (the two workers join, find nothing, and leave).

Counted per crawl, two ways:

- **executed**: every command the server ran, those inside scripts too (CONFIG RESETSTAT before the
  crawl, INFO commandstats after: the sum of the calls);
- **sent**: the commands the workers sent (an EVALSHA counts one, whatever its script runs): MONITOR's
  lines, less those it marks as run by a script.

With C0, C1, C8 a count of the crawls without keywords, of N keywords of 1 page and of N of 8 pages
(P1 and P8 pages fetched): a page beyond a keyword's own costs p = (C8 - C1) / (P8 - P1); a keyword's
claim, start and end k = (C1 - C0 - P1 p) / N; a page of the keywords of 8 pages, all the crawl costs
but the workers' join and leave, (C8 - C0) / P8; and, with those too, C8 / P8.
"""

from __future__ import annotations

import os
import re
import socket
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

import redis

from bench.mariadb import mariadb_database
from farm.sandbox.testing import SandboxProcess
from farm.state.db import make_engine
from farm.state.migrate import upgrade
from farm.state.store import KeywordStore

REPO = Path(__file__).resolve().parents[1]
CITIES = ("北京", "上海", "广州", "深圳")
SETTINGS = {
    "LOG_LEVEL": "INFO",
    "FARM_QCWY_RATE": 0,  # the sandbox is local: no politeness pace
    "CONCURRENT_REQUESTS": 16,
    "CONCURRENT_REQUESTS_PER_DOMAIN": 16,
}
# the bench's own commands, not the crawl's
OWN = {"cmdstat_config|resetstat", "cmdstat_info", "cmdstat_monitor", "cmdstat_flushall"}
MONITOR_LINE = re.compile(r'^[\d.]+ \[\d+ ([^\]]+)\] "')


@dataclass(frozen=True)
class Count:
    """One crawl's Redis commands, as the server counted them."""

    keywords: int
    pages: int  # fetched, as the sandbox served them
    executed: int  # every command, those inside scripts too (INFO commandstats)
    sent: int  # the commands the workers sent (MONITOR)


@dataclass(frozen=True)
class Figures:
    """What a keyword and a page cost (see the module docstring); ``count`` names the count used."""

    keyword: float  # a keyword's claim, start and end
    page: float  # a page beyond a keyword's own
    page_of_8: float  # a page of keywords of 8 pages, all but the workers' join and leave
    page_all_in: float  # the same with them


def figures(none: Count, one: Count, eight: Count, count: str) -> Figures:
    c0, c1, c8 = (getattr(crawl, count) for crawl in (none, one, eight))
    page = (c8 - c1) / (eight.pages - one.pages)
    keyword = (c1 - c0 - one.pages * page) / one.keywords
    return Figures(keyword, page, (c8 - c0) / eight.pages, c8 / eight.pages)


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


class RedisServer:
    """A redis-server of its own on a free port, no persistence; ``url``; stopped on exit."""

    def __enter__(self) -> RedisServer:
        port = free_port()
        self.port = port
        self.url = f"redis://127.0.0.1:{port}/0"
        self.process = subprocess.Popen(
            ["redis-server", "--port", str(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no"],
            stdout=subprocess.DEVNULL,
        )
        self.client = redis.Redis(port=port)
        deadline = time.monotonic() + 10
        while True:
            try:
                self.client.ping()
                return self
            except redis.ConnectionError:
                if time.monotonic() > deadline or self.process.poll() is not None:
                    self.__exit__()
                    raise RuntimeError(f"redis-server on port {port} did not answer") from None
                time.sleep(0.05)

    def __exit__(self, *exc) -> None:
        self.client.close()
        self.process.kill()
        self.process.wait()


def crawl(server: RedisServer, db_url: str, keywords: int, pages: int, workdir: Path, timeout: float = 600) -> Count:
    """``keywords`` qcwy keywords of ``pages`` pages each, crawled by two workers sharing ``server``
    (flushed first, its counters reset) and the new database ``db_url``; a crawl that does not end
    within ``timeout`` seconds is stopped, and fails."""
    upgrade(db_url)
    store = KeywordStore(make_engine(db_url))
    store.add_keywords([("qcwy", CITIES[i % len(CITIES)], f"job{i}") for i in range(keywords)])
    store.engine.dispose()
    server.client.flushall()
    server.client.config_resetstat()
    monitored = workdir / f"monitor-{keywords}x{pages}.txt"
    postings = pages * 20  # qcwy's sandbox pages hold 20 postings
    with SandboxProcess(seed=3, postings=(postings, postings)) as sandbox, open(monitored, "wb") as out:
        monitor = subprocess.Popen(["redis-cli", "-p", str(server.port), "monitor"], stdout=out)
        try:
            pings = _monitoring(server, monitored)
            names = ("worker0", "worker1")
            workers = [_worker(server.url, db_url, sandbox.url, name, workdir) for name in names]
            try:
                for name, worker in zip(names, workers):
                    if worker.wait(timeout) != 0:
                        log = (workdir / f"{name}.log").read_text()[-3000:]
                        raise RuntimeError(f"{name} failed:\n{log}")
            except subprocess.TimeoutExpired:
                raise RuntimeError(f"the crawl did not end by itself within {timeout}s") from None
            finally:
                for worker in workers:  # a worker that did not end is stopped here
                    if worker.poll() is None:
                        worker.kill()
                        worker.wait()
            fetched = sum(sandbox.counts().values())
        finally:
            monitor.terminate()
            monitor.wait()
    stats = server.client.info("commandstats")
    executed = sum(value["calls"] for name, value in stats.items() if name not in OWN) - pings
    lines = [MONITOR_LINE.match(line) for line in monitored.read_text(errors="replace").splitlines()]
    sent = sum(1 for line in lines if line and line.group(1) != "lua") - pings
    return Count(keywords, fetched, executed, sent)


def _monitoring(server: RedisServer, monitored: Path) -> int:
    """Wait until MONITOR shows a command (the crawl's first is then counted); the PINGs it took."""
    deadline, pings = time.monotonic() + 10, 0
    while b'"PING"' not in monitored.read_bytes():
        if time.monotonic() > deadline:
            raise RuntimeError("redis-cli monitor did not start")
        server.client.ping()
        pings += 1
        time.sleep(0.05)
    return pings


def _worker(redis_url: str, db_url: str, sandbox_url: str, name: str, workdir: Path) -> subprocess.Popen:
    env = dict(os.environ, FARM_DB_URL=db_url, FARM_QCWY_BASE_URL=sandbox_url, FARM_REDIS_URL=redis_url)
    env.update(FARM_REDIS_PREFIX="farm", FARM_CRAWLER_ID=name)
    command = [sys.executable, "-m", "scrapy", "crawl", "qcwy"]
    for setting, value in SETTINGS.items():
        command += ["-s", f"{setting}={value}"]
    log = open(workdir / f"{name}.log", "ab")
    return subprocess.Popen(command, cwd=REPO, env=env, stdout=log, stderr=log)


def measure(keywords: int = 40, timeout: float = 600) -> tuple[Count, Count, Count]:
    """The three crawls (none, ``keywords`` of 1 page, ``keywords`` of 8 pages), each on a new database."""
    counts = []
    with RedisServer() as server, tempfile.TemporaryDirectory() as tmp:
        for n, pages in ((0, 8), (keywords, 1), (keywords, 8)):
            with mariadb_database() as db_url:
                counts.append(crawl(server, db_url, n, pages, Path(tmp), timeout))
    return counts[0], counts[1], counts[2]


def run(keywords: int = 40):
    none, one, eight = measure(keywords)
    executed, sent = figures(none, one, eight, "executed"), figures(none, one, eight, "sent")
    return [
        ("a keyword's claim, start and end, executed (aim <= 20)", executed.keyword, "commands"),
        ("a page of keywords of 8 pages, executed (aim <= 6)", executed.page_of_8, "commands"),
        ("  with the workers' join and leave", executed.page_all_in, "commands"),
        ("  a page beyond a keyword's own", executed.page, "commands"),
        ("a keyword's claim, start and end, sent", sent.keyword, "commands"),
        ("a page of keywords of 8 pages, sent", sent.page_of_8, "commands"),
        ("two workers' join and leave, executed", none.executed, "commands"),
    ]


if __name__ == "__main__":
    for name, value, unit in run(int(sys.argv[1]) if len(sys.argv) > 1 else 40):
        print(f"{name:<62} {value:>9.2f} {unit}")
