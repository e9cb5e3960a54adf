"""Who may call `farm api`, how much it reads, and what never reaches its log."""

import secrets
import uuid

import pytest
from sqlalchemy import create_engine, text

from farm.state import KeywordStore
from farm.state.db import make_engine
from farm.state.migrate import upgrade
from tests.conftest import MARIADB_SERVER
from tests.integration.api_harness import TOKEN, ApiServer, run_farm_api
from tests.migrated import migrated


@pytest.fixture
def keywords_db(sqlite_url):
    migrated(sqlite_url)
    engine = make_engine(sqlite_url)
    KeywordStore(engine).add_keywords([("boss", "北京", "python")])
    engine.dispose()
    return sqlite_url


def status_of(url):
    engine = make_engine(url)
    try:
        return [r["crawl_status"] for r in KeywordStore(engine).list_keywords()]
    finally:
        engine.dispose()


def operations(server):
    """(method, path) of every operation in the server's OpenAPI document, read with the token."""
    with server.client() as http:
        document = http.get("/openapi.json").json()
    return [(method.upper(), path) for path, item in document["paths"].items() for method in item]


def test_every_endpoint_needs_the_bearer_token(keywords_db, tmp_path):
    with ApiServer(keywords_db, tmp_path / "api.log") as server:
        ops = operations(server)
        assert len(ops) == 7
        paths = [*ops, ("GET", "/openapi.json"), ("GET", "/docs"), ("GET", "/no/such/path")]
        refusals = 0
        for token, scheme in ((None, None), ("wrong-" + TOKEN, "Bearer"), (TOKEN, "Basic"), ("", "Bearer")):
            headers = {} if token is None else {"Authorization": f"{scheme} {token}".strip()}
            with server.client(token=None, headers=headers) as http:
                for method, path in paths:
                    # a claim with every parameter it needs: refused all the same
                    claim = path.endswith("available")
                    params = {"source": "boss"} if claim else None
                    body = None if method == "GET" or claim else {"keyword_id": 1, "lease_token": 1}
                    r = http.request(method, path, params=params, json=body)
                    assert r.status_code == 401, (method, path, headers, r.text)
                    assert r.headers["www-authenticate"] == "Bearer"
                    assert "bearer token" in r.json()["detail"]
                    refusals += 1
        assert status_of(keywords_db) == ["idle"], "a refused claim claims nothing"
        with server.client(token=None, headers={"Authorization": f"bearer {TOKEN}"}) as http:
            assert http.get("/api/v1/keyword/stats").status_code == 200  # the scheme's case does not matter
    assert server.log().count(" 401 ") >= refusals


@pytest.mark.parametrize("host", ["0.0.0.0", "::", "192.0.2.10", "farm.example.invalid"])
def test_without_a_token_it_refuses_any_but_a_loopback_bind(keywords_db, host):
    result = run_farm_api(keywords_db, "--host", host, "--port", "0")
    assert result.returncode == 1
    assert "FARM_API_TOKEN" in result.stderr and f"refusing to serve the keyword API on {host}" in result.stderr
    assert "listening" not in result.stdout


def test_without_a_token_it_serves_loopback_alone_and_unauthenticated(keywords_db, tmp_path):
    with ApiServer(keywords_db, tmp_path / "api.log", token=None) as server:
        assert server.url.startswith("http://127.0.0.1:")
        with server.client(token=None) as http:
            assert http.get("/api/v1/keyword/stats").status_code == 200
            document = http.get("/openapi.json").json()
    assert "securitySchemes" not in document.get("components", {})


def test_request_bodies_over_the_limit_get_413(keywords_db, tmp_path):
    with ApiServer(keywords_db, tmp_path / "api.log", env={"FARM_API_MAX_BODY": "4096"}) as server:
        with server.client() as http:
            claim = http.post("/api/v1/keyword/available", json={"source": "boss"}).json()
            [kw] = claim["keywords"]
            lease = {"keyword_id": kw["id"], "lease_token": kw["lease_token"]}
            big = {**lease, "postings": [{"job_id": str(i), "title": "x" * 100} for i in range(40)]}
            r = http.post("/api/v1/postings", json=big)
            assert r.status_code == 413 and "FARM_API_MAX_BODY=4096" in r.json()["detail"]

            def chunks():  # no Content-Length: the server counts what arrives
                yield b'{"keyword_id": 1, "lease_token": 1, "postings": ['
                for i in range(100):
                    yield b'{"job_id": "%d", "title": "%s"},' % (i, b"x" * 100)
                yield b'{"job_id": "last"}]}'

            r = http.post("/api/v1/postings", content=chunks(), headers={"content-type": "application/json"})
            assert r.status_code == 413
            small = {**lease, "postings": [{"job_id": str(i), "title": "x" * 100} for i in range(20)]}
            assert http.post("/api/v1/postings", json=small).json()["postings"] == 20
        assert "413 POST /api/v1/postings" in server.log()


@pytest.mark.mariadb
def test_tokens_and_database_passwords_never_reach_the_log(mariadb_url, tmp_path):
    """A server on a MariaDB account with a password, logging at DEBUG, asked right and wrong."""
    user, password = f"farm_api_{uuid.uuid4().hex[:8]}", f"pw-{secrets.token_hex(12)}"
    database = mariadb_url.rsplit("/", 1)[1]
    admin = create_engine(f"{MARIADB_SERVER}/test")
    with admin.begin() as conn:
        conn.execute(text(f"CREATE USER '{user}'@'%' IDENTIFIED BY '{password}'"))
        conn.execute(text(f"GRANT ALL ON `{database}`.* TO '{user}'@'%'"))
    try:
        host = MARIADB_SERVER.split("@", 1)[1]
        url = f"mysql+pymysql://{user}:{password}@{host}/{database}"
        upgrade(url)  # the account reaches its own database alone, not the tests' migrated template
        engine = make_engine(url)
        KeywordStore(engine).add_keywords([("boss", "北京", "python")])
        engine.dispose()
        wrong = f"wrong-{secrets.token_hex(12)}"
        with ApiServer(url, tmp_path / "api.log", env={"FARM_LOG_LEVEL": "DEBUG"}) as server:
            with server.client() as http:
                [kw] = http.post("/api/v1/keyword/available", json={"source": "boss"}).json()["keywords"]
                lease = {"keyword_id": kw["id"], "lease_token": kw["lease_token"]}
                assert http.post("/api/v1/keyword/page-progress", json={**lease, "page": 1, "jobs_found": 3}).is_success
                assert http.post("/api/v1/keyword/heartbeat", json={**lease, "lease_token": 9}).status_code == 409
                assert http.post("/api/v1/keyword/heartbeat", json={**lease, "page": 1}).status_code == 422
                assert http.get("/api/v1/keyword/stats").status_code == 200
            with server.client(token=wrong) as http:
                assert http.get("/api/v1/keyword/stats").status_code == 401
            with server.client(token=None, headers={"Authorization": f"Basic {TOKEN}"}) as http:
                assert http.get("/api/v1/keyword/stats").status_code == 401
        log = server.log()
        assert f"{user}:***@" in log, "the database is named, its password masked"
        assert "DEBUG: claim of boss for" in log and "401 GET /api/v1/keyword/stats" in log
        for secret in (password, TOKEN, wrong):
            assert secret not in log
    finally:
        with admin.begin() as conn:
            conn.execute(text(f"DROP USER IF EXISTS '{user}'@'%'"))
        admin.dispose()


def test_it_refuses_to_start_naming_the_fix(keywords_db, tmp_path):
    empty = f"sqlite:///{tmp_path / 'empty.db'}"
    cases = [  # a setting farm cannot use exits 2, as every command does
        (
            "mysql+pymysql://farm:s3cret-pw@127.0.0.1:1/farm",
            {},
            1,
            "cannot connect to the database at mysql+pymysql://farm:***@127.0.0.1:1/farm",
        ),
        (empty, {}, 1, "run `farm db upgrade`"),
        (
            keywords_db,
            {"FARM_API_MAX_BODY": "10"},
            2,
            "FARM_API_MAX_BODY='10' cannot be used: it takes a whole number of bytes from 1024",
        ),
        ("not a url", {}, 2, "--db-url='not a url' is not a database URL"),
    ]
    for url, env, code, message in cases:
        result = run_farm_api(url, "--port", "0", env=env)
        assert result.returncode == code and message in result.stderr, result.stderr
        assert "s3cret-pw" not in result.stderr + result.stdout and "Traceback" not in result.stderr
