"""Where farm's crawl spends its core beyond plain Scrapy's: each part of farm, timed inside the crawl.

``python -m bench.crawl_breakdown [rounds]``. The crawl benchmark's two like-for-like
sides (plain Scrapy + LeanProcess, and farm on SQLite) crawl the same pages, each with
bench.component_times timing its parts; per part, the median of the rounds. It says
which of farm's parts cost what, in the crawl, at the crawl's own speed: the crawl
benchmark can only say how much they cost together. Not part of `make bench`: the
timers themselves add a little to each part (about a microsecond a call).
"""

import json
import re
import statistics
import sys
import tempfile

from bench.crawl_bench import CITIES, JOBS, crawl_output, farm_command, plain_command
from farm.addon import EXTENSIONS
from farm.sandbox.testing import SandboxProcess

TIMES = {"bench.component_times.ComponentTimes": 1000}
# What both sides do, each in its own place: the parse; farm decodes a page's JSON in its
# block check, builds a page's request in page_request and signs it as it goes out, where
# plain Scrapy does all three in its spider (only the parse and the decoding timed there).
SHARED = {
    "QcwySpider.parse_page",
    "parsing.response_json",
    "RequestSigningMiddleware.process_request",
    "LeaseSpider.page_request",
}


def _times(output: str) -> dict:
    return json.loads(re.search(r"component-times (.*)", output).group(1))


def _median(runs: list[dict], part: str, of: int) -> float:
    """The median over ``runs`` of a part's seconds (of=0) or calls (of=1); 0 where it did not run."""
    return statistics.median(times["parts"].get(part, [0, 0])[of] for times in runs)


def run(rounds=3):
    keywords = [(city, job) for city in CITIES for job in JOBS]
    plain_runs, farm_runs = [], []
    with SandboxProcess(seed=9, postings=(800, 800)) as sandbox, tempfile.TemporaryDirectory() as tmp:
        for round_no in range(rounds):
            plain_runs.append(_times(crawl_output(*plain_command(sandbox.url, keywords, lean=True, extensions=TIMES))))
            extra = ["-s", "EXTENSIONS=" + json.dumps({**EXTENSIONS, **TIMES})]
            db_url = f"sqlite:///{tmp}/farm-{round_no}.db"
            farm_runs.append(_times(crawl_output(*farm_command(sandbox.url, keywords, db_url, extra))))
    plain_cpu = statistics.median(times["cpu"] for times in plain_runs)
    farm_cpu = statistics.median(times["cpu"] for times in farm_runs)
    rows = [
        ("crawl thread CPU, plain Scrapy + LeanProcess", plain_cpu, "s"),
        ("crawl thread CPU, farm", farm_cpu, "s"),
        ("  farm's more", farm_cpu - plain_cpu, "s"),
    ]
    parts = {part for times in farm_runs for part in times["parts"]}
    parts = sorted(parts, key=lambda part: -_median(farm_runs, part, 0))
    own = 0.0
    for part in parts:
        seconds, calls = _median(farm_runs, part, 0), _median(farm_runs, part, 1)
        if part not in SHARED:
            own += seconds
        each = f", {seconds / calls * 1e6:.1f} us each" if calls else ""
        rows.append((f"{'both' if part in SHARED else 'farm'}: {part} ({calls:.0f} calls{each})", seconds, "s"))
        if _median(plain_runs, part, 1):
            rows.append(("  the same in plain Scrapy", _median(plain_runs, part, 0), "s"))
    rows.append(("farm's own parts, summed", own, "s"))
    return rows


if __name__ == "__main__":
    for name, value, unit in run(int(sys.argv[1]) if len(sys.argv) > 1 else 3):
        print(f"{name:<78} {value:>8.3f} {unit}")
