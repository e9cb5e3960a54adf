"""The benchmarks' baselines crawl farm's spider as plain Scrapy and on scrapy-redis, without farm's
parts: each must fetch every page of its keywords and end with no error, or the bench compares farm
with a crawl that broke."""

import subprocess

import pytest

from bench.crawl_bench import REPO, plain_command
from bench.redis_bench import scrapy_redis_command
from farm.sandbox.testing import SandboxProcess
from tests.e2e.harness import crawl_stat, expected_crawl, fetched_pages

KEYWORDS = [("北京", "python"), ("上海", "java")]
MAX_PAGES = 3


def _baseline(side, sandbox_url, redis_url, prefix):
    if side == "plain":
        command, env = plain_command(sandbox_url, KEYWORDS)
    else:  # scrapy-redis, on this test's own keys
        command, env = scrapy_redis_command(sandbox_url, KEYWORDS, redis_url)
        command += ["-s", f"SCHEDULER_QUEUE_KEY={prefix}:%(spider)s:requests"]
        command += ["-s", f"SCHEDULER_DUPEFILTER_KEY={prefix}:%(spider)s:dupefilter"]
    command += ["-s", f"FARM_QCWY_MAX_PAGES={MAX_PAGES}"]
    return subprocess.run(command, cwd=REPO, env=env, capture_output=True, text=True, timeout=120)


@pytest.mark.parametrize("side", ["plain", "scrapy-redis"])
def test_a_baseline_fetches_every_page_of_its_keywords_and_ends_without_an_error(side, shared):
    with SandboxProcess(seed=5, postings=(30, 90)) as sandbox:
        proc = _baseline(side, sandbox.url, *shared)
        pages, _, _ = expected_crawl(sandbox, "qcwy", [("qcwy", city, job) for city, job in KEYWORDS], MAX_PAGES)
        fetched = fetched_pages(sandbox, "qcwy")
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert "Traceback" not in proc.stderr and crawl_stat(proc.stderr, "log_count/ERROR") == 0, proc.stderr[-3000:]
    assert set(fetched) == pages and all(count == 1 for count in fetched.values())
    assert crawl_stat(proc.stderr, "response_received_count") == len(pages)
