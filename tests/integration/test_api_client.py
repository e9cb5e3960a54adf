"""farm.client's crawl loop against a running `farm api`, on SQLite and on MariaDB."""

import threading
import time

import pytest

from farm.client import Blocked, KeywordClient, crawl
from farm.state import KeywordStore
from farm.state.db import make_engine
from farm.state.lease import Lease
from farm.state.migrate import upgrade
from tests.integration.api_harness import ApiServer


@pytest.fixture
def store(db_url):
    upgrade(db_url)
    engine = make_engine(db_url)
    yield KeywordStore(engine)
    engine.dispose()


@pytest.fixture
def server(db_url, store, tmp_path):
    with ApiServer(db_url, tmp_path / "api.log") as server:
        yield server


def test_the_client_loop_claims_fetches_reports_heartbeats_and_ends(store, server):
    jobs = ["python", "java", "resumed", "broken", "walled", "taken"]
    store.add_keywords([("qcwy", "上海", job) for job in jobs])
    ids = {r["job"]: r["id"] for r in store.list_keywords()}
    # a keyword another crawler left partial: pages 1 and 3 of 4 done
    [earlier] = store.claim("qcwy", "someone-else")
    assert earlier.job == "python"
    store.page_done(earlier, 1, 20, total_pages=4)
    store.page_done(earlier, 3, 20)
    store.release(earlier, "stopped")
    fetched, lock = [], threading.Lock()

    def fetch(keyword, page):
        with lock:
            fetched.append((keyword.job, page))
        if keyword.job == "broken" and page == 2:
            raise ValueError("unexpected page layout")
        if keyword.job == "walled":
            raise Blocked("captcha")
        if keyword.job == "taken" and page == 2:
            # meanwhile the lease is taken back (as the reaper would) and claimed by another crawler
            store.release(current_lease(store, ids["taken"]), "reaped")
            assert store.claim("qcwy", "other", skip_partial={ids["walled"]})[0].id == ids["taken"]
        if keyword.job == "java" and page == 2:
            time.sleep(1.0)  # a slow page: the heartbeat keeps the lease
        total = 4 if keyword.job == "python" else 3
        return [{"job_id": f"{keyword.job}-{page}-{n}", "title": f"{keyword.job} {n}"} for n in range(3)], total

    with KeywordClient(server.url, token=server.token) as client:
        outcomes = crawl(client, "qcwy", fetch, crawler_id="plain-crawler", heartbeat_every=0.2)
    assert outcomes == {"completed": 3, "failed": 1, "blocked": 1, "lost": 1}

    # the partial keyword resumed at page 2, skipped page 3 (done), then page 4 of its 4
    assert [page for job, page in fetched if job == "python"] == [2, 4]
    assert [page for job, page in fetched if job == "java"] == [1, 2, 3]
    assert [page for job, page in fetched if job == "broken"] == [1, 2]
    rows = {r["job"]: r for r in store.list_keywords()}
    assert {job: rows[job]["crawl_status"] for job in jobs} == {
        "python": "completed", "java": "completed", "resumed": "completed", "broken": "failed",
        "walled": "partial", "taken": "crawling",
    }  # fmt: skip
    assert (rows["python"]["jobs_found"], rows["python"]["crawler_id"]) == (46, "plain-crawler")
    assert rows["java"]["jobs_found"] == 9
    assert rows["broken"]["error_message"] == "page 2: ValueError: unexpected page layout"
    assert rows["walled"]["error_message"] == "blocked: captcha"
    assert (rows["taken"]["crawler_id"], rows["taken"]["last_completed_page"]) == ("other", 1)
    log = server.log()
    assert log.count('"POST /api/v1/keyword/heartbeat HTTP/1.1" 200') >= 3
    # the taken keyword's page 2 refused, or its heartbeat (whichever came first): nothing written after
    assert '"POST /api/v1/postings HTTP/1.1" 409' in log or '"POST /api/v1/keyword/heartbeat HTTP/1.1" 409' in log


def current_lease(store, keyword_id):
    """The lease the API client holds on ``keyword_id``, as the store would write with it."""
    [row] = [r for r in store.list_keywords() if r["id"] == keyword_id]
    return Lease(id=row["id"], source=row["source"], city=row["city"], job=row["job"],
                 lease_token=row["lease_token"], start_page=1, from_status="")  # fmt: skip
