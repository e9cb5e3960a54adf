"""Answers farm does not understand, served by the sandbox as the sites serve them: none ends a keyword short.

51job's soft block (status "1", no items, the count saying more), HTML where JSON was due, Boss's codes farm
does not know and 智联's client-rendered shell, on a share of the pages: each is a refusal retried with the
back-off, so every posting is stored and every keyword completes. Served on every page of one keyword, they
leave it partial, named by the shape: never completed short, never failed.
"""

from collections import Counter

import pytest

from farm.sandbox.testing import SandboxProcess
from tests.e2e.harness import crawl_stat, expected_crawl, keywords, prepare_db, run_crawl, stored_postings

pytestmark = pytest.mark.e2e

SHAPES = {
    "qcwy": ("qcwy_soft_empty", "qcwy_html"),
    "boss": ("boss_unknown_code",),
    "zhilian": ("zhilian_shell",),
}


@pytest.mark.parametrize("source", ["qcwy", "boss", "zhilian"])
def test_refusals_on_a_share_of_the_pages_lose_no_posting(source, sqlite_url):
    rows = [(source, city, job) for city in ("北京", "上海") for job in ("python", "java", "数据")]
    prepare_db(sqlite_url, rows)
    cap = {"qcwy": 8, "boss": 3, "zhilian": 6}[source]
    with SandboxProcess(
        seed=21, postings=(60, 160), fault_rate=0.3, fault_kinds=SHAPES[source], fault_seed=5
    ) as sandbox:
        crawl = run_crawl(source, sqlite_url, sandbox.url, **{f"FARM_{source.upper()}_MAX_PAGES": cap})
        _, ids, _ = expected_crawl(sandbox, source, rows, cap)
    assert crawl.returncode == 0, crawl.output[-3000:]
    assert {row["crawl_status"] for row in keywords(sqlite_url)} == {"completed"}
    assert Counter(stored_postings(sqlite_url, source)) == Counter(ids)
    assert crawl_stat(crawl.output, "farm/block/count") > 0  # the shapes were met, and retried


def test_a_keyword_answered_only_with_the_soft_block_is_left_partial_named_never_completed_short(sqlite_url):
    rows = [("qcwy", "北京", "python"), ("qcwy", "上海", "java")]
    prepare_db(sqlite_url, rows)
    with SandboxProcess(seed=21, postings=(60, 60), fail_keywords={"java": "qcwy_soft_empty"}) as sandbox:
        crawl = run_crawl("qcwy", sqlite_url, sandbox.url, FARM_BLOCK_RETRIES=2)
    assert crawl.returncode == 0, crawl.output[-3000:]
    by_job = {row["job"]: row for row in keywords(sqlite_url)}
    assert by_job["python"]["crawl_status"] == "completed"
    assert by_job["java"]["crawl_status"] == "partial" and by_job["java"]["retry_count"] == 0
    assert by_job["java"]["error_message"].startswith("blocked: qcwy_empty_page page 1 empty while the site says 60")
    assert by_job["java"]["jobs_found"] == 0
