"""`farm demo`: the three sites on the embedded defaults, in a database of its own; again the same day,
nothing new; with --walls, a fresh pass through the walls; Ctrl+C stops it as it stops `scrapy crawl`."""

import os
import shutil
import signal
import subprocess
import sys

import pytest

from tests.e2e.harness import REPO, keywords, wait_until

pytestmark = pytest.mark.e2e


def demo_env():
    """The environment with no database named: the demo then keeps its own."""
    env = dict(os.environ, PYTHONPATH=str(REPO))
    env.pop("FARM_DB_URL", None)
    return env


def farm(*args, cwd):
    return subprocess.run(
        [sys.executable, "-m", "farm", *args], cwd=cwd, env=demo_env(), capture_output=True, text=True, timeout=300
    )


def test_demo_crawls_every_bundled_keyword_in_its_own_database_then_finds_nothing_new_then_passes_walls(tmp_path):
    # run from an empty directory: the demo needs no checkout around it
    db_url = f"sqlite:///{tmp_path / 'logs' / 'demo.db'}"
    first = farm("demo", "--log-dir", str(tmp_path / "logs"), cwd=tmp_path)
    assert first.returncode == 0, first.stdout + first.stderr
    assert f"database: {tmp_path / 'logs' / 'demo.db'} (the demo's own" in first.stdout
    assert not (tmp_path / "farm.db").exists()  # a first real crawl's default database is left alone
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

    again = farm("demo", "--log-dir", str(tmp_path / "logs"), cwd=tmp_path)
    assert again.returncode == 0, again.stdout + again.stderr
    assert "keywords: 0 new, 36 already present" in again.stdout
    assert "Nothing new to crawl" in again.stdout
    assert "crawling" not in again.stdout.split("Nothing new")[1].split("keywords on")[0]
    assert [row["last_requested_at"] for row in keywords(db_url)] == [row["last_requested_at"] for row in rows]

    # --walls the same day: the demo's keywords crawled again, through the walls
    if shutil.which("chromium") is None and not os.path.exists("/usr/bin/chromium"):
        pytest.skip("no chromium (Debian's chromium package): farm demo --walls not tried")
    walls = farm("demo", "--walls", "--log-dir", str(tmp_path / "logs"), cwd=tmp_path)
    assert walls.returncode == 0, walls.stdout + walls.stderr
    assert "Nothing new" not in walls.stdout
    assert "walls: 36 keyword(s) set back to a fresh pass" in walls.stdout
    for source in ("boss", "qcwy", "zhilian"):
        assert f"{source}: crawling 12 keywords" in walls.stdout
        line = walls.stdout.split(f"{source}: crawling")[1].splitlines()[0]
        assert "walls passed in the browser" in line, walls.stdout
    after = keywords(db_url)
    assert {row["crawl_status"] for row in after} == {"completed"}
    assert all(new["last_requested_at"] > old["last_requested_at"] for new, old in zip(after, rows))
    assert not (tmp_path / "farm.db").exists()


def test_ctrl_c_during_a_crawl_is_passed_on_and_its_keywords_go_back_partial(tmp_path):
    db_url = f"sqlite:///{tmp_path / 'demo.db'}"
    # its own session: SIGINT to the whole group is what a terminal's Ctrl+C sends
    demo = subprocess.Popen(
        [sys.executable, "-m", "farm", "--db-url", db_url, "demo", "--log-dir", str(tmp_path / "logs")],
        cwd=tmp_path,
        env=demo_env(),
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        start_new_session=True,
    )
    try:

        def qcwy_crawling():
            assert demo.poll() is None, demo.stdout.read()
            try:
                return any(r["source"] == "qcwy" and r["crawl_status"] == "crawling" for r in keywords(db_url))
            except Exception:  # the database not made yet
                return False

        wait_until(qcwy_crawling, 120, "51job's crawl to hold keywords")
        os.killpg(demo.pid, signal.SIGINT)
        output, _ = demo.communicate(timeout=60)
    finally:
        if demo.poll() is None:
            os.killpg(demo.pid, signal.SIGKILL)
            demo.wait()
    assert demo.returncode == 128 + signal.SIGINT, output
    assert "qcwy: crawling 12 keywords" in output and "stopped by SIGINT" in output, output
    assert "zhilian: crawling" not in output  # the demo stops with the crawl
    qcwy = [row for row in keywords(db_url) if row["source"] == "qcwy"]
    statuses = {row["crawl_status"] for row in qcwy}
    assert "crawling" not in statuses and "partial" in statuses, statuses
    log = (tmp_path / "logs" / "qcwy.log").read_text(encoding="utf-8")
    assert "Received SIGINT, shutting down gracefully" in log and "twice" not in log
