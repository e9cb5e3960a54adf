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
from farm.sandbox.testing import SandboxProcess
from farm.settings import EXTENSIONS

TIMES = {"bench.component_times.ComponentTimes": 1000}
# what both sides do, in their own places: farm decodes a page's JSON in its block check
# and signs a request as it goes out; plain Scrapy does both in the spider
SHARED = {"QcwySpider.parse_page", "parsing.response_json", "RequestSigningMiddleware.process_request",
          "LeaseSpider.page_request"}  # fmt: skip


def _times(output: str) -> dict:
    return json.loads(re.search(r"component-times (.*)", output).group(1))


def run(rounds=3):
    keywords = [(city, job) for city in CITIES for job in JOBS]
    plain_runs, farm_runs = [], []
    with SandboxProcess(seed=9, postings=(800, 800)) as sandbox, tempfile.TemporaryDirectory() as tmp:
        for round_no in range(rounds):
            plain_runs.append(_times(crawl_output(*plain_command(sandbox.url, keywords, lean=True, extensions=TIMES))))
            extra = ["-s", "EXTENSIONS=" + json.dumps({**EXTENSIONS, **TIMES})]
            db_url = f"sqlite:///{tmp}/farm-{round_no}.db"
            farm_runs.append(_times(crawl_output(*farm_command(sandbox.url, keywords, db_url, extra))))
    plain_cpu = statistics.median(run["cpu"] for run in plain_runs)
    farm_cpu = statistics.median(run["cpu"] for run in farm_runs)
    rows = [("crawl thread CPU, plain Scrapy + LeanProcess", plain_cpu, "s"),
            ("crawl thread CPU, farm", farm_cpu, "s"),
            ("  farm's more", farm_cpu - plain_cpu, "s")]  # fmt: skip
    parts = sorted({name for run in farm_runs for name in run["parts"]},
                   key=lambda name: -statistics.median(run["parts"].get(name, [0, 0])[0] for run in farm_runs))  # fmt: skip
    own = 0.0
    for name in parts:
        seconds = statistics.median(run["parts"].get(name, [0, 0])[0] for run in farm_runs)
        calls = statistics.median(run["parts"].get(name, [0, 0])[1] for run in farm_runs)
        plain_seconds = statistics.median(run["parts"].get(name, [0, 0])[0] for run in plain_runs)
        if name not in SHARED:
            own += seconds
        where = "both" if name in SHARED else "farm"
        rows.append((f"{where}: {name} ({calls:.0f} calls, {seconds / calls * 1e6:.1f} us each)", seconds, "s"))
        if plain_seconds:
            rows.append(("  the same in plain Scrapy", plain_seconds, "s"))
    rows.append(("farm's own parts, summed", own, "s"))
    return rows


if __name__ == "__main__":
    for name, value, unit in run(int(sys.argv[1]) if len(sys.argv) > 1 else 3):
        print(f"{name:<78} {value:>8.3f} {unit}")
