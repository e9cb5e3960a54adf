"""A start from cron when the day's work is all done: it says so and exits 0 at once, fetching nothing.

(A start while a crawl is running joins it: test_stop_and_share.py's two-crawler test, started
"while_the_first_runs".)
"""

import re

import pytest
from sqlalchemy import update

from farm.sandbox.testing import SandboxProcess
from farm.state.models import Keyword
from tests.e2e.harness import crawl_stat, keywords, prepare_db, run_crawl, served

pytestmark = pytest.mark.e2e

ROWS = [("zhilian", city, job) for city in ("北京", "上海") for job in ("python", "java")]


def test_a_start_with_nothing_left_exits_0_at_once_saying_so(sqlite_url):
    store = prepare_db(sqlite_url, ROWS)
    day = store.today()
    with store.engine.begin() as conn:  # the day's work done: each keyword completed, or failed for good
        conn.execute(update(Keyword).values(crawl_status="completed", last_requested_date=day))
        conn.execute(
            update(Keyword)
            .where(Keyword.job == "java", Keyword.city == "上海")
            .values(crawl_status="failed", retry_count=3)
        )
    store.close()
    before = keywords(sqlite_url)
    with SandboxProcess(seed=1) as sandbox:
        proc = run_crawl("zhilian", sqlite_url, sandbox.url, timeout=120)
        assert proc.returncode == 0, proc.output[-3000:]
        assert served(sandbox, "zhilian") == 0
    assert "farm: no zhilian keyword left to claim for today" in proc.output
    assert "'finish_reason': 'finished'" in proc.output
    assert crawl_stat(proc.output, "farm/lease/claimed") == 0
    # at once: the crawl closed on the empty claim, not at Scrapy's next idle check (5 s)
    elapsed = float(re.search(r"'elapsed_time_seconds': ([\d.]+)", proc.output).group(1))
    assert elapsed < 3, elapsed
    assert keywords(sqlite_url) == before  # nothing claimed, nothing written
