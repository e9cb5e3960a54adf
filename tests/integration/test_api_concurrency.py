"""Eight clients claiming at once over HTTP, through two `farm api` processes on one MariaDB:
every keyword is handed out exactly once."""

from collections import Counter

import pytest

from farm.state import KeywordStore
from farm.state.db import make_engine
from tests.integration.api_harness import ApiServer, claim_all
from tests.migrated import migrated

CLIENTS = 8
KEYWORDS = 1500


@pytest.mark.mariadb
def test_eight_http_clients_never_get_one_keyword_twice(mariadb_url, tmp_path):
    migrated(mariadb_url)
    engine = make_engine(mariadb_url)
    store = KeywordStore(engine)
    store.add_keywords(("boss", "北京", f"job{i}") for i in range(KEYWORDS))
    all_ids = {r["id"] for r in store.list_keywords()}
    servers = [ApiServer(mariadb_url, tmp_path / f"api{n}.log") for n in range(2)]
    try:
        for server in servers:
            server.start()
        results = claim_all(servers, CLIENTS)
    finally:
        for server in servers:
            server.stop()
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
