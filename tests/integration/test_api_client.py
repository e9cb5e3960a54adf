"""farm.api.client's crawl loop against a running `farm api`, on SQLite and on MariaDB."""

import socket
import threading
import time
from datetime import UTC, datetime, timedelta
from email.utils import format_datetime
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from farm.api.client import PAGE_MAX, RETRY_AFTER_DEFAULT, RETRY_AFTER_MAX, ApiError, Blocked, KeywordClient, crawl
from farm.errors import ApiUnreachable
from farm.state import KeywordStore
from farm.state.db import make_engine
from farm.state.lease import Lease
from tests.integration.api_harness import ApiServer
from tests.migrated import migrated


@pytest.fixture
def store(db_url):
    migrated(db_url)
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
        "python": "completed",
        "java": "completed",
        "resumed": "completed",
        "broken": "failed",
        "walled": "partial",
        "taken": "crawling",
    }
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
    return Lease(
        id=row["id"],
        source=row["source"],
        city=row["city"],
        job=row["job"],
        lease_token=row["lease_token"],
        start_page=1,
        from_status="",
    )


def test_error_texts_long_or_with_a_lone_surrogate_or_escapes_fail_their_keyword_only(store, server):
    store.add_keywords([("qcwy", "上海", job) for job in ("long", "surrogate", "fine")])

    def fetch(keyword, page):
        if keyword.job == "long":
            raise ValueError("x" * 20_000)
        if keyword.job == "surrogate":
            raise ValueError("bad \ud800 byte\x1b]0;owned\x07\r\nnext")
        return [{"job_id": f"{keyword.job}-{page}"}], None

    with KeywordClient(server.url, token=server.token) as client:
        assert crawl(client, "qcwy", fetch, crawler_id="plain-crawler") == {"failed": 2, "completed": 1}
    rows = {r["job"]: r for r in store.list_keywords()}
    assert rows["surrogate"]["error_message"] == "page 1: ValueError: bad \ufffd byte ]0;owned next"
    long = rows["long"]["error_message"]
    assert long.startswith("page 1: ValueError: xxx") and len(long) <= 2_000
    assert "Traceback" not in server.log()


def test_a_total_above_the_servers_page_cap_is_capped(store, server):
    store.add_keywords([("qcwy", "上海", "endless")])
    # a keyword another crawler left partial two pages short of the cap
    [earlier] = store.claim("qcwy", "someone-else")
    with store.engine.begin() as conn:
        conn.exec_driver_sql(f"UPDATE keyword SET last_completed_page = {PAGE_MAX - 2} WHERE id = {earlier.id}")
    store.release(earlier, "stopped")
    fetched = []

    def fetch(keyword, page):
        fetched.append(page)
        return [{"job_id": f"endless-{page}"}], 10**9  # the site's count of pages, unbounded

    with KeywordClient(server.url, token=server.token) as client:
        assert crawl(client, "qcwy", fetch, crawler_id="plain-crawler") == {"completed": 1}
    assert fetched == [PAGE_MAX - 1, PAGE_MAX]
    [row] = store.list_keywords()
    assert (row["crawl_status"], row["total_pages"], row["last_completed_page"]) == ("completed", PAGE_MAX, PAGE_MAX)


def test_an_error_the_loop_cannot_handle_gives_the_keyword_back_partial_first(store, server):
    store.add_keywords([("qcwy", "上海", job) for job in ("interrupted", "refused", "untouched")])
    interrupted = []

    def fetch(keyword, page):
        if page == 2 and keyword.job == "interrupted" and not interrupted:
            interrupted.append(page)
            raise KeyboardInterrupt  # Ctrl+C
        if page == 2 and keyword.job == "refused":
            return [{"job_id": "x", "unknown_field": 1}], 3  # a 422 the loop cannot fix
        return [{"job_id": f"{keyword.job}-{page}"}], 3

    def row(job):
        [found] = [r for r in store.list_keywords() if r["job"] == job]
        return found

    with KeywordClient(server.url, token=server.token) as client:
        with pytest.raises(KeyboardInterrupt):
            crawl(client, "qcwy", fetch, crawler_id="plain-crawler", max_keywords=1)
        # not left crawling for FARM_LEASE_TIMEOUT: given back, the next claim resumes it at page 2
        assert (row("interrupted")["crawl_status"], row("interrupted")["last_completed_page"]) == ("partial", 1)
        assert row("interrupted")["error_message"] == "the crawler stopped: KeyboardInterrupt"
        with pytest.raises(ApiError, match="422"):
            crawl(client, "qcwy", fetch, crawler_id="plain-crawler")
    assert row("interrupted")["crawl_status"] == "completed"
    assert (row("refused")["crawl_status"], row("refused")["last_completed_page"]) == ("partial", 1)
    assert row("refused")["error_message"].startswith("the crawler stopped: ApiError: 422: [{")
    assert row("untouched")["crawl_status"] == "idle"


def test_an_api_gone_mid_crawl_stops_the_loop_as_the_apis_fault_not_the_keywords(store, db_url, tmp_path):
    store.add_keywords([("qcwy", "上海", "python")])
    server = ApiServer(db_url, tmp_path / "gone.log").start()
    fetched = []

    def fetch(keyword, page):
        fetched.append(page)
        server.stop()  # the API goes away while the page is fetched
        return [{"job_id": "python-1"}], 2

    try:
        with KeywordClient(server.url, token=server.token, timeout=10) as client:
            with pytest.raises(ApiUnreachable, match=f"POST {server.url}/api/v1/postings: "):
                crawl(client, "qcwy", fetch, crawler_id="plain-crawler")
    finally:
        server.stop()
    assert fetched == [1]
    # not ended failed (the keyword did nothing wrong), and the give-back could not reach the API
    # either: the keyword stays the crawler's until FARM_LEASE_TIMEOUT reaps it
    [row] = store.list_keywords()
    assert (row["crawl_status"], row["retry_count"], row["last_completed_page"]) == ("crawling", 0, 0)


def test_a_call_where_nothing_listens_is_api_unreachable_naming_the_url():
    with socket.socket() as taken:  # a port that was free: nothing listens on it once this closes
        taken.bind(("127.0.0.1", 0))
        url = f"http://127.0.0.1:{taken.getsockname()[1]}"
    with KeywordClient(url, timeout=5) as client:
        with pytest.raises(ApiUnreachable, match=f"GET {url}/api/v1/keyword/stats: .*refused"):
            client.stats()


class RetryAfterServer:
    """A real HTTP server answering each request 503 with the next Retry-After given, then 200."""

    def __init__(self, values):
        values = list(values)
        self.asked = 0

        class Handler(BaseHTTPRequestHandler):
            def do_GET(handler):
                self.asked += 1
                body = b'{"detail": "unavailable"}' if values else b"[]"
                handler.send_response(503 if values else 200)
                if values:
                    handler.send_header("Retry-After", values.pop(0))
                handler.send_header("Content-Type", "application/json")
                handler.send_header("Content-Length", str(len(body)))
                handler.end_headers()
                handler.wfile.write(body)

            def log_message(handler, *args):
                pass

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}"
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()

    def close(self):
        self.httpd.shutdown()
        self.httpd.server_close()


def test_retry_after_is_seconds_or_an_http_date_never_negative_and_capped():
    past = format_datetime(datetime.now(UTC) - timedelta(hours=1), usegmt=True)
    soon = format_datetime(datetime.now(UTC) + timedelta(seconds=120), usegmt=True)
    server = RetryAfterServer(["2", "1e9", "-5", past, soon, "nan"])
    slept = []
    try:
        with KeywordClient(server.url, retries=10, sleep=slept.append) as client:
            assert client.stats() == []
    finally:
        server.close()
    assert server.asked == 7
    assert slept[:4] == [2.0, RETRY_AFTER_MAX, 0.0, 0.0]
    assert 110 < slept[4] <= 120  # an HTTP date: the seconds until then
    assert slept[5] == RETRY_AFTER_DEFAULT  # unreadable
