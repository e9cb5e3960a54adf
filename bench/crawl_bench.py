"""farm's `scrapy crawl qcwy` (state, pipeline and all) against plain Scrapy, in one run.

All crawl the same keywords' pages from the same sandbox, as subprocesses with
the same concurrency; pages/s is Scrapy's own count of responses over its own
elapsed time. They run in rounds, one of each side a round, in an order that
turns each round (ABBA), so that a side is not always the one that follows a
long run. A ratio is taken within each round, from runs seconds apart, and the
median of the rounds' ratios is the figure: this machine's speed drifts by a
fifth from one minute to the next, and a best run on either side (the best of
each side is shown too) is as much luck as speed. The headline also says where
its median lies (bench.rounds): five rounds place it within a tenth or so, too
wide to settle an aim near it; ``python -m bench.variants --rounds 30`` is closer.

Four baselines, all plain Scrapy:
- as it comes (Scrapy's own CONCURRENT_ITEMS of 100): what a user gains or
  loses by crawling with farm;
- with what farm tunes in Scrapy for itself, its LeanProcess extension (the heap
  frozen at start, debug records not built) and its CONCURRENT_ITEMS (8: Scrapy
  starts that many tasks, plus one, for every response's output): what farm's
  own machinery (leases, page progress, the postings pipeline, the state
  writer) costs, like for like;
- that one writing its postings to a JSON lines feed (Scrapy's FEEDS): what a
  plain Scrapy user who keeps the postings pays, in the cheapest form Scrapy
  offers (a file: nothing exactly once, nothing resumable);
- with LeanProcess at Scrapy's own CONCURRENT_ITEMS (100): a less strict
  like-for-like baseline, which leaves farm what its own CONCURRENT_ITEMS
  gains.

And four sides of farm: on SQLite (the embedded default); on the machine's
MariaDB, whose server shares the two cores with the crawl and the sandbox; on
SQLite with its postings reported handled but never stored (bench.unstored), so
that what is left is its per-page machinery; and with Scrapy's CONCURRENT_ITEMS,
to show what farm's setting is worth.
"""

import csv
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

from bench.mariadb import mariadb_database
from bench.rounds import median_interval
from farm.sandbox.testing import SandboxProcess

REPO = Path(__file__).resolve().parents[1]
CITIES = ("北京", "上海", "广州", "深圳", "杭州")
JOBS = ("python", "java", "前端", "测试", "运维", "产品经理", "数据分析", "算法")
# the same concurrency on both sides (CONCURRENT_ITEMS: farm's project setting, unless a side
# sets Scrapy's); farm's polite default pace is off for the local sandbox
COMMON = [
    "-s",
    "LOG_LEVEL=INFO",
    "-s",
    "CONCURRENT_REQUESTS=16",
    "-s",
    "CONCURRENT_REQUESTS_PER_DOMAIN=16",
    "-s",
    "FARM_QCWY_MAX_PAGES=40",
    "-s",
    "FARM_QCWY_RATE=0",
]


def _pages_per_second(output):
    """(responses, pages/s) of a crawl, from Scrapy's own stats in its log."""
    responses = int(re.search(r"'response_received_count': (\d+)", output).group(1))
    elapsed = float(re.search(r"'elapsed_time_seconds': ([\d.]+)", output).group(1))
    return responses, responses / elapsed


def _run(command, env, cwd=REPO):
    return _pages_per_second(crawl_output(command, env, cwd))


def crawl_output(command, env, cwd=REPO) -> str:
    """What a crawl run in ``cwd`` (farm's code is imported from there) wrote to stderr (its
    log), once it has ended well."""
    proc = subprocess.run(command, cwd=cwd, env=env, capture_output=True, text=True, timeout=600)
    if proc.returncode != 0:
        raise RuntimeError(f"{' '.join(command[:5])} failed:\n{proc.stderr[-3000:]}")
    return proc.stderr


LEAN = {"farm.extensions.lean.LeanProcess": 0}  # plain Scrapy's EXTENSIONS, tuned as farm tunes it
SCRAPY_ITEMS = ["-s", "CONCURRENT_ITEMS=100"]  # Scrapy's default


def plain(sandbox_url, keywords, lean=False, feed=None, cwd=REPO, scrapy_items=None):
    """Plain Scrapy's pages/s: as it comes, or with farm's tuning of Scrapy (lean), and writing
    its postings to a JSON lines file (feed) or not; farm's code from ``cwd``."""
    return _run(*plain_command(sandbox_url, keywords, lean, feed, scrapy_items=scrapy_items), cwd)


def plain_command(sandbox_url, keywords, lean=False, feed=None, extensions=None, scrapy_items=None):
    """The command and environment of a plain Scrapy crawl (``extensions``: more EXTENSIONS).
    Lean, it runs at farm's CONCURRENT_ITEMS, as it comes at Scrapy's; ``scrapy_items`` says
    which, whatever ``lean`` is (lean at Scrapy's: the less strict like-for-like baseline,
    which leaves farm what its own CONCURRENT_ITEMS gains)."""
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
    ]
    if feed is not None:
        command += [
            "-s",
            "FEEDS=" + json.dumps({str(feed): {"format": "jsonlines", "encoding": "utf-8", "overwrite": True}}),
        ]
    extensions = {**(LEAN if lean else {}), **(extensions or {})}
    if extensions:
        command += ["-s", "EXTENSIONS=" + json.dumps(extensions)]
    if scrapy_items is None:
        scrapy_items = not lean
    return command + COMMON + (SCRAPY_ITEMS if scrapy_items else []), env


# farm's pipeline minus the storing (bench/unstored.py), in place of farm's own
UNSTORED = [
    "-s",
    "ITEM_PIPELINES="
    + json.dumps({"bench.unstored.UnstoredPostingsPipeline": 300, "farm.pipelines.sql.SqlPostingsPipeline": None}),
]


def farm(sandbox_url, keywords, db_url, extra=(), cwd=REPO):
    return _run(*farm_command(sandbox_url, keywords, db_url, extra, cwd), cwd)


def farm_command(sandbox_url, keywords, db_url, extra=(), cwd=REPO):
    """The command and environment of farm's crawl of ``keywords``, added to a new state database
    by the `farm` command of the tree ``cwd`` (a tree at another commit has its own migrations)."""
    with tempfile.NamedTemporaryFile("w", suffix=".csv", newline="") as file:
        csv.writer(file).writerows([("source", "city", "job"), *(("qcwy", city, job) for city, job in keywords)])
        file.flush()
        for args in (["db", "upgrade"], ["keywords", "import", file.name]):
            proc = subprocess.run(
                [sys.executable, "-m", "farm", "--db-url", db_url, *args], cwd=cwd, capture_output=True, text=True
            )
            if proc.returncode != 0:
                raise RuntimeError(f"farm {' '.join(args)} in {cwd} failed:\n{proc.stderr[-3000:]}")
    env = dict(os.environ, FARM_QCWY_BASE_URL=sandbox_url, FARM_DB_URL=db_url)
    return [sys.executable, "-m", "scrapy", "crawl", "qcwy"] + COMMON + list(extra), env


def run(rounds=5):
    keywords = [(city, job) for city in CITIES for job in JOBS]
    pages = 0
    with SandboxProcess(seed=9, postings=(800, 800)) as sandbox, tempfile.TemporaryDirectory() as tmp:
        sides = {
            "plain": lambda round_no: plain(sandbox.url, keywords),
            "lean": lambda round_no: plain(sandbox.url, keywords, lean=True),
            "lean_as_filed": lambda round_no: plain(sandbox.url, keywords, lean=True, scrapy_items=True),
            "feed": lambda round_no: plain(sandbox.url, keywords, lean=True, feed=Path(tmp) / "postings.jsonl"),
            "farm": lambda round_no: farm(sandbox.url, keywords, f"sqlite:///{tmp}/farm-{round_no}.db"),
            "mariadb": lambda round_no: _on_mariadb(sandbox.url, keywords),
            "unstored": lambda round_no: farm(
                sandbox.url, keywords, f"sqlite:///{tmp}/unstored-{round_no}.db", UNSTORED
            ),
            "scrapy_items": lambda round_no: farm(
                sandbox.url, keywords, f"sqlite:///{tmp}/items-{round_no}.db", SCRAPY_ITEMS
            ),
        }
        rates = {side: [] for side in sides}
        for round_no in range(rounds):
            for side in sides if round_no % 2 == 0 else reversed(sides):
                pages, rate = sides[side](round_no)
                rates[side].append(rate)

    def ratios(side, baseline):  # each round's
        return [a / b for a, b in zip(rates[side], rates[baseline])]

    def ratio(side, baseline):  # the median of the rounds' ratios
        return statistics.median(ratios(side, baseline))

    def where(side, baseline):  # where the median of the rounds' ratios lies
        if rounds < 2:
            return []
        low, high, coverage = median_interval(ratios(side, baseline))
        return [
            (f"  where that median lies, {coverage:.1%} sure (bench.rounds): from", low, "ratio"),
            ("  to", high, "ratio"),
        ]

    return [
        # the headline: like for like, both with LeanProcess; what farm's own machinery costs
        (
            f"farm / plain Scrapy + LeanProcess (like for like, aim >= 0.9; median of {rounds} rounds)",
            ratio("farm", "lean"),
            "ratio",
        ),
        *where("farm", "lean"),
        ("  the same, best farm run / best plain + LeanProcess run", max(rates["farm"]) / max(rates["lean"]), "ratio"),
        (
            "farm / plain Scrapy + LeanProcess at Scrapy's CONCURRENT_ITEMS (100)",
            ratio("farm", "lean_as_filed"),
            "ratio",
        ),
        *where("farm", "lean_as_filed"),
        ("farm / plain Scrapy as it comes", ratio("farm", "plain"), "ratio"),
        ("farm / plain Scrapy + LeanProcess writing a JSON lines feed", ratio("farm", "feed"), "ratio"),
        ("farm / farm with Scrapy's CONCURRENT_ITEMS (100)", ratio("farm", "scrapy_items"), "ratio"),
        ("farm on MariaDB / plain Scrapy + LeanProcess", ratio("mariadb", "lean"), "ratio"),
        (
            "farm, its postings not stored / plain Scrapy + LeanProcess (per-page machinery)",
            ratio("unstored", "lean"),
            "ratio",
        ),
        (
            f"plain Scrapy, qcwy pages ({pages} per run, median of {rounds}, 16 at once)",
            statistics.median(rates["plain"]),
            "pages/s",
        ),
        ("plain Scrapy + farm's LeanProcess and CONCURRENT_ITEMS", statistics.median(rates["lean"]), "pages/s"),
        (
            "plain Scrapy + farm's LeanProcess, Scrapy's CONCURRENT_ITEMS",
            statistics.median(rates["lean_as_filed"]),
            "pages/s",
        ),
        ("  the same, writing its postings to a JSON lines feed", statistics.median(rates["feed"]), "pages/s"),
        ("farm `scrapy crawl qcwy`, SQLite state + pipeline", statistics.median(rates["farm"]), "pages/s"),
        ("farm `scrapy crawl qcwy`, MariaDB state + pipeline", statistics.median(rates["mariadb"]), "pages/s"),
        ("farm `scrapy crawl qcwy`, postings not stored", statistics.median(rates["unstored"]), "pages/s"),
        ("farm `scrapy crawl qcwy`, Scrapy's CONCURRENT_ITEMS", statistics.median(rates["scrapy_items"]), "pages/s"),
    ]


def _on_mariadb(sandbox_url, keywords):
    with mariadb_database() as url:
        return farm(sandbox_url, keywords, url)


if __name__ == "__main__":
    for name, value, unit in run():
        print(f"{name:<60} {value:>10.2f} {unit}")
