"""The headline: farm on MariaDB against plain Scrapy storing the same pages' postings in
MariaDB with the three MySQL pipelines users usually write (bench.mysql_pipelines: a commit
an item, batched executemany, Twisted's adbapi).

Every side crawls the same keywords' pages from one sandbox, as subprocesses with the same
concurrency (bench.crawl_bench's); each side writes to a new database on the machine's
MariaDB (bench.mariadb). Sides run in rounds, the order turned each round; the figure is
the median of each side's pages/s, and farm's ratio to each pipeline the median of the
rounds' ratios.

    python -m bench.mariadb_bench [--rounds 3]
"""

import argparse
import json
import statistics

from bench import crawl_bench
from bench.mariadb import mariadb_database
from farm.sandbox.testing import SandboxProcess

PIPELINES = {
    "a commit an item": "bench.mysql_pipelines.CommitPerItem",
    "batched executemany": "bench.mysql_pipelines.Batched",
    "Twisted adbapi": "bench.mysql_pipelines.Adbapi",
}


def _plain(sandbox_url, keywords, pipeline):
    with mariadb_database() as url:
        command, env = crawl_bench.plain_command(sandbox_url, keywords)
        command += ["-s", "ITEM_PIPELINES=" + json.dumps({pipeline: 300}), "-s", f"MYSQL_URL={url}"]
        return crawl_bench._run(command, env)


def _farm(sandbox_url, keywords):
    with mariadb_database() as url:
        return crawl_bench.farm(sandbox_url, keywords, url)


def run(rounds=3):
    keywords = [(city, job) for city in crawl_bench.CITIES for job in crawl_bench.JOBS]
    sides = {"farm": lambda url: _farm(url, keywords)}
    for name, pipeline in PIPELINES.items():
        sides[name] = lambda url, pipeline=pipeline: _plain(url, keywords, pipeline)
    rates = {side: [] for side in sides}
    pages = 0
    with SandboxProcess(seed=9, postings=(800, 800)) as sandbox:
        for round_no in range(rounds):
            for side in sides if round_no % 2 == 0 else reversed(sides):
                pages, rate = sides[side](sandbox.url)
                rates[side].append(rate)
    rows = [
        (
            f"farm on MariaDB, qcwy pages ({pages} per run, median of {rounds})",
            statistics.median(rates["farm"]),
            "pages/s",
        )
    ]
    for name in PIPELINES:
        rows.append((f"plain Scrapy + MySQL pipeline, {name}", statistics.median(rates[name]), "pages/s"))
    for name in PIPELINES:
        ratios = [a / b for a, b in zip(rates["farm"], rates[name])]
        rows.append((f"farm on MariaDB / plain Scrapy, {name}", statistics.median(ratios), "ratio"))
    return rows


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=3)
    for name, value, unit in run(parser.parse_args().rounds):
        print(f"{name:<60} {value:>10.2f} {unit}", flush=True)
