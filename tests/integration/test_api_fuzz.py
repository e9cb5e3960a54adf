"""A property-based fuzz run over `farm api`'s OpenAPI document (schemathesis), on SQLite and on MariaDB.

`make test` runs each test on one of the two, a database each; `make soak` and `make fuzz` (FARM_SOAK=1)
each test on both.

Every check schemathesis has: no 5xx, every status code, header, content type and body as
the document says, schema-violating requests refused, schema-valid ones not, 401 without
the token. The stateful phase follows the document's links from a claim to the writes.

Small enough for `make test` by default; `make fuzz` runs it longer with a fresh seed:
FARM_FUZZ_EXAMPLES (examples per operation) and FARM_FUZZ_SEED.
"""

import os
import re
import subprocess
import sys
from pathlib import Path

import httpx
import pytest
import schemathesis
from hypothesis import given, settings

from farm.state import KeywordStore
from farm.state.db import make_engine
from tests.integration.api_harness import ApiServer
from tests.migrated import migrated

EXAMPLES = int(os.environ.get("FARM_FUZZ_EXAMPLES", "25"))
SEED = os.environ.get("FARM_FUZZ_SEED", "20251130")
SCHEMATHESIS = str(Path(sys.executable).with_name("schemathesis"))
SOAK = bool(os.environ.get("FARM_SOAK"))


@pytest.fixture
def server(db_url, tmp_path):
    migrated(db_url)
    engine = make_engine(db_url)
    # enough keywords that the stateful phase's claims keep getting some
    KeywordStore(engine).add_keywords(
        (source, "北京", f"job{i}") for source in ("boss", "qcwy", "zhilian") for i in range(2000)
    )
    engine.dispose()
    with ApiServer(db_url, tmp_path / "api.log") as server:
        yield server


@pytest.mark.parametrize("db_url", ["sqlite", "mariadb"] if SOAK else ["sqlite"], indirect=True)
def test_fuzz_run_over_the_openapi_document_finds_no_issue(server, tmp_path):
    argv = [
        SCHEMATHESIS,
        "run",
        f"{server.url}/openapi.json",
        "--header",
        f"Authorization: Bearer {server.token}",
        "--checks",
        "all",
        "--max-examples",
        str(EXAMPLES),
        "--seed",
        SEED,
        "--workers",
        "1",
        "--request-timeout",
        "30",
    ]
    run = subprocess.run(argv, cwd=tmp_path, capture_output=True, text=True, timeout=600, stdin=subprocess.DEVNULL)
    report = run.stdout + run.stderr
    assert run.returncode == 0, report[-6000:]
    generated = re.search(r"(\d+) generated, (\d+) passed", report)
    assert generated and generated.group(1) == generated.group(2), report[-3000:]
    log = server.log()
    assert '" 500' not in log and "Traceback" not in log, log[-3000:]
    # the run reached the database through claimed keywords, not only the validation in front of it
    assert re.search(r'"POST /api/v1/\S+ HTTP/1.1" (200|409)', log), log[-3000:]


@pytest.mark.parametrize("db_url", ["sqlite", "mariadb"] if SOAK else ["mariadb"], indirect=True)
def test_postings_of_a_held_keyword_fuzzed_from_the_document_are_stored(server):
    """Schema-valid postings (any text the document allows) for a freshly claimed keyword: stored, 200."""
    auth = {"Authorization": f"Bearer {server.token}"}
    schema = schemathesis.openapi.from_url(f"{server.url}/openapi.json", headers=auth)
    strategy = schema["/api/v1/postings"]["POST"].as_strategy(generation_mode=schemathesis.GenerationMode.POSITIVE)
    stored = []

    with httpx.Client(base_url=server.url, headers=auth, timeout=30) as http:

        @settings(max_examples=EXAMPLES, deadline=None, database=None, derandomize=True)
        @given(case=strategy)
        def check(case):
            claim = http.post("/api/v1/keyword/available", json={"source": "zhilian"})
            [kw] = claim.json()["keywords"]
            case.body.update(keyword_id=kw["id"], lease_token=kw["lease_token"])
            response = case.call(base_url=server.url, headers=auth)
            assert response.status_code == 200, response.text
            case.validate_response(response)
            stored.append(response.json()["postings"])

        check()
    assert len(stored) == EXAMPLES and sum(stored) > 0
