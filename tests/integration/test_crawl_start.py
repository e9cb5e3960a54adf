"""A crawl with a malformed FARM_DB_URL stops at start, at once, without showing the password."""

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize(
    "url, problem",
    [
        (
            "mysql+pymysql://u:s3cret@host:notaport/db",
            "FARM_DB_URL='mysql+pymysql://u:***@host:notaport/db' has a port that is not a number",
        ),
        ("mysql+pymysql://u:s3cret@host:99999/db", "FARM_DB_URL='mysql+pymysql://u:***@host:99999/db' has port 99999"),
        ("u:s3cret@host/db", "FARM_DB_URL='u:***@host/db' is not a database URL"),
    ],
)
def test_scrapy_crawl_with_a_malformed_url_exits_at_once_without_the_password(url, problem):
    started = time.monotonic()
    done = subprocess.run(
        [sys.executable, "-m", "scrapy", "crawl", "boss", "-s", f"FARM_DB_URL={url}"],
        cwd=REPO,
        env={**os.environ, "FARM_DB_URL": ""},
        capture_output=True,
        text=True,
        timeout=120,
    )
    output = done.stdout + done.stderr
    assert done.returncode != 0, output[-3000:]
    assert time.monotonic() - started < 60
    assert problem in output
    # Scrapy prints the traceback of a component that failed to start: it shows the masked
    # message, and no exception chained to it repeats the URL
    assert "s3cret" not in output
    assert "The above exception was the direct cause" not in output
