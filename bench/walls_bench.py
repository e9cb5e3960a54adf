"""Pages a second through the sites' walls against the same crawl without them, side by side.

One sandbox per round (the same seed and postings), three crawls of the same 51job keywords in turn:
  walls      the sandbox's walls up: sessions earned in headless Chromium, pages fetched plain with them
  no walls   the same crawl with nothing in the way (the browser never starts)
  plain      no walls and FARM_IMPERSONATE="" (Scrapy's own HTTP client): what the browser's fingerprint costs
Each crawl is a real `scrapy crawl qcwy` into its own SQLite database; its rate is the pages it stored over its
time from start to exit (the browser's start included). The rounds alternate the order; the figures are
medians with the interval that holds the true median (bench.rounds). The browser pages a session costs come
from the crawls' own stats (farm/browser/pages over farm/session/earned), the browser's memory as the
largest PSS of its processes (farm/browser/rss_max). The sandbox counts the requests each connection carried
and the requests that are not the Chrome they claim (/_sandbox/identity). The CPU a crawl costs is its process's
and every process below it (Playwright's driver, Chromium's processes: each reaped by its parent, so counted in
the bench's RUSAGE_CHILDREN once the crawl has exited), and the sandbox's (/proc): on two cores, a crawl whose
CPU seconds are more than twice its time is as fast as the machine lets it be.

    python -m bench.walls_bench [--rounds N] [--keywords N]
"""

import argparse
import resource
import statistics
import sys
import tempfile
import time
from pathlib import Path

from bench.rounds import median_interval
from bench.walls_passes import cpu_seconds
from farm.sandbox.testing import SandboxProcess
from tests.e2e.harness import crawl_stat, fetched_pages, prepare_db, run_crawl

CITIES = ("北京", "上海", "广州", "深圳")
JOBS = ("python", "java", "前端", "测试", "数据", "运维")
PAGES = 25  # per keyword: 500 postings each, so that a crawl runs long enough for its rate to settle


def _cpu_of_children() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def _crawl(sandbox, rows, folder: Path, name: str, **settings) -> dict:
    db = f"sqlite:///{folder / (name + '.db')}"
    prepare_db(db, rows)
    before = sum(fetched_pages(sandbox, "qcwy").values())
    cpu, sandbox_cpu = _cpu_of_children(), cpu_seconds(sandbox.proc.pid)
    started = time.monotonic()
    crawl = run_crawl("qcwy", db, sandbox.url, timeout=600, FARM_QCWY_MAX_PAGES=PAGES, **settings)
    seconds = time.monotonic() - started
    cpu, sandbox_cpu = _cpu_of_children() - cpu, cpu_seconds(sandbox.proc.pid) - sandbox_cpu
    if crawl.returncode != 0:
        raise RuntimeError(f"the {name} crawl failed:\n{crawl.output[-2000:]}")
    pages = sum(fetched_pages(sandbox, "qcwy").values()) - before
    seen = sandbox.identity()  # the sandbox's reading of each request: coherent? on which connection?
    return {
        "per_connection": seen["requests_per_connection"],
        "incoherent": seen["incoherent"],
        "rate": pages / seconds,
        "cpu": cpu,
        "sandbox_cpu": sandbox_cpu,
        "seconds": seconds,
        "pages": pages,
        "sessions": crawl_stat(crawl.output, "farm/session/earned"),
        "browser_pages": crawl_stat(crawl.output, "farm/browser/pages"),
        "pss": crawl_stat(crawl.output, "farm/browser/rss_max"),
    }


def run(rounds: int = 3, keywords: int = 24, verbose: bool = False):
    rows = [("qcwy", city, job) for city in CITIES for job in JOBS][:keywords]
    rates = {"walls": [], "no walls": [], "plain": []}
    per_connection = {"walls": [], "no walls": [], "plain": []}
    cpu: dict[str, list[tuple[float, float, float]]] = {"walls": [], "no walls": [], "plain": []}
    sessions = browser_pages = pss = incoherent = 0
    with tempfile.TemporaryDirectory(prefix="farm-walls-bench-") as tmp:
        for r in range(rounds):
            order = ["walls", "no walls", "plain"] if r % 2 == 0 else ["plain", "no walls", "walls"]
            for name in order:
                walls = True if name == "walls" else None
                with SandboxProcess(seed=31, postings=(PAGES * 20, PAGES * 20), walls=walls) as sandbox:
                    extra = {"FARM_IMPERSONATE": ""} if name == "plain" else {}
                    result = _crawl(sandbox, rows, Path(tmp), f"{name.replace(' ', '_')}{r}", **extra)
                rates[name].append(result["rate"])
                per_connection[name].append(result["per_connection"])
                cpu[name].append((result["cpu"], result["sandbox_cpu"], result["seconds"]))
                incoherent += result["incoherent"] if name != "plain" else 0
                if name == "walls":
                    sessions += result["sessions"]
                    browser_pages += result["browser_pages"]
                    pss = max(pss, result["pss"])
                if verbose:
                    print(
                        f"  round {r + 1} {name}: {result['rate']:.1f} pages/s ({result['pages']} pages; CPU "
                        f"{result['cpu']:.2f} s the crawl and its browser, {result['sandbox_cpu']:.2f} s the "
                        f"sandbox, in {result['seconds']:.2f} s)",
                        flush=True,
                    )
    walls_to_none = [w / n for w, n in zip(rates["walls"], rates["no walls"], strict=True)]
    fingerprint = [n / p for n, p in zip(rates["no walls"], rates["plain"], strict=True)]
    rows_out = [
        (
            f"pages/s through the walls ({keywords} keywords x {PAGES} pages)",
            statistics.median(rates["walls"]),
            "pages/s",
        ),
        ("pages/s without walls, the same crawl", statistics.median(rates["no walls"]), "pages/s"),
        ("pages/s without walls, Scrapy's own client", statistics.median(rates["plain"]), "pages/s"),
        ("walls / no walls (median of paired rounds)", statistics.median(walls_to_none), "ratio"),
    ]
    if rounds >= 2:
        low, high, _ = median_interval(walls_to_none)
        rows_out += [("  its interval: low", low, "ratio"), ("  its interval: high", high, "ratio")]
    for name in ("walls", "no walls"):
        rows_out += [
            (f"CPU seconds, {name}: the crawl and its browser", statistics.median(c for c, _, _ in cpu[name]), "s"),
            (f"CPU seconds, {name}: the sandbox", statistics.median(s for _, s, _ in cpu[name]), "s"),
            (f"CPU seconds a second, {name}: both", statistics.median((c + s) / t for c, s, t in cpu[name]), "cores"),
        ]
    rows_out += [
        ("browser fingerprint / Scrapy's client, no walls", statistics.median(fingerprint), "ratio"),
        ("sessions earned through the walls, all rounds", sessions, "sessions"),
        ("browser pages a session costs", browser_pages / sessions if sessions else 0.0, "pages"),
        ("the browser's memory, largest (PSS of its processes)", pss / 2**20, "MiB"),
        ("requests a connection, through the walls", statistics.median(per_connection["walls"]), "requests"),
        ("requests a connection, no walls", statistics.median(per_connection["no walls"]), "requests"),
        ("requests a connection, Scrapy's own client", statistics.median(per_connection["plain"]), "requests"),
        ("requests not the Chrome they claim, all rounds", incoherent, "requests"),
    ]
    return rows_out


def main(argv):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--keywords", type=int, default=24)
    args = parser.parse_args(argv)
    for name, value, unit in run(args.rounds, args.keywords, verbose=True):
        print(f"  {name:<60} {value:>11.{3 if unit == 'ratio' else 2}f}  {unit}", flush=True)


if __name__ == "__main__":
    main(sys.argv[1:])
