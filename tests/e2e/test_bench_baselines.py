"""The benchmarks' baselines crawl farm's spider as plain Scrapy and on scrapy-redis, without farm's
parts: each must fetch every page of its keywords and end with no error, or the bench compares farm
with a crawl that broke."""

import os
import subprocess
import sys

import pytest

from bench.crawl_bench import COMMON, REPO
from farm.sandbox.testing import SandboxProcess
from tests.e2e.harness import crawl_stat, expected_crawl, fetched_pages

KEYWORDS = [("北京", "python"), ("上海", "java")]
MAX_PAGES = 3


def _baseline(script, sandbox_url, settings=()):
    pairs = ",".join(f"{city}:{job}" for city, job in KEYWORDS)
    command = [sys.executable, "-m", "scrapy", "runspider", str(REPO / "bench" / script), "-a", f"keywords={pairs}"]
    command += [*COMMON, "-s", f"FARM_QCWY_MAX_PAGES={MAX_PAGES}"]
    for setting in settings:
        command += ["-s", setting]
    env = {**os.environ, "FARM_QCWY_BASE_URL": sandbox_url}
    return subprocess.run(command, cwd=REPO, env=env, capture_output=True, text=True, timeout=120)


@pytest.mark.parametrize("script", ["plain_qcwy.py", "plain_qcwy_redis.py"])
def test_a_baseline_fetches_every_page_of_its_keywords_and_ends_without_an_error(script, shared):
    redis_url, prefix = shared
    settings = [
        f"REDIS_URL={redis_url}",
        f"SCHEDULER_QUEUE_KEY={prefix}:%(spider)s:requests",
        f"SCHEDULER_DUPEFILTER_KEY={prefix}:%(spider)s:dupefilter",
    ]
    with SandboxProcess(seed=5, postings=(30, 90)) as sandbox:
        proc = _baseline(script, sandbox.url, settings)
        pages, _, _ = expected_crawl(sandbox, "qcwy", [("qcwy", city, job) for city, job in KEYWORDS], MAX_PAGES)
        fetched = fetched_pages(sandbox, "qcwy")
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert "Traceback" not in proc.stderr and crawl_stat(proc.stderr, "log_count/ERROR") == 0, proc.stderr[-3000:]
    assert set(fetched) == pages and all(count == 1 for count in fetched.values())
    assert crawl_stat(proc.stderr, "response_received_count") == len(pages)
