"""The database goes away under a running `farm api`: 503 with Retry-After, nothing lost, and back.

The server reaches MariaDB through a TCP relay the test owns: stopping the relay
is the database going down (its connections drop, new ones are refused).
"""

import time

import httpx
import pytest

from farm.state import KeywordStore
from farm.state.db import make_engine
from tests.integration.api_harness import ApiServer
from tests.migrated import migrated
from tests.relay import relay_to_database


@pytest.mark.mariadb
def test_database_down_gets_503_with_retry_after_and_nothing_is_lost(mariadb_url, tmp_path):
    migrated(mariadb_url)
    engine = make_engine(mariadb_url)
    store = KeywordStore(engine)
    store.add_keywords([("boss", "北京", "python"), ("boss", "北京", "java")])
    relay, via_relay = relay_to_database(mariadb_url)
    try:
        with ApiServer(via_relay, tmp_path / "api.log", env={"FARM_API_RETRY_AFTER": "7"}) as server:
            with server.client() as http:
                [kw] = http.post("/api/v1/keyword/available", json={"source": "boss"}).json()["keywords"]
                lease = {"keyword_id": kw["id"], "lease_token": kw["lease_token"]}
                progress = {**lease, "page": 1, "jobs_found": 15, "total_pages": 2}

                relay.stop()
                calls = [
                    ("POST", "/api/v1/keyword/available", {"json": {"source": "boss"}}),
                    ("GET", "/api/v1/keyword/available", {"params": {"source": "boss"}}),
                    ("GET", "/api/v1/keyword/stats", {}),
                    ("POST", "/api/v1/keyword/page-progress", {"json": progress}),
                    ("POST", "/api/v1/keyword/heartbeat", {"json": lease}),
                    ("POST", "/api/v1/keyword/crawl-complete", {"json": {**lease, "status": "partial"}}),
                    ("POST", "/api/v1/postings", {"json": {**lease, "postings": [{"job_id": "a"}]}}),
                ]
                for method, path, kw_args in calls:
                    r = http.request(method, path, **kw_args)
                    assert r.status_code == 503, (path, r.text)
                    assert r.headers["retry-after"] == "7"
                    assert r.json() == {"detail": "the database is unavailable; try again in 7s"}
                # nothing was written while it was down
                rows = {r["id"]: r for r in store.list_keywords()}
                assert (rows[kw["id"]]["last_completed_page"], rows[kw["id"]]["crawl_status"]) == (0, "crawling")
                assert [r["crawl_status"] for r in rows.values() if r["id"] != kw["id"]] == ["idle"]

                relay.start()  # the same port: the database is back
                r = http.post("/api/v1/keyword/page-progress", json=progress)
                assert r.status_code == 200 and r.json()["last_completed_page"] == 1
                assert http.post("/api/v1/keyword/heartbeat", json=lease).status_code == 200
        log = server.log()
        assert "503 POST /api/v1/keyword/page-progress: the database is unavailable" in log
        assert "Traceback" not in log
    finally:
        relay.stop()
        engine.dispose()


@pytest.mark.mariadb
def test_a_silent_database_gets_503_with_retry_after_within_seconds(mariadb_url, tmp_path):
    migrated(mariadb_url)
    engine = make_engine(mariadb_url)
    KeywordStore(engine).add_keywords([("boss", "北京", "python")])
    engine.dispose()
    relay, via_relay = relay_to_database(mariadb_url)
    try:
        env = {"FARM_API_RETRY_AFTER": "3", "FARM_DB_TIMEOUT": "1", "FARM_DB_POOL_TIMEOUT": "1"}
        with ApiServer(via_relay, tmp_path / "api.log", env=env) as server:
            with server.client() as http:
                http.timeout = httpx.Timeout(15)  # a hang fails the test, not the whole run
                assert http.get("/api/v1/keyword/stats").status_code == 200
                relay.stall()  # the server keeps the connections, and answers nothing
                started = time.monotonic()
                r = http.get("/api/v1/keyword/stats")
                assert (r.status_code, r.headers.get("retry-after")) == (503, "3"), r.text
                assert time.monotonic() - started < 5  # the pool's ping and a reconnect, a second each
                relay.resume()
                assert http.get("/api/v1/keyword/stats").status_code == 200
        assert "503 GET /api/v1/keyword/stats: the database is unavailable: (2013) Lost connection" in server.log()
    finally:
        relay.stop()
