"""Scrapy's own feed export (`scrapy crawl -O postings.jsonl`) beside farm's SQL pipeline: one
crawl fills both, the stored postings carry their salary as numbers, and `farm export` gives
back the postings the feed holds."""

import json
import subprocess
import sys

import pytest
from sqlalchemy import select

from farm.salary import columns
from farm.sandbox.testing import SandboxProcess
from farm.state.db import make_engine
from farm.state.models import JobPostingRow
from tests.e2e.harness import REPO, crawl_command, crawl_env, crawl_stat, prepare_db

pytestmark = pytest.mark.e2e

ROWS = [("qcwy", "北京", "python"), ("qcwy", "上海", "java")]


def test_a_crawl_with_a_feed_fills_the_feed_and_the_table_alike_and_export_gives_them_back(sqlite_url, tmp_path):
    prepare_db(sqlite_url, ROWS)
    feed = tmp_path / "postings.jsonl"
    with SandboxProcess(seed=11, postings=(20, 60)) as sandbox:
        proc = subprocess.run(
            [*crawl_command("qcwy", {"FARM_QCWY_MAX_PAGES": 2}), "-O", str(feed)],
            cwd=REPO,
            env=crawl_env(sqlite_url, sandbox.url),
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
            timeout=120,
        )
    assert proc.returncode == 0, proc.stdout[-3000:]
    fed = [json.loads(line) for line in feed.read_text(encoding="utf-8").splitlines()]
    engine = make_engine(sqlite_url)
    T = JobPostingRow.__table__
    with engine.connect() as conn:
        stored = {row.job_id: row for row in conn.execute(select(T))}
    engine.dispose()
    assert fed and {item["job_id"] for item in fed} == set(stored)
    assert crawl_stat(proc.stdout, "item_scraped_count") == len(fed)
    # every sandbox salary is a form farm knows: numbers for each, nothing counted unparsed
    assert crawl_stat(proc.stdout, "farm/salary/unparsed") == 0
    for item in fed:
        row = stored[item["job_id"]]
        numbers = (row.salary_min, row.salary_max, row.salary_months, row.salary_unit)
        assert numbers == columns("qcwy", item["salary"]) and row.salary_min is not None, item["salary"]

    out = tmp_path / "export.jsonl"
    export = subprocess.run(
        [sys.executable, "-m", "farm", "--db-url", sqlite_url, "export", "--format", "jsonl", "--out", str(out)],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert export.returncode == 0, export.stderr
    exported = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]
    assert {row["job_id"] for row in exported} == set(stored)
    assert {row["job_id"]: row["salary_max"] for row in exported} == {j: r.salary_max for j, r in stored.items()}
