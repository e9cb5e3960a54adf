"""The keyword API over real HTTP, against a running `farm api`, on SQLite and on MariaDB.

The server runs on a clock the test moves (``--test-clock``), and the test reads the
keyword table through a store on the same database and clock.
"""

import time
from datetime import UTC, date, datetime, timedelta

import orjson
import pytest
from sqlalchemy import func, select

from farm.items import JobPosting
from farm.state import KeywordStore
from farm.state.db import make_engine
from farm.state.models import JobPostingRow
from farm.state.normalise import key_problem
from farm.writer.frames import decode, frame
from tests.integration.api_harness import SHANGHAI, ApiServer, ServerClock
from tests.migrated import migrated

AVAILABLE = "/api/v1/keyword/available"
STATS = "/api/v1/keyword/stats"
START = datetime(2025, 3, 10, 12, 0, 0, tzinfo=SHANGHAI)
P = JobPostingRow.__table__


@pytest.fixture
def clock(tmp_path):
    return ServerClock(tmp_path / "clock.txt", START)


@pytest.fixture
def store(db_url, clock):
    migrated(db_url)
    engine = make_engine(db_url)
    yield KeywordStore(engine, clock=clock)
    engine.dispose()


@pytest.fixture
def server(db_url, store, clock, tmp_path):
    # reaping every 0.2 s, so that a test sees a stale lease reaped soon after it moves the clock
    with ApiServer(db_url, tmp_path / "api.log", clock=clock, env={"FARM_REAP_INTERVAL": "0.2"}) as server:
        yield server
    assert "Traceback" not in server.log()


@pytest.fixture
def http(server):
    with server.client() as client:
        yield client


def add(store, *jobs, source="boss"):
    store.add_keywords([(source, "北京", job) for job in jobs])
    return {r["job"]: r["id"] for r in store.list_keywords(source=source)}


def row(store, kid):
    [r] = [r for r in store.list_keywords() if r["id"] == kid]
    return r


def claim(http, n=1, who="w1", source="boss"):
    deadline = time.monotonic() + 10
    while True:
        r = http.post(AVAILABLE, json={"source": source, "limit": n, "crawler_id": who})
        assert r.status_code == 200, r.text
        answer = r.json()
        # claimable > 0 with nothing claimed: the reaper held the rows locked for a moment (ask again)
        if answer["keywords"] or not answer["claimable"] or time.monotonic() > deadline:
            return answer
        time.sleep(0.05)


def claimed(http, n=1, who="w1", source="boss"):
    return claim(http, n, who, source)["keywords"]


def write(http, path, keyword, **body):
    """POST /api/v1/<path> for a claimed ``keyword`` (its id and lease token), plus ``body``."""
    return http.post(
        f"/api/v1/{path}", json={"keyword_id": keyword["id"], "lease_token": keyword["lease_token"], **body}
    )


def page(http, keyword, number, jobs, total=None):
    body = {"page": number, "jobs_found": jobs}
    if total is not None:
        body["total_pages"] = total
    return write(http, "keyword/page-progress", keyword, **body)


def end(http, keyword, status, message=None):
    body = {"status": status} if message is None else {"status": status, "error_message": message}
    return write(http, "keyword/crawl-complete", keyword, **body)


def ok(response):
    assert response.status_code == 200, response.text
    return response.json()


def wait_until(condition, timeout=10):
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, "condition not met in time"
        time.sleep(0.05)


# --- the cycle ------------------------------------------------------------------


def test_claim_progress_complete_cycle(store, http, clock):
    kid = add(store, "python", "java")
    listed = ok(http.get(AVAILABLE, params={"source": "boss", "limit": 5}))
    assert (listed["reserved"], listed["claimable"], listed["next_retry_at"]) == (False, 2, None)
    assert [(k["job"], k["claim_kind"], k["crawl_status"], k["lease_token"]) for k in listed["keywords"]] == [
        ("python", "fresh", "idle", None),
        ("java", "fresh", "idle", None),
    ]
    assert {r["crawl_status"] for r in store.list_keywords()} == {"idle"}, "a listing claims nothing"

    got = claim(http, n=1, who="crawler-a")
    assert (got["reserved"], got["claimable"]) == (True, None)
    [kw] = got["keywords"]
    assert kw == {
        "id": kid["python"],
        "source": "boss",
        "city": "北京",
        "job": "python",
        "crawl_status": "crawling",
        "claim_kind": "fresh",
        "last_completed_page": 0,
        "total_pages": None,
        "pages_done_ahead": [],
        "retry_count": 0,
        "lease_token": kw["lease_token"],
    }
    assert 0 < kw["lease_token"] < 2**53
    r = row(store, kw["id"])
    assert (r["crawl_status"], r["crawler_id"], r["lease_token"]) == ("crawling", "crawler-a", kw["lease_token"])
    assert (r["last_requested_date"], r["heartbeat_at"]) == (date(2025, 3, 10), clock.now)

    # pages out of order; a page reported again counts its jobs once
    assert ok(page(http, kw, 2, 15, total=3)) == {
        "keyword_id": kw["id"],
        "page": 2,
        "counted": True,
        "last_completed_page": 0,
        "total_pages": 3,
        "completed": False,
        "crawl_status": "crawling",
    }
    assert ok(page(http, kw, 2, 15))["counted"] is False
    assert ok(page(http, kw, 1, 15))["last_completed_page"] == 2
    r = row(store, kw["id"])
    assert (r["last_completed_page"], r["pages_ahead"], r["jobs_found"]) == (2, "", 30)

    clock.advance(minutes=10)
    last = ok(page(http, kw, 3, 7))
    assert (last["completed"], last["crawl_status"], last["last_completed_page"]) == (True, "completed", 3)
    # the client's own end after its last page completed the keyword: the same answer
    assert ok(end(http, kw, "completed")) == {"keyword_id": kw["id"], "crawl_status": "completed"}
    r = row(store, kw["id"])
    assert (r["crawl_status"], r["jobs_found"], r["heartbeat_at"]) == ("completed", 37, clock.now)

    stats = ok(http.get(STATS, params={"source": "boss"}))
    assert stats == [
        {
            "date": "2025-03-10",
            "source": "boss",
            "total": 2,
            "used": 1,
            "unused": 1,
            "crawl_status": {"crawling": 0, "completed": 1, "failed": 0, "partial": 0},
            "jobs_found": 37,
            "pages": 3,
            # one keyword ended in the 10 minutes since the day's first claim; one is left
            "eta": "2025-03-10T12:20:00+08:00",
        }
    ]
    assert [s["source"] for s in ok(http.get(STATS))] == ["boss", "qcwy", "zhilian"]
    yesterday = ok(http.get(STATS, params={"source": "boss", "date": "2025-03-09"}))
    assert (yesterday[0]["used"], yesterday[0]["pages"], yesterday[0]["eta"]) == (0, 0, None)


def test_resume_after_partial_at_the_next_unfinished_page(store, http):
    add(store, "python")
    [kw] = claimed(http, who="a")
    ok(page(http, kw, 1, 15, total=4))
    ok(page(http, kw, 3, 15))
    assert ok(end(http, kw, "partial", "stopping for the night"))["crawl_status"] == "partial"
    r = row(store, kw["id"])
    assert (r["crawl_status"], r["error_message"], r["pages_ahead"]) == ("partial", "stopping for the night", "3")

    [again] = claimed(http, who="b")
    assert again == {
        "id": kw["id"],
        "source": "boss",
        "city": "北京",
        "job": "python",
        "crawl_status": "crawling",
        "claim_kind": "partial",
        "last_completed_page": 1,
        "total_pages": 4,
        "pages_done_ahead": [3],
        "retry_count": 0,
        "lease_token": again["lease_token"],
    }
    assert again["lease_token"] != kw["lease_token"]
    assert ok(page(http, again, 2, 15))["last_completed_page"] == 3
    assert ok(page(http, again, 4, 3))["completed"] is True
    r = row(store, kw["id"])
    assert (r["crawl_status"], r["jobs_found"], r["crawler_id"]) == ("completed", 48, "b")


def test_stale_or_unknown_token_gets_409_with_the_holders_state(store, http, clock):
    kid = add(store, "python")["python"]
    [old] = claimed(http, who="a")
    ok(page(http, old, 1, 15, total=3))
    ok(end(http, old, "partial"))
    [new] = claimed(http, who="b")
    assert new["lease_token"] != old["lease_token"]
    before = row(store, kid)
    holder = {
        "id": kid,
        "source": "boss",
        "city": "北京",
        "job": "python",
        "crawl_status": "crawling",
        "crawler_id": "b",
        "last_requested_date": "2025-03-10",
        "last_completed_page": 1,
        "total_pages": 3,
        "jobs_found": 15,
        "lease_current": False,
    }
    refused = [
        ("keyword/page-progress", {"page": 2, "jobs_found": 15}),
        ("keyword/heartbeat", {}),
        ("keyword/crawl-complete", {"status": "completed"}),
        ("keyword/crawl-complete", {"status": "failed", "error_message": "boom"}),
        ("keyword/crawl-complete", {"status": "blocked"}),
        ("postings", {"postings": [{"job_id": "j1"}], "page": {"number": 2}}),
    ]
    for path, body in refused:
        r = write(http, path, old, **body)
        assert r.status_code == 409, (path, r.text)
        answer = r.json()
        assert f"lease token {old['lease_token']} " in answer["detail"]
        assert str(new["lease_token"]) not in r.text, "a 409 never tells the current token"
        state = answer["keyword"]
        assert datetime.fromisoformat(state.pop("heartbeat_at")) == clock.now
        assert state == holder  # and never the current token
    assert row(store, kid) == before, "a refused write changes nothing"
    with store.engine.connect() as conn:
        assert conn.execute(select(func.count()).select_from(P)).scalar_one() == 0

    never_given = page(http, {"id": kid, "lease_token": old["lease_token"] + 1}, 2, 15)
    assert never_given.status_code == 409 and never_given.json()["keyword"]["lease_current"] is False
    unknown = page(http, {"id": kid + 1000, "lease_token": 1}, 2, 15)
    assert (unknown.status_code, unknown.json()) == (404, {"detail": f"no keyword has id {kid + 1000}"})
    for path in ("keyword/heartbeat", "keyword/crawl-complete", "postings"):
        body = {"status": "completed"} if path.endswith("complete") else {"postings": []} if path == "postings" else {}
        assert write(http, path, {"id": kid + 1000, "lease_token": 1}, **body).status_code == 404

    # the lease's last page completed the keyword: the same lease is told so (lease_current)
    ok(page(http, new, 2, 15))
    ok(page(http, new, 3, 15))
    late = page(http, new, 3, 15)
    assert late.status_code == 409
    assert (late.json()["keyword"]["lease_current"], late.json()["keyword"]["crawl_status"]) == (True, "completed")
    assert ok(end(http, new, "completed"))["crawl_status"] == "completed"
    assert end(http, new, "failed", "too late").status_code == 409
    assert row(store, kid)["crawl_status"] == "completed"


# --- time: day rollover, retries, stale leases -----------------------------------


def test_day_rollover_makes_keywords_fresh_and_keeps_live_leases(store, http, clock):
    kid = add(store, "python", "java")
    clock.set_local(2025, 3, 10, 23, 50)
    [py] = claimed(http, who="a")
    ok(page(http, py, 1, 15, total=1))
    [jv] = claimed(http, who="a")
    ok(page(http, jv, 1, 15, total=3))  # java is still crawling at midnight
    nothing = claim(http, who="b")
    assert (nothing["keywords"], nothing["claimable"], nothing["next_retry_at"]) == ([], 0, None)

    clock.set_local(2025, 3, 11, 0, 10)
    assert ok(write(http, "keyword/heartbeat", jv))["lease_timeout"] == 1800  # a live lease across midnight
    got = claimed(http, n=5, who="b")
    assert [(k["job"], k["claim_kind"], k["last_completed_page"], k["total_pages"]) for k in got] == [
        ("python", "fresh", 0, None)
    ]
    assert got[0]["lease_token"] != py["lease_token"]
    r = row(store, kid["python"])
    assert (r["last_requested_date"], r["jobs_found"], r["crawl_status"]) == (date(2025, 3, 11), 0, "crawling")
    ok(page(http, jv, 2, 15))  # yesterday's holder still writes
    [today] = ok(http.get(STATS, params={"source": "boss"}))
    assert (today["date"], today["used"], today["unused"], today["crawl_status"]["crawling"]) == ("2025-03-11", 1, 1, 1)
    [day_before] = ok(http.get(STATS, params={"source": "boss", "date": "2025-03-10"}))
    assert (day_before["used"], day_before["crawl_status"]["crawling"], day_before["pages"]) == (1, 1, 2)

    # java's holder stops writing: once its lease times out, java is today's to claim afresh
    clock.advance(seconds=1801)
    wait_until(lambda: row(store, kid["python"])["crawl_status"] == "partial")  # the server's reaper
    got = claimed(http, n=5, who="c")
    assert [(k["job"], k["claim_kind"]) for k in got] == [("python", "partial"), ("java", "fresh")]
    assert page(http, jv, 3, 15).status_code == 409  # yesterday's holder is fenced off now


def test_failed_keyword_is_retried_after_the_delay_while_retries_are_left(store, http, clock):
    kid = add(store, "python")["python"]
    [kw] = claimed(http)
    for retry in (1, 2, 3):
        assert ok(end(http, kw, "failed", f"parse error {retry}"))["crawl_status"] == "failed"
        due = clock.now + timedelta(seconds=600)
        assert row(store, kid)["error_message"] == f"parse error {retry}"
        waiting = claim(http)
        assert (waiting["keywords"], waiting["claimable"]) == ([], 0)
        assert datetime.fromisoformat(waiting["next_retry_at"]) == due
        clock.advance(seconds=601)
        [kw] = claimed(http)
        assert (kw["claim_kind"], kw["retry_count"]) == ("failed", retry)
    ok(end(http, kw, "failed", "parse error 4"))
    clock.advance(seconds=601)
    spent = claim(http)
    assert (spent["keywords"], spent["claimable"], spent["next_retry_at"]) == ([], 0, None)
    assert (row(store, kid)["crawl_status"], row(store, kid)["retry_count"]) == ("failed", 3)


def test_blocked_ends_partial_until_the_day_has_too_many_blocks(store, http):
    kid = add(store, "python")["python"]
    for block in range(1, 6):  # FARM_MAX_BLOCKED_CLAIMS is 5
        [kw] = claimed(http)
        written = ok(end(http, kw, "blocked"))["crawl_status"]
        assert written == ("partial" if block < 5 else "failed")
        assert row(store, kid)["blocked_claims"] == block
    assert "blocked 5 times today" in row(store, kid)["error_message"]
    assert claim(http)["keywords"] == []


def test_a_lease_without_heartbeat_is_reaped_and_resumed_a_live_one_is_kept(store, http, clock):
    kid = add(store, "python", "java")
    silent, beating = claimed(http, n=2, who="a")
    ok(page(http, silent, 1, 15, total=3))
    ok(page(http, beating, 1, 15, total=3))
    clock.advance(seconds=1000)
    ok(write(http, "keyword/heartbeat", beating))
    clock.advance(seconds=1000)  # silent: 2000 s without a write; beating: 1000 s
    wait_until(lambda: row(store, silent["id"])["crawl_status"] == "partial")
    assert row(store, silent["id"])["error_message"].startswith("reaped at")
    assert row(store, beating["id"])["crawl_status"] == "crawling"
    [resumed] = claimed(http, n=5, who="b")
    assert (resumed["id"], resumed["claim_kind"], resumed["last_completed_page"]) == (kid["python"], "partial", 1)
    assert resumed["lease_token"] != silent["lease_token"]
    assert page(http, silent, 2, 15).status_code == 409
    assert ok(page(http, beating, 2, 15))["last_completed_page"] == 2


# --- postings -------------------------------------------------------------------

POSTING = {
    "title": "Python 开发工程师",
    "salary": "15-25K·13薪",
    "company": "某某科技有限公司",
    "city": "北京",
    "area": "海淀区",
    "experience": "3-5年",
    "degree": "本科",
    "tags": ["Django", "五险一金"],
    "url": "https://jobs.example.invalid/j/1.html",
    "raw": {"jobId": 123, "nested": {"list": [1, 2.5, None, True, "文字"]}, "emoji": "🐍"},
}
PUBLISHED = "2025-03-09T10:30:00+08:00"


def posting_rows(store):
    with store.engine.connect() as conn:
        return {r.job_id: r._asdict() for r in conn.execute(select(P))}


def test_postings_are_stored_as_the_pipeline_stores_them(store, http, clock):
    kid = add(store, "python", source="qcwy")["python"]
    [kw] = claimed(http, source="qcwy")
    sent = [{"job_id": "api-1", **POSTING, "published_at": PUBLISHED}, {"job_id": "api-2", **POSTING}]
    answer = ok(write(http, "postings", kw, postings=sent, page={"number": 1, "total_pages": 2}))
    assert answer == {
        "keyword_id": kid,
        "postings": 2,
        "rejected": [],
        "page": {
            "keyword_id": kid,
            "page": 1,
            "counted": True,
            "last_completed_page": 1,
            "total_pages": 2,
            "completed": False,
            "crawl_status": "crawling",
        },
    }
    assert row(store, kid)["jobs_found"] == 2  # the postings sent, when jobs_found is not given

    # the same posting the crawl's way: the pipeline's JSON row, the state writer's decoding, its write
    item = JobPosting(
        source="qcwy", job_id="crawl-1", keyword_id=kid, published_at=datetime.fromisoformat(PUBLISHED), **POSTING
    )
    assert key_problem(item._values) is None
    postings = decode(frame([orjson.dumps(item._values)], [])[4:]).postings
    store.write_batch(postings, [], clock.now)

    rows = posting_rows(store)
    assert set(rows) == {"api-1", "api-2", "crawl-1"}
    via_api, via_crawl = rows["api-1"], rows["crawl-1"]
    for r in (via_api, via_crawl):
        r.pop("id"), r.pop("job_id")
    assert via_api == via_crawl
    assert (via_api["keyword_id"], via_api["source"], via_api["raw"]["emoji"]) == (kid, "qcwy", "🐍")
    assert via_api["published_at"] == datetime(2025, 3, 9, 2, 30, tzinfo=UTC)
    assert rows["api-2"]["published_at"] is None

    # a retried request: each posting stays one row, the page counts once
    clock.advance(minutes=5)
    again = ok(write(http, "postings", kw, postings=sent, page={"number": 1}))
    assert (again["postings"], again["page"]["counted"]) == (2, False)
    rows = posting_rows(store)
    assert len(rows) == 3 and rows["api-1"]["last_seen_at"] == clock.now
    assert rows["api-1"]["first_seen_at"] == clock.now - timedelta(minutes=5)
    assert row(store, kid)["jobs_found"] == 2

    # postings alone, then the last page with jobs_found of its own: it completes the keyword
    ok(write(http, "postings", kw, postings=[{"job_id": "api-3"}]))
    assert row(store, kid)["last_completed_page"] == 1
    last = ok(write(http, "postings", kw, postings=[{"job_id": "api-4"}], page={"number": 2, "jobs_found": 20}))
    assert (last["page"]["completed"], row(store, kid)["jobs_found"]) == (True, 22)
    assert set(posting_rows(store)) == {"api-1", "api-2", "api-3", "api-4", "crawl-1"}


def test_postings_of_an_ended_lease_are_refused(store, http):
    add(store, "python", source="qcwy")
    [kw] = claimed(http, source="qcwy")
    ok(end(http, kw, "partial"))
    late = write(http, "postings", kw, postings=[{"job_id": "a"}], page={"number": 1})
    assert late.status_code == 409 and late.json()["keyword"]["crawl_status"] == "partial"
    assert posting_rows(store) == {}, "nothing stored for a lease that is not current"


# --- invalid requests -------------------------------------------------------------


def test_invalid_requests_get_422_naming_the_field(store, http):
    add(store, "python")
    [kw] = claimed(http)
    lease = {"keyword_id": kw["id"], "lease_token": kw["lease_token"]}
    progress = {**lease, "page": 1, "jobs_found": 15}
    cases = [
        ("GET", AVAILABLE, {}, ["query", "source"]),
        ("GET", AVAILABLE, {"source": "lagou"}, ["query", "source"]),
        ("GET", AVAILABLE, {"source": "boss", "limit": 0}, ["query", "limit"]),
        ("GET", AVAILABLE, {"source": "boss", "limit": 101}, ["query", "limit"]),
        ("POST", AVAILABLE, {"limit": 1}, ["body", "source"]),
        ("POST", AVAILABLE, {"source": "boss", "limit": "5"}, ["body", "limit"]),
        ("POST", AVAILABLE, {"source": "boss", "crawler_id": "x" * 129}, ["body", "crawler_id"]),
        ("POST", AVAILABLE, {"source": "boss", "reserve": True}, ["body", "reserve"]),
        ("GET", STATS, {"date": "2025-13-01"}, ["query", "date"]),
        ("GET", STATS, {"date": "0"}, ["query", "date"]),
        ("GET", STATS, {"source": "all"}, ["query", "source"]),
        ("POST", "keyword/page-progress", {**progress, "page": 0}, ["body", "page"]),
        ("POST", "keyword/page-progress", {**progress, "page": 284}, ["body", "page"]),
        ("POST", "keyword/page-progress", {**progress, "keyword_id": str(kw["id"])}, ["body", "keyword_id"]),
        ("POST", "keyword/page-progress", {**progress, "jobs_found": -1}, ["body", "jobs_found"]),
        ("POST", "keyword/page-progress", {**progress, "jobs_found": True}, ["body", "jobs_found"]),
        ("POST", "keyword/page-progress", {**progress, "lease_token": 2**53}, ["body", "lease_token"]),
        ("POST", "keyword/page-progress", {**progress, "source": "lagou"}, ["body", "source"]),
        (
            "POST",
            "keyword/page-progress",
            {"keyword_id": kw["id"], "page": 1, "jobs_found": 1},
            ["body", "lease_token"],
        ),
        ("POST", "keyword/page-progress", {**progress, "token": 1}, ["body", "token"]),
        ("POST", "keyword/crawl-complete", {**lease, "status": "done"}, ["body", "status"]),
        (
            "POST",
            "keyword/crawl-complete",
            {**lease, "status": "failed", "error_message": 5},
            ["body", "error_message"],
        ),
        (
            "POST",
            "postings",
            {**lease, "postings": [{"job_id": "a", "published_at": "2025-03-10T09:30:00"}]},
            ["body", "postings", 0, "published_at"],
        ),
        (
            "POST",
            "postings",
            {**lease, "postings": [{"job_id": "a", "published_at": "1969-12-31T09:30:00Z"}]},
            ["body", "postings", 0, "published_at"],
        ),
        (
            "POST",
            "postings",
            {**lease, "postings": [{"job_id": "a", "title": "x" * 256}]},
            ["body", "postings", 0, "title"],
        ),
        ("POST", "postings", {**lease, "postings": [{"job_id": ""}]}, ["body", "postings", 0, "job_id"]),
        (
            "POST",
            "postings",
            {**lease, "postings": [{"job_id": "a", "keyword_id": 5}]},
            ["body", "postings", 0, "keyword_id"],
        ),
        (
            "POST",
            "postings",
            {**lease, "postings": [{"job_id": "a", "source": "boss"}]},
            ["body", "postings", 0, "source"],
        ),
        ("GET", AVAILABLE, {"source": "boss", "skip_partial": "x"}, ["query", "skip_partial", 0]),
        (
            "POST",
            "postings",
            {**lease, "postings": [], "page": {"number": 1, "total_pages": 0}},
            ["body", "page", "total_pages"],
        ),
        ("POST", "postings", {**lease, "postings": [{"job_id": str(i)} for i in range(1001)]}, ["body", "postings"]),
    ]
    for method, path, data, loc in cases:
        url = path if path.startswith("/") else f"/api/v1/{path}"
        r = http.get(url, params=data) if method == "GET" else http.post(url, json=data)
        assert r.status_code == 422, (path, data, r.text)
        assert loc in [error["loc"] for error in r.json()["detail"]], (path, r.text)

    # what json cannot say: a lone surrogate; and a body that is not JSON
    surrogate = http.post(
        "/api/v1/postings",
        content=b'{"keyword_id": %d, "lease_token": 1, "postings": [{"job_id": "a", "title": "\\ud800"}]}' % kw["id"],
        headers={"content-type": "application/json"},
    )
    assert surrogate.status_code == 422
    assert ["body", "postings", 0, "title"] in [e["loc"] for e in surrogate.json()["detail"]]
    surrogate_key = http.post(
        "/api/v1/postings",
        content=b'{"keyword_id": %d, "lease_token": 1, "postings": '
        b'[{"job_id": "a", "raw": {"\\udc80": 1}}]}' % kw["id"],
        headers={"content-type": "application/json"},
    )
    assert surrogate_key.status_code == 422
    broken = http.post(
        "/api/v1/keyword/heartbeat", content=b'{"keyword_id": ', headers={"content-type": "application/json"}
    )
    assert broken.status_code == 400 and broken.json()["detail"].startswith("the body is not JSON")
    deep = b'{"keyword_id": 1, "lease_token": 1, "postings": [{"job_id": "a", "raw": ' + b'{"a": ' * 5000
    assert http.post("/api/v1/postings", content=deep, headers={"content-type": "application/json"}).status_code == 400
    nested = {"job_id": "a", "raw": {}}
    inner = nested["raw"]
    for _ in range(300):
        inner["a"] = {}
        inner = inner["a"]
    too_deep = http.post("/api/v1/postings", json={**lease, "postings": [nested]})
    assert too_deep.status_code == 422 and len(too_deep.content) < 50_000
    # none of it reached the table
    r = row(store, kw["id"])
    assert (r["crawl_status"], r["last_completed_page"], r["jobs_found"]) == ("crawling", 0, 0)
    assert posting_rows(store) == {}
