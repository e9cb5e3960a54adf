"""The add-on alone turns farm on: the example project of docs/examples/tinyjobs, crawled by `scrapy crawl`."""

import importlib.util
import os
import subprocess
import sys
import threading
from http.server import ThreadingHTTPServer

import pytest
from sqlalchemy import select

from farm.state.db import make_engine
from farm.state.models import JobPostingRow, Keyword
from tests.e2e.harness import REPO

EXAMPLE = REPO / "docs/examples/tinyjobs"
CRAWL_TIMEOUT = 60


def _example_site():
    spec = importlib.util.spec_from_file_location("tinyjobs_site", EXAMPLE / "site.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture
def site():
    """The example's site on a free port: (its module, its URL)."""
    module = _example_site()
    server = ThreadingHTTPServer(("127.0.0.1", 0), module.Search)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield module, f"http://127.0.0.1:{server.server_port}"
    finally:
        server.shutdown()
        server.server_close()


def _run(command, timeout=30):
    """``command`` in the example's directory, on its own settings (none of farm's from the environment)."""
    env = {name: value for name, value in os.environ.items() if not name.startswith(("FARM_", "SCRAPY_"))}
    env["PYTHONPATH"] = str(REPO)
    try:
        proc = subprocess.run(command, cwd=EXAMPLE, env=env, capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired as exc:
        pytest.fail(f"{' '.join(command[:4])} did not end within {timeout}s:\n{(exc.stderr or b'')[-3000:]}")
    assert proc.returncode == 0, f"{' '.join(command)}:\n{proc.stdout[-2000:]}\n{proc.stderr[-3000:]}"
    return proc


def test_the_example_project_crawls_every_keyword_with_the_add_on_alone(site, sqlite_url):
    module, url = site
    farm = [sys.executable, "-m", "farm", "--db-url", sqlite_url]
    _run([*farm, "db", "upgrade"])
    imported = _run([*farm, "keywords", "import", "keywords.csv"])
    assert "imported 4 new keywords" in imported.stdout

    crawl = [sys.executable, "-m", "scrapy", "crawl", "tinyjobs", "-s", f"FARM_DB_URL={sqlite_url}"]
    # the site is local: no politeness pace (a project's own site is crawled at SITE_RATE otherwise)
    local = ["-s", f"FARM_TINYJOBS_BASE_URL={url}", "-s", "FARM_TINYJOBS_RATE=0", "-s", "LOG_LEVEL=INFO"]
    proc = _run([*crawl, *local], timeout=CRAWL_TIMEOUT)
    assert "farm.addon.FarmAddon" in proc.stderr  # Scrapy lists the add-on it enabled

    engine = make_engine(sqlite_url)
    try:
        with engine.connect() as conn:
            keywords = conn.execute(select(Keyword.city, Keyword.job, Keyword.crawl_status)).all()
            postings = conn.execute(select(JobPostingRow.source, JobPostingRow.job_id)).all()
    finally:
        engine.dispose()
    assert len(keywords) == 4 and {status for _, _, status in keywords} == {"completed"}
    codes = {"Springfield": "spr", "Shelbyville": "shb", "Ogdenville": "ogd"}
    expected = {
        f"{codes[city]}-{job}-{i}" for city, job, _ in keywords for i in range(module.postings(codes[city], job))
    }
    assert sorted(job_id for _, job_id in postings) == sorted(expected)  # each once, none missing
    assert {source for source, _ in postings} == {"tinyjobs"}
