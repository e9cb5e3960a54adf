"""Pages a second through the sites' walls against the same crawl without them, side by side.

One sandbox per round (the same seed and postings), three crawls of the same 51job keywords in turn:
  walls      the sandbox's walls up: sessions earned in headless Chromium, pages fetched plain with them
  no walls   the same crawl with nothing in the way (the browser never starts)
  plain      no walls and FARM_IMPERSONATE="" (Scrapy's own HTTP client): what the browser's fingerprint costs
and then the first two again at a pace (PACE requests a second, forty times 51job's polite default, over
PACED_KEYWORDS keywords): what the walls cost a crawl that is not running flat out on two cores, where the
browser's passes have CPU to spare.
Each crawl is a real `scrapy crawl qcwy` into its own SQLite database; its rate is the pages it stored over its
time from start to exit (the browser's start included). The rounds alternate the order; the figures are
medians with the interval that holds the true median (bench.rounds). The browser pages a session costs come
from the crawls' own stats (farm/browser/pages over farm/session/earned), the browser's memory as the
largest PSS of its processes (farm/browser/rss_max). The sandbox counts the requests each connection carried
and the requests that are not the Chrome they claim (/_sandbox/identity). The CPU a crawl costs is read from
/proc while it runs (bench.walls_passes.TreeCpu), for its own process, its state writer, its browser's
processes (Chromium's and Playwright's driver) and the sandbox: on two cores, a crawl whose processes keep
near two cores busy is as fast as the machine lets it be.

    python -m bench.walls_bench [--rounds N] [--keywords N]
"""

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

from bench.rounds import median_interval
from bench.walls_passes import TreeCpu, cpu_seconds
from farm.sandbox.testing import SandboxProcess
from farm.sessions.memory import BROWSER_PROCESSES, _comm
from tests.e2e.harness import crawl_stat, fetched_pages, prepare_db, start_crawl, stop

CITIES = ("北京", "上海", "广州", "深圳")
JOBS = ("python", "java", "前端", "测试", "数据", "运维")
PAGES = 25  # per keyword: 500 postings each, so that a crawl runs long enough for its rate to settle
PACE = 20.0  # requests a second in the paced pair (FARM_QCWY_RATE): 51job's default is 0.5
PACED_KEYWORDS = 8  # 200 pages: ten seconds at PACE, three sessions of the bench's 60 uses


PROCESSES = {
    "crawl": "the crawl's process",
    "writer": "its state writer",
    "browser": "its browser's processes",
    "sandbox": "the sandbox",
}


def _cores(cpu: dict[str, float]) -> float:
    """The cores a crawl kept busy: its processes' CPU seconds and the sandbox's, over its time."""
    return sum(cpu.get(kind, 0.0) for kind in PROCESSES) / cpu["seconds"]


def _kind(pid: int) -> str:
    """What a process below the crawl is: its browser (Chromium's processes, Playwright's driver) or its state
    writer (the crawl's own process is the watch's root)."""
    return "browser" if _comm(pid).startswith(BROWSER_PROCESSES) else "writer"


def _crawl(sandbox, rows, folder: Path, name: str, **settings) -> dict:
    db = f"sqlite:///{folder / (name + '.db')}"
    prepare_db(db, rows)
    before = sum(fetched_pages(sandbox, "qcwy").values())
    sandbox_cpu = cpu_seconds(sandbox.proc.pid)
    log = folder / f"{name}.log"
    started = time.monotonic()
    process = start_crawl("qcwy", db, sandbox.url, log, FARM_QCWY_MAX_PAGES=PAGES, **settings)
    watch = TreeCpu(process.pid, lambda pid: "crawl" if pid == process.pid else _kind(pid))
    returncode = stop(process, 600)
    seconds = time.monotonic() - started
    cpu, sandbox_cpu = watch.stop(), cpu_seconds(sandbox.proc.pid) - sandbox_cpu
    output = log.read_text(errors="replace")
    if returncode != 0:
        raise RuntimeError(f"the {name} crawl failed:\n{output[-2000:]}")
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
        "sessions": crawl_stat(output, "farm/session/earned"),
        "browser_pages": crawl_stat(output, "farm/browser/pages"),
        "pss": crawl_stat(output, "farm/browser/rss_max"),
    }


def run(rounds: int = 3, keywords: int = 24, verbose: bool = False):
    every = [("qcwy", city, job) for city in CITIES for job in JOBS]
    rows = every[:keywords]
    rates = {"walls": [], "no walls": [], "plain": [], "paced walls": [], "paced no walls": []}
    per_connection = {"walls": [], "no walls": [], "plain": []}
    cpu: dict[str, list[dict[str, float]]] = {"walls": [], "no walls": [], "plain": []}
    sessions = browser_pages = pss = incoherent = 0
    with tempfile.TemporaryDirectory(prefix="farm-walls-bench-") as tmp:
        for r in range(rounds):
            order = ["walls", "no walls", "plain"] if r % 2 == 0 else ["plain", "no walls", "walls"]
            order += ["paced walls", "paced no walls"] if r % 2 == 0 else ["paced no walls", "paced walls"]
            for name in order:
                walls = True if name in ("walls", "paced walls") else None
                extra: dict = {"FARM_IMPERSONATE": ""} if name == "plain" else {}
                crawled = rows
                if name.startswith("paced"):
                    extra, crawled = {"FARM_QCWY_RATE": PACE}, every[:PACED_KEYWORDS]
                with SandboxProcess(seed=31, postings=(PAGES * 20, PAGES * 20), walls=walls) as sandbox:
                    result = _crawl(sandbox, crawled, Path(tmp), f"{name.replace(' ', '_')}{r}", **extra)
                rates[name].append(result["rate"])
                incoherent += result["incoherent"] if name != "plain" else 0
                if name.startswith("paced"):
                    if verbose:
                        print(
                            f"  round {r + 1} {name}: {result['rate']:.2f} pages/s ({result['pages']} pages)",
                            flush=True,
                        )
                    continue
                per_connection[name].append(result["per_connection"])
                cpu[name].append({**result["cpu"], "sandbox": result["sandbox_cpu"], "seconds": result["seconds"]})
                if name == "walls":
                    sessions += result["sessions"]
                    browser_pages += result["browser_pages"]
                    pss = max(pss, result["pss"])
                if verbose:
                    print(
                        f"  round {r + 1} {name}: {result['rate']:.1f} pages/s ({result['pages']} pages; CPU: "
                        + ", ".join(f"{kind} {spent:.2f} s" for kind, spent in sorted(result["cpu"].items()))
                        + f", the sandbox {result['sandbox_cpu']:.2f} s, in {result['seconds']:.2f} s)",
                        flush=True,
                    )
    walls_to_none = [w / n for w, n in zip(rates["walls"], rates["no walls"], strict=True)]
    paced = [w / n for w, n in zip(rates["paced walls"], rates["paced no walls"], strict=True)]
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
    rows_out += [
        (
            f"pages/s through the walls at {PACE:g} requests a second",
            statistics.median(rates["paced walls"]),
            "pages/s",
        ),
        (f"pages/s without walls at {PACE:g} requests a second", statistics.median(rates["paced no walls"]), "pages/s"),
        ("walls / no walls at that pace (median of paired rounds)", statistics.median(paced), "ratio"),
    ]
    if rounds >= 2:
        low, high, _ = median_interval(paced)
        rows_out += [("  its interval: low", low, "ratio"), ("  its interval: high", high, "ratio")]
    for name in ("walls", "no walls"):
        rows_out += [
            *(
                (f"CPU seconds, {name}: {PROCESSES[kind]}", statistics.median(c.get(kind, 0.0) for c in cpu[name]), "s")
                for kind in PROCESSES
            ),
            (f"CPU seconds a second, {name}: all of them", statistics.median(_cores(c) for c in cpu[name]), "cores"),
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
