"""farm's `scrapy crawl qcwy` (state, pipeline and all) against plain Scrapy, in one run.

All crawl the same keywords' pages from the same sandbox, as subprocesses with
the same concurrency; pages/s is Scrapy's own count of responses over its own
elapsed time. They alternate, and each keeps its best round, so that a noisy
neighbour does not decide the ratio.

Two baselines: plain Scrapy as it comes, and plain Scrapy with farm's
LeanProcess extension (the heap frozen at start, debug records not built),
which farm turns on for itself. The first ratio is what a user gains or loses
by crawling with farm; the second is what farm's own machinery (leases, page
progress, the postings pipeline, the state writer) costs. farm runs once on
SQLite (the embedded default) and once on the machine's MariaDB, whose server
shares the machine's two cores with the crawl and the sandbox.
"""

import json
import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path

from bench.mariadb import mariadb_database
from farm.sandbox.testing import SandboxProcess
from farm.state.db import make_engine
from farm.state.migrate import upgrade
from farm.state.store import KeywordStore

REPO = Path(__file__).resolve().parents[1]
CITIES = ("北京", "上海", "广州", "深圳", "杭州")
JOBS = ("python", "java", "前端", "测试", "运维", "产品经理", "数据分析", "算法")
# the same concurrency on both sides; farm's polite default pace is off for the local sandbox
COMMON = ["-s", "LOG_LEVEL=INFO", "-s", "CONCURRENT_REQUESTS=16", "-s", "CONCURRENT_REQUESTS_PER_DOMAIN=16",
          "-s", "FARM_QCWY_MAX_PAGES=40", "-s", "FARM_QCWY_RATE=0"]


def _pages_per_second(output):
    responses = int(re.search(r"'response_received_count': (\d+)", output).group(1))
    elapsed = float(re.search(r"'elapsed_time_seconds': ([\d.]+)", output).group(1))
    return responses, responses / elapsed


def _run(command, env):
    proc = subprocess.run(command, cwd=REPO, env=env, capture_output=True, text=True, timeout=600)
    if proc.returncode != 0:
        raise RuntimeError(f"{' '.join(command[:5])} failed:\n{proc.stderr[-3000:]}")
    return _pages_per_second(proc.stderr)


LEAN = ["-s", "EXTENSIONS=" + json.dumps({"farm.extensions.lean.LeanProcess": 0})]


def plain(sandbox_url, keywords, lean=False):
    env = dict(os.environ, FARM_QCWY_BASE_URL=sandbox_url)
    pairs = ",".join(f"{city}:{job}" for city, job in keywords)
    command = [sys.executable, "-m", "scrapy", "runspider", str(REPO / "bench/plain_qcwy.py"), "-a", f"keywords={pairs}"]
    return _run(command + COMMON + (LEAN if lean else []), env)


def farm(sandbox_url, keywords, db_url):
    upgrade(db_url)
    store = KeywordStore(make_engine(db_url))
    store.add_keywords([("qcwy", city, job) for city, job in keywords])
    store.engine.dispose()
    env = dict(os.environ, FARM_QCWY_BASE_URL=sandbox_url, FARM_DB_URL=db_url)
    return _run([sys.executable, "-m", "scrapy", "crawl", "qcwy"] + COMMON, env)


def run(rounds=3):
    keywords = [(city, job) for city in CITIES for job in JOBS]
    best_plain = best_lean = best_farm = best_mariadb = 0.0
    pages = 0
    with SandboxProcess(seed=9, postings=(800, 800)) as sandbox, tempfile.TemporaryDirectory() as tmp:
        for round_no in range(rounds):
            pages, rate = plain(sandbox.url, keywords)
            best_plain = max(best_plain, rate)
            _, rate = plain(sandbox.url, keywords, lean=True)
            best_lean = max(best_lean, rate)
            _, rate = farm(sandbox.url, keywords, f"sqlite:///{tmp}/farm-{round_no}.db")
            best_farm = max(best_farm, rate)
            with mariadb_database() as url:
                _, rate = farm(sandbox.url, keywords, url)
            best_mariadb = max(best_mariadb, rate)
    return [
        # the headline: like for like, both with LeanProcess; what farm's own machinery costs
        ("farm / plain Scrapy + LeanProcess (like for like, aim >= 0.9)", best_farm / best_lean, "ratio"),
        ("farm / plain Scrapy as it comes", best_farm / best_plain, "ratio"),
        ("farm on MariaDB / plain Scrapy + LeanProcess", best_mariadb / best_lean, "ratio"),
        (f"plain Scrapy, qcwy pages ({pages} per run, best of {rounds}, 16 at once)", best_plain, "pages/s"),
        ("plain Scrapy + farm's LeanProcess", best_lean, "pages/s"),
        ("farm `scrapy crawl qcwy`, SQLite state + pipeline", best_farm, "pages/s"),
        ("farm `scrapy crawl qcwy`, MariaDB state + pipeline", best_mariadb, "pages/s"),
    ]

if __name__ == "__main__":
    for name, value, unit in run():
        print(f"{name:<60} {value:>10.2f} {unit}")
