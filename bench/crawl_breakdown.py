"""Where farm's crawl spends its core beyond plain Scrapy's: each part of farm, timed inside the crawl.

``python -m bench.crawl_breakdown [--rounds N] [--before COMMIT]``. The crawl benchmark's two like-for-like
sides (plain Scrapy + LeanProcess, and farm on SQLite) crawl the same pages, each with
bench.component_times timing its parts; per part, the median of the rounds. It says
which of farm's parts cost what, in the crawl, at the crawl's own speed: the crawl
benchmark can only say how much they cost together. Not part of `make bench`: the
timers themselves add a little to each part (about a microsecond a call).

With ``--before COMMIT`` it sets farm as it is beside farm as it was at COMMIT instead, in
paired rounds that turn their order (each tree with its own timers and its own extensions):
the crawl thread's CPU, today's over the earlier's, with where its median lies, and each
part side by side. The crawl thread's CPU spreads less between rounds than pages/s, so it
says sooner whether a change made the crawl dearer, and the parts say where.
"""

import argparse
import json
import re
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

from bench.crawl_bench import CITIES, JOBS, REPO, crawl_output, farm_command, plain_command
from bench.rounds import median_interval
from bench.variants import commit_of, variant_tree
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


def _extensions(tree: Path) -> dict:
    """farm's EXTENSIONS as the tree ``tree`` has them, with that tree's timers."""
    code = "import json; from farm.addon import EXTENSIONS; print(json.dumps(EXTENSIONS))"
    proc = subprocess.run([sys.executable, "-c", code], cwd=tree, capture_output=True, text=True, check=True)
    return {**json.loads(proc.stdout), **TIMES}


def run_before(commit: str, rounds=8):
    """farm as it is and farm at ``commit``, in paired rounds: rows as ``run`` gives them."""
    keywords = [(city, job) for city in CITIES for job in JOBS]
    runs = {"today": [], "before": []}
    with (
        variant_tree([], commit) as before_tree,
        SandboxProcess(seed=9, postings=(800, 800)) as sandbox,
        tempfile.TemporaryDirectory() as tmp,
    ):
        trees = {"today": REPO, "before": before_tree}
        extra = {name: ["-s", "EXTENSIONS=" + json.dumps(_extensions(tree))] for name, tree in trees.items()}
        for round_no in range(rounds):
            for name in ("today", "before") if round_no % 2 == 0 else ("before", "today"):
                db_url = f"sqlite:///{tmp}/{name}-{round_no}.db"
                command = farm_command(sandbox.url, keywords, db_url, extra[name], trees[name])
                runs[name].append(_times(crawl_output(*command, trees[name])))
    ratios = [today["cpu"] / before["cpu"] for today, before in zip(runs["today"], runs["before"])]
    low, high, sure = median_interval(ratios)
    rows = [
        ("crawl thread CPU, farm as it is", statistics.median(times["cpu"] for times in runs["today"]), "s"),
        (f"crawl thread CPU, farm at {commit[:12]}", statistics.median(times["cpu"] for times in runs["before"]), "s"),
        (f"  today's / the earlier's ({low:.3f} to {high:.3f}, {sure:.1%} sure)", statistics.median(ratios), ""),
    ]
    parts = {part for side in runs.values() for times in side for part in times["parts"]}
    for part in sorted(parts, key=lambda part: -_median(runs["today"], part, 0)):
        rows.append((f"{part} ({_median(runs['today'], part, 1):.0f} calls)", _median(runs["today"], part, 0), "s"))
        rows.append(("  the same at the earlier commit", _median(runs["before"], part, 0), "s"))
    return rows


def main(argv=None):
    parser = argparse.ArgumentParser(prog="python -m bench.crawl_breakdown", description=__doc__.split("\n\n")[0])
    parser.add_argument("rounds_given", nargs="?", type=int, metavar="ROUNDS", help="the same as --rounds")
    parser.add_argument("--rounds", type=int, default=None, help="rounds (3; 8 with --before)")
    parser.add_argument("--before", metavar="COMMIT", help="farm as it is beside farm at COMMIT, not plain Scrapy")
    args = parser.parse_args(argv)
    rounds = args.rounds or args.rounds_given
    if args.before:
        rows = run_before(commit_of(args.before), rounds or 8)
    else:
        rows = run(rounds or 3)
    for name, value, unit in rows:
        print(f"{name:<78} {value:>8.3f} {unit}")


if __name__ == "__main__":
    main()
