"""`make bench`: every benchmark of farm, as one table.

It leads with the headline users compare (farm on MariaDB against plain Scrapy with the
MySQL pipelines people write), then Redis mode against scrapy-redis, then the rest.
``python -m bench --list`` names the sections in that order; names given run those only.

Ratios are measured within one run (these machines are shared and noisy):
claims at 10k vs 1M keyword rows, claims over HTTP vs in process, the sandbox vs
one Scrapy process, farm vs plain Scrapy, a claim on a thread of a busy process,
a crawl with JOBDIR vs without; the report and the export of a day among a
million postings.
"""

import sys
import time

from bench import (
    api_bench,
    checkpoint_bench,
    claim_thread_bench,
    claims_bench,
    crawl_bench,
    identities_bench,
    longday_bench,
    mariadb_bench,
    openings_bench,
    openings_scale,
    openings_stored_bench,
    openings_update_bench,
    redis_bench,
    redis_commands_bench,
    report_bench,
    sandbox_bench,
    walls_bench,
)

SECTIONS = [
    # the headline users compare: farm on MariaDB against the MySQL pipelines they write
    (
        "farm on MariaDB vs plain Scrapy with the usual MySQL pipelines (the headline)",
        mariadb_bench.run,
    ),
    ("work shared through Redis: farm's Redis mode vs local mode vs scrapy-redis", redis_bench.run),
    ("Redis commands a keyword and a page: two workers, keywords of 8 pages and of 1", redis_commands_bench.run),
    ("crawl throughput: farm vs plain Scrapy", crawl_bench.run),
    ("keyword claims, 8 processes on MariaDB", claims_bench.run),
    ("keyword claims over HTTP (farm api), 8 clients on MariaDB", api_bench.run),
    ("a long day in one process: 100,000 pages over 1M keywords (SQLite)", longday_bench.run),
    ("sandbox throughput", sandbox_bench.run),
    ("a keyword claim on a thread of a busy process (why the state writer makes the claims)", claim_thread_bench.run),
    ("pause and resume (JOBDIR): checkpoint saves, crawl with JOBDIR vs without vs Scrapy's", checkpoint_bench.run),
    ("farm report on 1M postings over 30 days (SQLite, MariaDB, PostgreSQL); farm export (SQLite)", report_bench.run),
    (
        "openings: precision and recall on the sandbox's cross-posts and a held-out imitation; clustering 1M postings",
        openings_bench.run,
    ),
    ("openings stored: a day's update against the stored openings vs a rebuild (SQLite)", openings_stored_bench.run),
    (
        "openings: updates of 1,000 new against 10k, 100k, 1M stored, of 100,000 against 1M; one title many times",
        openings_update_bench.run,
    ),
    (
        "openings at scale: the day's update of 1,000 and 100,000 new against 1M and 3M stored (SQLite), 1M "
        "(MariaDB, PostgreSQL)",
        openings_scale.everywhere,
    ),
    ("the sites' walls: pages/s through them (browser sessions) vs without; the browser's cost", walls_bench.run),
    ("identities: pages/s through 1, 2, 4 and 8 proxies, each at one identity's pace", identities_bench.run),
]


def main(names):
    if names[:1] == ["--list"]:  # the sections, in the order they run
        for title, _ in SECTIONS:
            print(title)
        return
    print(f"{'benchmark':<62} {'value':>11}  unit")
    print("-" * 84)
    for title, run in SECTIONS:
        if names and not any(name in title for name in names):
            continue
        started = time.monotonic()
        print(f"[{title}]", flush=True)
        for name, value, unit in run():
            # ratios to three places: an aim like ">= 0.9" is not met by a 0.895 shown as 0.90
            print(f"  {name:<60} {value:>11.{3 if unit == 'ratio' else 2}f}  {unit}", flush=True)
        print(f"  ({time.monotonic() - started:.0f}s)", flush=True)


if __name__ == "__main__":
    main(sys.argv[1:])
