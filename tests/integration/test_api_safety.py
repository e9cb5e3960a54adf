"""`farm api` as a careless or hostile client meets it: guessed tokens, claims a web page makes,
numbers JSON cannot carry, clients that trickle, forged log lines, a write that names another site.

Each test runs a real `farm api` on SQLite (the database plays no part in what is checked here).
"""

import socket
import time
from datetime import datetime

import pytest

from farm.api.client import KeywordClient
from farm.state import KeywordStore
from farm.state.db import make_engine
from tests.integration.api_harness import SHANGHAI, ApiServer, ServerClock
from tests.migrated import migrated

AVAILABLE = "/api/v1/keyword/available"
READ_TIMEOUT = 1  # FARM_API_READ_TIMEOUT of the server that meets slow clients


@pytest.fixture
def store(sqlite_url, tmp_path):
    migrated(sqlite_url)
    engine = make_engine(sqlite_url)
    clock = ServerClock(tmp_path / "clock.txt", datetime(2025, 3, 10, 12, 0, tzinfo=SHANGHAI))
    store = KeywordStore(engine, clock=clock)
    store.add_keywords([("boss", "北京", job) for job in ("python", "java", "golang")])
    yield store
    engine.dispose()


def start(store, tmp_path, token="default", env=None) -> ApiServer:
    kwargs = {} if token == "default" else {"token": token}
    return ApiServer(str(store.engine.url), tmp_path / "api.log", clock=store.clock, env=env, **kwargs)


@pytest.fixture
def server(store, tmp_path):
    with start(store, tmp_path, env={"FARM_REAP_INTERVAL": "0.2"}) as server:
        yield server
    assert "Traceback" not in server.log(), server.log()[-3000:]


@pytest.fixture
def http(server):
    with server.client() as client:
        yield client


def statuses(store) -> dict:
    return {r["job"]: r["crawl_status"] for r in store.list_keywords()}


def port_of(server) -> int:
    return int(server.url.rsplit(":", 1)[1])


# --- lease tokens ------------------------------------------------------------------


def claimed(store, who="a") -> dict:
    """A keyword claimed as the API's clients see it (claimed through the store: the claim is not under test)."""
    [lease] = store.claim("boss", who)
    return {"id": lease.id, "lease_token": lease.lease_token}


def test_a_reaped_holder_cannot_guess_the_new_holders_token(store, server, http):
    a = claimed(store, "a")
    store.clock.advance(seconds=1801)  # a stops heartbeating: the server's reaper takes its lease back
    deadline = time.monotonic() + 10
    while statuses(store)["python"] != "partial":
        assert time.monotonic() < deadline, "the lease was not reaped"
        time.sleep(0.05)
    b = claimed(store, "b")
    assert b["id"] == a["id"] and b["lease_token"] != a["lease_token"]
    # the next tokens after a's, as sequential tokens would have made b's: none is b's
    for guess in range(max(1, a["lease_token"] - 2), a["lease_token"] + 10):
        r = http.post(
            "/api/v1/keyword/crawl-complete",
            json={"keyword_id": a["id"], "lease_token": guess, "status": "failed", "error_message": "A's"},
        )
        assert r.status_code == 409, (guess, r.text)
        answer = r.json()  # a 409 never tells the current token
        assert "lease_token" not in answer["keyword"] and str(b["lease_token"]) not in answer["detail"]
    assert statuses(store)["python"] == "crawling"
    # tokens are no count of claims: three claims, three tokens with nothing between them in common
    tokens = [claimed(store)["lease_token"], claimed(store)["lease_token"], b["lease_token"]]
    assert all(0 < token < 2**53 for token in tokens) and max(tokens) - min(tokens) > 1000
    assert (
        http.post(
            "/api/v1/keyword/heartbeat", json={"keyword_id": b["id"], "lease_token": b["lease_token"]}
        ).status_code
        == 200
    )


# --- a claim is a POST; a loopback server without a token serves no web page -----


def test_a_get_never_claims_and_a_get_asking_to_reserve_is_told_to_post(store, http):
    listed = http.get(AVAILABLE, params={"source": "boss", "limit": 5})
    assert listed.status_code == 200 and [k["lease_token"] for k in listed.json()["keywords"]] == [None] * 3
    for reserve in ("true", "1", "yes"):
        r = http.get(AVAILABLE, params={"source": "boss", "reserve": reserve})
        assert r.status_code == 405, r.text
        assert r.headers["allow"] == "POST" and "POST /api/v1/keyword/available" in r.json()["detail"]
    assert set(statuses(store).values()) == {"idle"}, "no GET claimed anything"

    by_query = http.post(AVAILABLE, params={"source": "boss", "crawler_id": "q"})
    by_body = http.post(AVAILABLE, json={"source": "boss", "crawler_id": "j", "limit": 1})
    old_url = http.post(AVAILABLE, params={"source": "boss", "reserve": "true", "crawler_id": "u"})
    assert [r.status_code for r in (by_query, by_body, old_url)] == [200, 200, 200]
    assert [r.json()["keywords"][0]["job"] for r in (by_query, by_body, old_url)] == ["python", "java", "golang"]
    both = http.post(AVAILABLE, params={"source": "boss"}, json={"source": "boss"})
    assert both.status_code == 422 and "not both" in both.text
    assert {r["crawler_id"] for r in store.list_keywords()} == {"q", "j", "u"}


def test_the_client_claims_with_a_post(store, server):
    with KeywordClient(server.url, token=server.token) as client:
        assert [k["job"] for k in client.available("boss", limit=3)["keywords"]] == ["python", "java", "golang"]
        [claim], _ = client.claim("boss", "me")
    assert claim.job == "python" and statuses(store)["python"] == "crawling"
    assert f'"POST {AVAILABLE} HTTP/1.1" 200' in server.log()


def test_a_loopback_server_without_a_token_refuses_other_hosts_and_other_sites(store, tmp_path):
    with start(store, tmp_path, token=None) as server:
        port = port_of(server)
        with server.client() as http:
            refused = [
                ({"Host": f"rebound.example:{port}"}, 400),  # DNS rebinding: the page's own name
                ({"Host": "rebound.example"}, 400),
                ({"Origin": "http://evil.example"}, 403),  # a form or fetch() from a page
                ({"Origin": "null"}, 403),
                ({"Origin": f"http://localhost:{port + 1}"}, 403),  # another local web app
                ({"Origin": f"https://127.0.0.1:{port}"}, 403),
                ({"Sec-Fetch-Site": "cross-site"}, 403),  # an <img> or a link
                ({"Sec-Fetch-Site": "same-site"}, 403),
            ]
            for headers, status in refused:
                r = http.post(AVAILABLE, params={"source": "boss"}, headers=headers)
                assert r.status_code == status, (headers, r.text)
                assert http.get("/api/v1/keyword/stats", headers=headers).status_code == status
            assert set(statuses(store).values()) == {"idle"}
            accepted = [
                {"Host": f"127.0.0.1:{port}"},
                {"Host": f"localhost:{port}"},
                {"Host": f"localhost:{port + 1}"},  # through an SSH tunnel, a container's port map
                {"Origin": f"http://127.0.0.1:{port}", "Sec-Fetch-Site": "same-origin"},
                {"Sec-Fetch-Site": "none"},
            ]
            for headers in accepted:
                r = http.post(AVAILABLE, params={"source": "boss"}, headers=headers)
                assert r.status_code == 200, (headers, r.text)
        assert "rebound.example" in server.log()
        assert "Traceback" not in server.log()
    with start(store, tmp_path) as server, server.client(headers={"Host": "api.example"}) as http:
        # with a token the API may sit behind any name (a proxy's): the token decides
        assert http.get("/api/v1/keyword/stats").status_code == 200


# --- numbers JSON cannot carry; bodies that are not JSON ------------------------


def test_nan_infinity_and_overflowing_numbers_are_422_naming_the_field(store, server, http):
    kw = claimed(store)
    lease = b'"keyword_id": %d, "lease_token": %d' % (kw["id"], kw["lease_token"])
    cases = [
        ("keyword/page-progress", b'{%s, "page": NaN, "jobs_found": 1}' % lease, ["body", "page"]),
        ("keyword/page-progress", b'{%s, "page": 1, "jobs_found": Infinity}' % lease, ["body", "jobs_found"]),
        ("keyword/page-progress", b'{%s, "page": 1e400, "jobs_found": 1}' % lease, ["body", "page"]),
        ("keyword/heartbeat", b'{"keyword_id": -Infinity, "lease_token": 1}', ["body", "keyword_id"]),
        ("keyword/heartbeat", b'{"keyword_id": 1, "lease_token": NaN}', ["body", "lease_token"]),
        ("postings", b'{%s, "postings": [{"job_id": NaN}]}' % lease, ["body", "postings", 0, "job_id"]),
        (
            "postings",
            b'{%s, "postings": [{"job_id": "a", "raw": {"pay": [1, {"max": 1e999}]}}]}' % lease,
            ["body", "postings", 0, "raw"],
        ),
        ("postings", b'{%s, "postings": [], "page": {"number": -1e400}}' % lease, ["body", "page", "number"]),
    ]
    for path, body, loc in cases:
        url = path if path.startswith("/") else f"/api/v1/{path}"
        r = http.post(url, content=body, headers={"content-type": "application/json"})
        assert r.status_code == 422, (body, r.text)
        errors = r.json()["detail"]
        assert loc in [error["loc"] for error in errors], (body, r.text)
        assert all({"loc", "msg", "type"} <= set(error) for error in errors)
    finite = http.post(
        "/api/v1/keyword/page-progress",
        content=b'{%s, "page": 1.5e0, "jobs_found": 1}' % lease,
        headers={"content-type": "application/json"},
    )
    assert "finite" not in finite.text
    nan = http.post(
        "/api/v1/keyword/page-progress",
        content=b'{%s, "page": NaN, "jobs_found": 1}' % lease,
        headers={"content-type": "application/json"},
    )
    assert "must be a finite number" in nan.text
    assert (
        http.post(
            "/api/v1/keyword/heartbeat", json={"keyword_id": kw["id"], "lease_token": kw["lease_token"]}
        ).status_code
        == 200
    ), "nothing of it was written"
    assert '" 500' not in server.log()
    claim = http.post(
        AVAILABLE, content=b'{"source": "boss", "limit": NaN}', headers={"content-type": "application/json"}
    )
    assert claim.status_code == 422 and ["body", "limit"] in [error["loc"] for error in claim.json()["detail"]]


def test_a_body_that_is_not_json_is_400_or_415_as_the_openapi_document_says(store, server, http):
    document = http.get("/openapi.json").json()
    schemas = document["components"]["schemas"]
    posts = {path: item["post"] for path, item in document["paths"].items() if "post" in item}
    for path, operation in sorted(posts.items(), key=lambda item: item[0] == AVAILABLE):  # the writes first
        documented = operation["responses"]
        assert documented["400"]["content"]["application/json"]["schema"]["$ref"].endswith("/Problem"), path
        assert documented["422"]["content"]["application/json"]["schema"]["$ref"].endswith("/HTTPValidationError")
        for body, content_type, status in (
            (b'{"keyword_id": ', "application/json", 400),
            (b"\xff\xfe", "application/json", 400),
            (b"source=boss", "application/x-www-form-urlencoded", 415),
        ):
            r = http.post(path, content=body, headers={"content-type": content_type})
            assert r.status_code == status, (path, body, r.text)
            answer = r.json()
            assert set(answer) == set(schemas["Problem"]["properties"]) and isinstance(answer["detail"], str)
    assert set(posts) == {
        AVAILABLE,
        "/api/v1/keyword/page-progress",
        "/api/v1/keyword/crawl-complete",
        "/api/v1/keyword/heartbeat",
        "/api/v1/postings",
    }
    # and a JSON body with the wrong content is the documented 422, in the documented shape
    r = http.post("/api/v1/keyword/heartbeat", json={"keyword_id": "1"})
    assert r.status_code == 422 and set(r.json()) == set(schemas["HTTPValidationError"]["properties"])
    assert set(statuses(store).values()) == {"idle"}


# --- slow clients -------------------------------------------------------------------


def _exchange(port: int, data: bytes, wait: float) -> tuple[bytes, float]:
    """Send ``data`` and read until the server closes (or ``wait`` runs out): what came back, and when."""
    began = time.monotonic()
    with socket.create_connection(("127.0.0.1", port), timeout=wait) as sock:
        if data:
            sock.sendall(data)
        got = b""
        try:
            while True:
                chunk = sock.recv(65536)
                if not chunk:
                    break
                got += chunk
        except TimeoutError:
            return got, float("inf")  # still open
        except ConnectionResetError:
            pass
    return got, time.monotonic() - began


def test_slow_clients_are_cut_off_and_huge_heads_refused(store, tmp_path):
    with start(store, tmp_path, env={"FARM_API_READ_TIMEOUT": str(READ_TIMEOUT)}) as server:
        port = port_of(server)
        half_head = b"GET /api/v1/keyword/stats HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bear"
        head = (
            b"POST /api/v1/keyword/heartbeat HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer %s\r\n"
            b"Content-Type: application/json\r\nContent-Length: 100\r\n\r\n" % server.token.encode()
        )
        for data in (half_head, head + b'{"keyword_id": 1, '):
            got, took = _exchange(port, data, wait=READ_TIMEOUT + 5)
            assert took < READ_TIMEOUT + 3, f"a slow client was held: {data!r}"
            assert got.startswith(b"HTTP/1.1 408 "), got
        # a connection that never sends a byte is closed too
        got, took = _exchange(port, b"", wait=READ_TIMEOUT + 5)
        assert took < READ_TIMEOUT + 3 and got == b""
        # a head past 64 KiB: 431, at once
        huge = b"GET /api/v1/keyword/stats HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Padding: " + b"a" * 70_000 + b"\r\n\r\n"
        got, took = _exchange(port, huge, wait=READ_TIMEOUT + 5)
        assert got.startswith(b"HTTP/1.1 431 "), got[:200]
        # a client that sends its request whole in pieces, within the deadline, is served
        with socket.create_connection(("127.0.0.1", port), timeout=10) as sock:
            body = b'{"keyword_id": 1, "lease_token": 1}'
            sock.sendall(head.replace(b"100", str(len(body)).encode()))
            time.sleep(READ_TIMEOUT / 4)
            sock.sendall(body)
            assert sock.recv(65536).startswith(b"HTTP/1.1 409 ")
        with server.client() as http:
            assert http.get("/api/v1/keyword/stats").status_code == 200
        log = server.log()
        assert "408 from 127.0.0.1" in log and "431 from 127.0.0.1" in log
        assert "Traceback" not in log


def test_a_read_timeout_that_is_not_a_positive_number_is_one_line(sqlite_url, tmp_path):
    from tests.integration.api_harness import run_farm_api

    migrated(sqlite_url)
    for value in ("0", "-1", "nan", "10s"):
        run = run_farm_api(sqlite_url, env={"FARM_API_READ_TIMEOUT": value})
        assert run.returncode != 0
        assert "FARM_API_READ_TIMEOUT" in run.stderr and "Traceback" not in run.stderr, run.stderr
        assert len(run.stderr.strip().splitlines()) == 1, run.stderr


# --- the log ------------------------------------------------------------------------


def test_a_request_path_cannot_forge_a_log_line(store, server):
    forged = "2025-03-10 12:00:00,000 [farm.api] WARNING: the database is gone"
    with server.client(token=None) as http:  # refused (401), and the refusal is logged with its path
        assert http.get("/api/v1/keyword/stats%0A" + forged.replace(" ", "%20") + "%1B[2J").status_code == 401
        assert http.post("/api/v1/keyword/heartbeat%0D%0A" + forged.replace(" ", "%20"), json={}).status_code == 401
    log = server.log()
    assert not [line for line in log.splitlines() if line.startswith(forged)], log[-2000:]
    assert "\x1b" not in log and "\r" not in log
    assert "stats\\n2025-03-10" in log and "\\x1b[2J" in log


# --- a write that names its source ----------------------------------------------------


def test_a_write_may_name_the_keywords_source_and_must_name_it_right(store, http):
    kw = claimed(store)
    lease = {"keyword_id": kw["id"], "lease_token": kw["lease_token"]}
    wrong = http.post("/api/v1/keyword/page-progress", json={**lease, "source": "qcwy", "page": 1, "jobs_found": 3})
    assert wrong.status_code == 409
    answer = wrong.json()
    assert f"keyword {kw['id']} is a keyword of boss, not of qcwy" in answer["detail"]
    assert answer["keyword"]["source"] == "boss" and "lease_token" not in answer["keyword"]
    unknown = http.post("/api/v1/keyword/crawl-complete", json={**lease, "source": "lagou", "status": "completed"})
    assert unknown.status_code == 422 and ["body", "source"] in [error["loc"] for error in unknown.json()["detail"]]
    assert (
        http.post(
            "/api/v1/keyword/crawl-complete", json={**lease, "source": "zhilian", "status": "completed"}
        ).status_code
        == 409
    )
    gone = http.post(
        "/api/v1/keyword/crawl-complete",
        json={"keyword_id": kw["id"] + 99, "lease_token": 1, "source": "boss", "status": "completed"},
    )
    assert gone.status_code == 404
    assert statuses(store)["python"] == "crawling", "a write naming another source changed nothing"
    page = http.post(
        "/api/v1/keyword/page-progress", json={**lease, "source": "boss", "page": 1, "jobs_found": 3, "total_pages": 2}
    )
    assert page.status_code == 200 and page.json()["last_completed_page"] == 1
    end = http.post("/api/v1/keyword/crawl-complete", json={**lease, "source": "boss", "status": "completed"})
    assert end.status_code == 200 and statuses(store)["python"] == "completed"


# --- bodies nested too deeply, heads given twice, claims that are not JSON ---------------

JSON = {"content-type": "application/json"}
WRITES = ("/api/v1/keyword/page-progress", "/api/v1/keyword/crawl-complete", "/api/v1/keyword/heartbeat")


def test_a_body_nested_too_deeply_is_400_on_the_claim_as_on_every_write(store, server, http):
    for depth in (990, 100_000):  # past Python's recursion limit: in the parser, or just within it
        for body in (b"[" * depth + b"]" * depth, b'{"source": "boss", "crawler_id": %s}' % (b"[" * depth)):
            for path in (AVAILABLE, *WRITES):
                r = http.post(path, content=body, headers=JSON)
                assert r.status_code == 400, (path, depth, r.text[:300])
                assert isinstance(r.json()["detail"], str)
    assert '" 500' not in server.log() and "RecursionError" not in server.log()
    assert set(statuses(store).values()) == {"idle"}


def test_a_claim_whose_content_type_is_not_json_is_415(store, server, http):
    claim = b'{"source": "boss"}'
    for content_type in ("text/plain", "application/x-www-form-urlencoded", "multipart/form-data; boundary=x"):
        for path, body in ((AVAILABLE, claim), *((write, b'{"keyword_id": 1, "lease_token": 1}') for write in WRITES)):
            r = http.post(path, content=body, headers={"content-type": content_type})
            assert r.status_code == 415, (path, content_type, r.text)
            assert "application/json" in r.json()["detail"]
    # without a Content-Type a body is not JSON either (FastAPI's strict_content_type)
    bare = http.build_request("POST", AVAILABLE, content=claim)
    assert "content-type" not in bare.headers
    assert http.send(bare).status_code == 415
    assert set(statuses(store).values()) == {"idle"}
    for content_type in ("application/json", "application/json; charset=utf-8", "application/merge-patch+json"):
        r = http.post(AVAILABLE, content=claim, headers={"content-type": content_type})
        assert r.status_code == 200, (content_type, r.text)
    assert http.post(AVAILABLE, params={"source": "boss"}).status_code == 200, "a claim in the query has no body"
    document = http.get("/openapi.json").json()
    for path in (AVAILABLE, *WRITES):
        assert "415" in document["paths"][path]["post"]["responses"], path


def _raw(port: int, head: bytes) -> bytes:
    got, _ = _exchange(port, head + b"Connection: close\r\n\r\n", wait=10)
    return got


def test_a_host_or_origin_given_twice_is_400(store, tmp_path):
    with start(store, tmp_path, token=None) as server:
        port = port_of(server)
        local = b"Host: 127.0.0.1:%d\r\n" % port
        line = b"GET /api/v1/keyword/stats HTTP/1.1\r\n"
        refused = [
            local + b"Host: evil.example\r\n",  # one reader of the head takes the first, another the last
            b"Host: evil.example\r\n" + local,
            local + local,
            local + b"Origin: http://127.0.0.1:%d\r\nOrigin: http://evil.example\r\n" % port,
            local + b"Origin: http://evil.example\r\nOrigin: http://127.0.0.1:%d\r\n" % port,
        ]
        for head in refused:
            got = _raw(port, line + head)
            assert got.startswith(b"HTTP/1.1 400 "), (head, got[:300])
            assert b"more than once" in got
        assert _raw(port, line + local).startswith(b"HTTP/1.1 200 ")
        assert "Traceback" not in server.log()
    with start(store, tmp_path) as server:  # with a token, a proxy's name is fine, but only one
        port = port_of(server)
        auth = b"Authorization: Bearer %s\r\n" % server.token.encode()
        line = b"GET /api/v1/keyword/stats HTTP/1.1\r\n"
        got = _raw(port, line + auth + b"Host: api.example\r\nHost: other.example\r\n")
        assert got.startswith(b"HTTP/1.1 400 ") and b"more than once" in got, got[:300]
        assert _raw(port, line + auth + b"Host: api.example\r\n").startswith(b"HTTP/1.1 200 ")
