"""The JOBDIR checkpoint: what a save costs as the queue grows, and what JOBDIR costs a crawl.

1. Save time. A checkpoint holding 1,000, 10,000 and 100,000 pending page requests
   (50 pages a keyword), then ticks after a small change each (10 pages queued, 10
   recorded): the median tick, which must not grow with the queue. The first save of
   the whole queue is shown too (a crawl never makes one that large at once: it
   notes pages as they are asked for).
2. Crawl pages/s on the same sandbox pages, alternating, best of each: farm without
   JOBDIR, farm with JOBDIR (its checkpoint, FARM_CHECKPOINT_INTERVAL 1 s), and plain
   Scrapy with Scrapy's own JOBDIR (disk queues and requests.seen).
"""

import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

from bench.crawl_bench import CITIES, COMMON, JOBS, REPO, _run
from farm.crawl.backends.checkpoint import open_checkpoint
from farm.sandbox.testing import SandboxProcess
from farm.state.db import make_engine
from farm.state.migrate import upgrade
from farm.state.store import KeywordStore

SIZES = (1_000, 10_000, 100_000)
PAGES_PER_LEASE = 50
TICKS = 30


def save_times(size: int, directory: Path) -> tuple[float, float]:
    """(the first save of ``size`` pending pages in ms, the median tick after a small change in µs)."""
    checkpoint = open_checkpoint(directory, "qcwy", "2026-12-01", "bench:1")
    leases = size // PAGES_PER_LEASE
    for kid in range(leases):
        checkpoint.hold((kid, 1))
        for page in range(1, PAGES_PER_LEASE + 1):
            checkpoint.queued((kid, 1), page)
    started = time.perf_counter()
    checkpoint.flush()
    first = (time.perf_counter() - started) * 1000
    ticks = []
    for tick in range(TICKS):
        for i in range(10):  # pages of other keywords asked for, and as many recorded
            checkpoint.queued((tick * 10 + i, 1), PAGES_PER_LEASE + 1)
            checkpoint.settled((tick * 10 + i, 1), 1)
        started = time.perf_counter()
        checkpoint.flush()
        ticks.append((time.perf_counter() - started) * 1_000_000)
    checkpoint.file.close()
    return first, statistics.median(ticks)


def farm(sandbox_url, keywords, db_url, jobdir=None):
    upgrade(db_url)
    store = KeywordStore(make_engine(db_url))
    store.add_keywords([("qcwy", city, job) for city, job in keywords])
    store.engine.dispose()
    env = dict(os.environ, FARM_QCWY_BASE_URL=sandbox_url, FARM_DB_URL=db_url)
    extra = ["-s", f"JOBDIR={jobdir}"] if jobdir else []
    return _run([sys.executable, "-m", "scrapy", "crawl", "qcwy"] + COMMON + extra, env)


def plain_jobdir(sandbox_url, keywords, jobdir):
    env = dict(os.environ, FARM_QCWY_BASE_URL=sandbox_url)
    pairs = ",".join(f"{city}:{job}" for city, job in keywords)
    command = [
        sys.executable,
        "-m",
        "scrapy",
        "runspider",
        str(REPO / "bench/plain_qcwy.py"),
        "-a",
        f"keywords={pairs}",
        "-s",
        f"JOBDIR={jobdir}",
    ]
    return _run(command + COMMON, env)


def run(rounds=3):
    results = []
    with tempfile.TemporaryDirectory() as tmp:
        firsts, ticks = {}, {}
        for size in SIZES:
            firsts[size], ticks[size] = save_times(size, Path(tmp) / f"saves-{size}")
        for size in SIZES:
            results.append((f"checkpoint tick after a small change, {size:,} pending", ticks[size], "µs"))
        growth = ticks[SIZES[-1]] / ticks[SIZES[0]]
        results.append(("  tick at 100,000 / tick at 1,000 (aim: about 1)", growth, "ratio"))
        for size in SIZES:
            results.append((f"first save of the whole queue, {size:,} pending", firsts[size], "ms"))

    keywords = [(city, job) for city in CITIES for job in JOBS]
    best = {"farm": 0.0, "farm_jobdir": 0.0, "plain_jobdir": 0.0}
    pages = 0
    with SandboxProcess(seed=9, postings=(800, 800)) as sandbox, tempfile.TemporaryDirectory() as tmp:
        for round_no in range(rounds):
            _, rate = farm(sandbox.url, keywords, f"sqlite:///{tmp}/farm-{round_no}.db")
            best["farm"] = max(best["farm"], rate)
            db_url, jobdir = f"sqlite:///{tmp}/farm-job-{round_no}.db", f"{tmp}/job-{round_no}"
            pages, rate = farm(sandbox.url, keywords, db_url, jobdir)
            best["farm_jobdir"] = max(best["farm_jobdir"], rate)
            _, rate = plain_jobdir(sandbox.url, keywords, f"{tmp}/plain-job-{round_no}")
            best["plain_jobdir"] = max(best["plain_jobdir"], rate)
    results += [
        ("farm with JOBDIR / farm without (aim >= 0.9)", best["farm_jobdir"] / best["farm"], "ratio"),
        ("farm with JOBDIR / plain Scrapy with its own JOBDIR", best["farm_jobdir"] / best["plain_jobdir"], "ratio"),
        (f"farm `scrapy crawl qcwy`, no JOBDIR ({pages} pages, best of {rounds})", best["farm"], "pages/s"),
        ("farm `scrapy crawl qcwy -s JOBDIR=…` (the checkpoint)", best["farm_jobdir"], "pages/s"),
        ("plain Scrapy with Scrapy's JOBDIR (disk queues, requests.seen)", best["plain_jobdir"], "pages/s"),
    ]
    return results


if __name__ == "__main__":
    for name, value, unit in run():
        print(f"{name:<60} {value:>10.2f} {unit}")
