"""Eight clients claiming at once over HTTP, through two `farm api` processes on one MariaDB:
every keyword is handed out exactly once."""

import random
import threading
import time
from collections import Counter

import pytest

from farm.state import KeywordStore
from farm.state.db import make_engine
from farm.state.migrate import upgrade
from tests.integration.api_harness import ApiServer

CLIENTS = 8
KEYWORDS = 1500
DEADLINE = 120  # seconds the claiming may take before the test gives up


def claim_until_empty(server, worker, start, results):
    """Claim batches of 1..5 until nothing is left; an empty claim while others hold rows locked is no end."""
    rng = random.Random(worker)
    got, error = [], None
    try:
        with server.client() as http:
            start.wait(timeout=DEADLINE)
            deadline = time.monotonic() + DEADLINE
            while time.monotonic() < deadline:
                params = {"source": "boss", "limit": rng.randint(1, 5), "crawler_id": f"client-{worker}"}
                r = http.post("/api/v1/keyword/available", json=params)
                r.raise_for_status()
                answer = r.json()
                got.extend((k["id"], k["lease_token"]) for k in answer["keywords"])
                if not answer["keywords"] and answer["claimable"] == 0:
                    break
            else:
                error = "out of time"
    except Exception as exc:  # the test reports it
        error = repr(exc)
    results[worker] = (got, error)


@pytest.mark.mariadb
def test_eight_http_clients_never_get_one_keyword_twice(mariadb_url, tmp_path):
    upgrade(mariadb_url)
    engine = make_engine(mariadb_url)
    store = KeywordStore(engine)
    store.add_keywords(("boss", "北京", f"job{i}") for i in range(KEYWORDS))
    all_ids = {r["id"] for r in store.list_keywords()}
    servers = [ApiServer(mariadb_url, tmp_path / f"api{n}.log") for n in range(2)]
    try:
        for server in servers:
            server.start()
        start, results = threading.Event(), {}
        threads = [
            threading.Thread(target=claim_until_empty, args=(servers[w % 2], w, start, results)) for w in range(CLIENTS)
        ]
        for t in threads:
            t.start()
        start.set()
        for t in threads:
            t.join(timeout=DEADLINE + 30)
        assert not any(t.is_alive() for t in threads)
    finally:
        for server in servers:
            server.stop()
    assert {w: error for w, (_, error) in results.items() if error} == {}
    claimed = [kid for got, _ in results.values() for kid, _ in got]
    assert [kid for kid, n in Counter(claimed).items() if n > 1] == []
    assert set(claimed) == all_ids
    assert sum(1 for got, _ in results.values() if got) == CLIENTS, "every client got keywords: they were concurrent"
    owner = {kid: w for w, (got, _) in results.items() for kid, _ in got}
    rows = store.list_keywords()
    token = {kid: token for got, _ in results.values() for kid, token in got}
    assert {r["crawl_status"] for r in rows} == {"crawling"}
    assert {r["id"]: r["lease_token"] for r in rows} == token, "each row holds its one claim's token"
    assert all(r["crawler_id"] == f"client-{owner[r['id']]}" for r in rows)
    for server in servers:
        assert "Traceback" not in server.log()
    engine.dispose()
