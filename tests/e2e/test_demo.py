"""`farm demo`: the three sites on the embedded defaults; again the same day, nothing new."""

import subprocess
import sys

import pytest

from tests.e2e.harness import keywords

pytestmark = pytest.mark.e2e


def farm(*args, cwd):
    return subprocess.run([sys.executable, "-m", "farm", *args], cwd=cwd, capture_output=True, text=True, timeout=300)


def test_demo_crawls_every_bundled_keyword_then_finds_nothing_new(tmp_path):
    # run from an empty directory: the demo needs no checkout around it
    db_url = f"sqlite:///{tmp_path / 'farm.db'}"
    first = farm("--db-url", db_url, "demo", "--log-dir", str(tmp_path / "logs"), cwd=tmp_path)
    assert first.returncode == 0, first.stdout + first.stderr
    assert "keywords: 36 new, 0 already present" in first.stdout
    for source in ("boss", "qcwy", "zhilian"):
        assert f"{source}: crawling 12 keywords" in first.stdout
        assert (tmp_path / "logs" / f"{source}.log").exists()
    rows = keywords(db_url)
    assert len(rows) == 36 and {row["crawl_status"] for row in rows} == {"completed"}
    assert "all         36    36       0         0         36" in first.stdout
    report = tmp_path / "logs" / "report.html"
    assert "3 site(s) crawled" in first.stdout and f"written to {report}" in first.stdout
    page = report.read_text(encoding="utf-8")
    assert page.count("<svg") == 5 and "The day's crawl" in page

    again = farm("--db-url", db_url, "demo", "--log-dir", str(tmp_path / "logs"), cwd=tmp_path)
    assert again.returncode == 0, again.stdout + again.stderr
    assert "keywords: 0 new, 36 already present" in again.stdout
    assert "Nothing new to crawl" in again.stdout
    assert "crawling" not in again.stdout.split("Nothing new")[1].split("keywords on")[0]
    assert [row["last_requested_at"] for row in keywords(db_url)] == [row["last_requested_at"] for row in rows]
