"""A crawl of each site against the sandbox stores what the site says each keyword holds, and `farm stats`
names the keywords the page cap held back, the site's count against what the cap let farm take."""

import json
import os
import subprocess
import sys

import pytest

from farm.sandbox.testing import SandboxProcess
from tests.e2e.harness import SPIDERS, keywords, prepare_db, run_crawl

pytestmark = pytest.mark.e2e

CAP = 2
ROWS = [("北京", "python"), ("上海", "java"), ("深圳", "前端"), ("杭州", "python"), ("北京", "测试")]


@pytest.mark.parametrize("source", ["boss", "qcwy", "zhilian"])
def test_a_crawl_stores_each_sites_count_and_stats_sets_it_against_the_cap(source, sqlite_url):
    prepare_db(sqlite_url, [(source, city, job) for city, job in ROWS])
    setting = f"FARM_{source.upper()}_MAX_PAGES"
    with SandboxProcess(seed=7, postings=(0, 160)) as sandbox:
        proc = run_crawl(source, sqlite_url, sandbox.url, **{setting: CAP})
        assert proc.returncode == 0, proc.output[-3000:]
        page_size = SPIDERS[source].page_size
        truth = {
            (city, job): sandbox.truth(source, SPIDERS[source].city_codes[city], job, page_size=page_size)
            for city, job in ROWS
        }
    rows = {(k["city"], k["job"]): k for k in keywords(sqlite_url)}
    assert {key: (row["crawl_status"], row["site_total"]) for key, row in rows.items()} == {
        key: ("completed", t["total"]) for key, t in truth.items()
    }
    held_back = {key for key, t in truth.items() if t["pages"] > CAP}
    assert held_back and held_back != set(ROWS), "the seed must give keywords on both sides of the cap"

    env = {**os.environ, setting: str(CAP)}  # `farm stats` judges by the cap the crawl ran with
    stats = subprocess.run(
        [sys.executable, "-m", "farm", "--db-url", sqlite_url, "stats", "--json", "--source", source],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert stats.returncode == 0, stats.stderr
    [row] = json.loads(stats.stdout)
    capped = {(k["city"], k["job"]): (k["site_total"], k["took"]) for k in row["caps"]["capped"]}
    page_size = SPIDERS[source].page_size
    assert capped == {key: (truth[key]["total"], CAP * page_size) for key in held_back}
    assert row["caps"]["left_behind"] == sum(truth[key]["total"] - CAP * page_size for key in held_back)
