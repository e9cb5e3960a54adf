"""`farm stats`, `farm doctor`, `farm report` and `farm export` count every site the keyword table holds:
farm's three, a project's own, and one whose project is not the one `farm` runs in (here: none at all,
the command run outside any project, on a database a tinyjobs project crawled)."""

import json
import os
import subprocess
import sys
from datetime import UTC, date, datetime, time
from zoneinfo import ZoneInfo

import pytest
from sqlalchemy import insert

from farm.report.figures import gather
from farm.state.db import make_engine
from farm.state.migrate import upgrade
from farm.state.models import JobPostingRow, Keyword
from tests.integration.api_harness import REPO

TZ = ZoneInfo("Asia/Shanghai")
DAY = date(2026, 12, 2)
WALL = "tinyjobs_slider"


def at(hour: int) -> datetime:
    return datetime.combine(DAY, time(hour), tzinfo=TZ).astimezone(UTC)


@pytest.fixture
def tinyjobs_db(sqlite_url):
    """A database a tinyjobs project crawled on DAY: one keyword completed, one held by a wall."""
    engine = make_engine(sqlite_url)
    upgrade(engine)
    keyword = {
        "last_requested_date": DAY,
        "last_requested_at": at(8),
        "crawl_started_at": at(8),
        "created_at": at(7),
        "source": "tinyjobs",
        "city": "spr",
    }
    with engine.begin() as conn:
        conn.execute(
            insert(Keyword.__table__),
            [
                {
                    **keyword,
                    "id": 1,
                    "job": "python",
                    "crawl_status": "completed",
                    "last_completed_page": 2,
                    "jobs_found": 12,
                    "error_message": None,  # every row names the same columns: one INSERT for both
                    "updated_at": at(9),
                },
                {
                    **keyword,
                    "id": 2,
                    "job": "rust",
                    "crawl_status": "partial",
                    "last_completed_page": 0,
                    "jobs_found": 0,
                    "error_message": f"blocked: {WALL} on page 1",
                    "updated_at": at(10),
                },
            ],
        )
        conn.execute(
            insert(JobPostingRow.__table__),
            [
                {
                    "source": "tinyjobs",
                    "job_id": f"spr-python-{i}",
                    "title": "python",
                    "keyword_id": 1,
                    "first_seen_at": at(9),
                    "last_seen_at": at(9),
                    "raw": {"id": i},
                }
                for i in range(12)
            ],
        )
    engine.dispose()
    return sqlite_url


def farm(tmp_path, db_url, *args):
    """``farm --db-url DB_URL ARGS`` outside any Scrapy project: farm's own settings, its three spiders."""
    env = {name: value for name, value in os.environ.items() if not name.startswith(("FARM_", "SCRAPY_"))}
    env["PYTHONPATH"] = str(REPO)
    proc = subprocess.run(
        [sys.executable, "-m", "farm", "--db-url", db_url, *args],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert "Traceback" not in proc.stderr, proc.stderr
    return proc


def test_stats_counts_a_site_the_keyword_table_holds_after_farms_three(tinyjobs_db, tmp_path):
    proc = farm(tmp_path, tinyjobs_db, "stats", "--json", "--date", DAY.isoformat())
    assert proc.returncode == 0, proc.stderr
    rows = {row["source"]: row for row in json.loads(proc.stdout)}
    assert list(rows) == ["boss", "qcwy", "zhilian", "tinyjobs"]
    tiny = rows["tinyjobs"]
    assert (tiny["total"], tiny["used"], tiny["crawl_status"]["completed"], tiny["crawl_status"]["partial"]) == (
        2,
        2,
        1,
        1,
    )
    assert tiny["pages"] == 2 and tiny["jobs_found"] == 12 and tiny["salary"]["seen"] == 12
    assert tiny["door"]["held"][WALL]["keywords"] == 1  # the wall that holds its keyword, named first

    text = farm(tmp_path, tinyjobs_db, "stats", "--date", DAY.isoformat()).stdout
    assert "tinyjobs: blocked by slider since 10:00" in text


def test_doctor_names_a_site_of_the_keyword_table_no_spider_here_crawls(tinyjobs_db, tmp_path):
    proc = farm(tmp_path, tinyjobs_db, "doctor", "--timeout", "0.5")
    warned = [line for line in proc.stdout.splitlines() if line.startswith("warn  site tinyjobs:")]
    assert len(warned) == 1 and "no spider of this project crawls it" in warned[0], proc.stdout


def test_the_report_shows_the_door_of_every_site_with_keywords(tinyjobs_db):
    engine = make_engine(tinyjobs_db)
    try:
        figures = gather(engine, DAY, TZ)
    finally:
        engine.dispose()
    [door] = figures.doors
    assert door["source"] == "tinyjobs" and door["held"][WALL]["keywords"] == 1
    assert door["lines"] == [
        "tinyjobs: blocked by slider since 10:00 (tinyjobs_slider: 1 keyword partial), 1 keyword waiting"
    ]


def test_export_writes_the_postings_of_every_site(tinyjobs_db, tmp_path):
    out = tmp_path / "postings.jsonl"
    proc = farm(tmp_path, tinyjobs_db, "export", "--format", "jsonl", "--date", DAY.isoformat(), "--out", str(out))
    assert proc.returncode == 0, proc.stderr
    rows = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]
    assert sorted(row["job_id"] for row in rows) == sorted(f"spr-python-{i}" for i in range(12))
    assert {row["source"] for row in rows} == {"tinyjobs"}
