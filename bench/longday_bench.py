"""A long day in one process: `scrapy crawl qcwy` of many pages over a 1M-row keyword table.

Builds a SQLite database at the current schema holding KEYWORDS qcwy keywords, all
crawled on an earlier day (the table on any day after the first); crawls PAGES pages
from the local sandbox in one process (CLOSESPIDER_PAGECOUNT), with bench.longday_probe
logging the crawl process's resident memory and CPU seconds, and its state writer
child's, every 10,000 pages. Reported: the crawl's memory growth from the 10,000th page
to the last, its CPU a page over the last 10,000 pages ÷ over the first 10,000, and the
wall time of `farm stats` and `farm doctor` on the table (each its own process).

    python -m bench.longday_bench [--pages 100000] [--keywords 1000000]
"""

import argparse
import re
import resource
import sqlite3
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from bench.crawl_bench import farm_command  # noqa: E402
from bench.longday_probe import EVERY  # noqa: E402
from farm.sandbox.testing import SandboxProcess  # noqa: E402
from farm.state.migrate import upgrade  # noqa: E402

PAGES = 100_000
KEYWORDS = 1_000_000
CITIES = ("北京", "上海", "广州", "深圳", "杭州", "天津", "重庆", "成都", "南京", "苏州", "武汉", "西安", "佛山")
BATCH = 100_000
PROBE = re.compile(r"longday pages=(\d+) rss=(\d+) cpu=([\d.]+) child_rss=(\d+) child_cpu=([\d.]+)")


def build(path: Path, keywords: int = KEYWORDS) -> float:
    """The keyword table of ``keywords`` rows, written with executemany; the seconds it took."""
    started = time.monotonic()
    upgrade(f"sqlite:///{path}")
    conn = sqlite3.connect(path)
    try:
        for low in range(0, keywords, BATCH):
            conn.executemany(
                "INSERT INTO keyword (source, city, job, last_requested_date, crawl_status, last_completed_page, "
                "jobs_found, blocked_claims, retry_count, lease_token, pages_ahead, created_at, updated_at) "
                "VALUES ('qcwy', ?, ?, '2026-01-01', 'completed', 40, 800, 0, 0, 1, '', "
                "'2026-01-01 08:00:00.000000', '2026-01-01 09:00:00.000000')",
                [(CITIES[n % len(CITIES)], f"job{n}") for n in range(low, min(low + BATCH, keywords))],
            )
        conn.commit()
    finally:
        conn.close()
    return time.monotonic() - started


def timed(command: list[str]) -> tuple[float, float]:
    """(wall seconds, CPU seconds) of a command, run as its own process."""
    cpu = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.monotonic()
    subprocess.run(command, cwd=ROOT, capture_output=True, text=True, timeout=600)
    wall = time.monotonic() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, after.ru_utime + after.ru_stime - cpu.ru_utime - cpu.ru_stime


def crawl(db_url: str, pages: int) -> list[tuple[int, int, float, int, float]]:
    """(pages, RSS, CPU s, writer RSS, writer CPU s) every EVERY pages of one crawl."""
    with SandboxProcess(seed=9, postings=(800, 800)) as sandbox:
        command, env = farm_command(sandbox.url, [], db_url)
        command += [
            "-s",
            f"CLOSESPIDER_PAGECOUNT={pages}",
            "-s",
            'EXTENSIONS={"bench.longday_probe.LongDayProbe": 0}',
        ]
        proc = subprocess.run(command, cwd=ROOT, env=env, capture_output=True, text=True, timeout=pages)
    if proc.returncode != 0:
        raise RuntimeError(f"the crawl failed:\n{proc.stderr[-3000:]}")
    samples = [
        tuple(int(v) if i != 2 and i != 4 else float(v) for i, v in enumerate(m)) for m in PROBE.findall(proc.stderr)
    ]
    if len(samples) < 2:
        raise RuntimeError(f"{len(samples)} samples of the crawl:\n{proc.stderr[-3000:]}")
    return samples


def run(pages: int = PAGES, keywords: int = KEYWORDS):
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "longday.db"
        db_url = f"sqlite:///{path}"
        built = build(path, keywords)
        farm = [sys.executable, "-m", "farm", "--db-url", db_url]
        stats, doctor = timed([*farm, "stats"]), timed([*farm, "doctor"])
        samples = crawl(db_url, pages)
    first, second, last, before_last = samples[0], samples[1], samples[-1], samples[-2]
    rows = [
        (f"a keyword table of {keywords:,} rows (SQLite, executemany)", built, "s"),
        (f"`farm stats` on {keywords:,} keywords (aim <= 1 s)", stats[0], "s"),
        ("  its CPU (this machine's load aside)", stats[1], "s"),
        (f"`farm doctor` on {keywords:,} keywords (aim <= 2 s)", doctor[0], "s"),
        ("  its CPU (this machine's load aside)", doctor[1], "s"),
    ]
    for at, rss, cpu, child_rss, child_cpu in samples:
        rows.append((f"  at page {at:,}: the crawl's RSS", rss / 2**20, "MiB"))
        rows.append(("    its CPU", cpu, "s"))
        rows.append(("    its state writer's RSS", child_rss / 2**20, "MiB"))
        rows.append(("    its state writer's CPU", child_cpu, "s"))
    first_cpu = first[2] / first[0]
    last_cpu = (last[2] - before_last[2]) / (last[0] - before_last[0])
    rows += [
        (f"crawl RSS growth, page {first[0]:,} to {last[0]:,} (aim <= 10 %)", 100 * (last[1] / first[1] - 1), "%"),
        (f"writer RSS growth, page {first[0]:,} to {last[0]:,}", 100 * (last[3] / max(first[3], 1) - 1), "%"),
        (f"crawl CPU a page, last {EVERY:,} ÷ first {EVERY:,} (aim <= 1.1)", last_cpu / first_cpu, "ratio"),
        (
            f"  the same, pages {second[0] - EVERY:,}-{second[0]:,} as the first",
            last_cpu / ((second[2] - first[2]) / (second[0] - first[0])),
            "ratio",
        ),
    ]
    return rows


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pages", type=int, default=PAGES)
    parser.add_argument("--keywords", type=int, default=KEYWORDS)
    args = parser.parse_args()
    for name, value, unit in run(args.pages, args.keywords):
        print(f"{name:<66} {value:>10.3f} {unit}", flush=True)
