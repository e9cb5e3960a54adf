"""Concurrent claims from several OS processes: every keyword is handed out exactly once."""

import multiprocessing
import os
import queue
import random
import time
from collections import Counter
from datetime import timedelta

import pytest

from farm.state import KeywordStore, Lease
from farm.state.clock import utcnow
from farm.state.db import make_engine
from tests.migrated import migrated

SPAWN = multiprocessing.get_context("spawn")
DEADLINE = 60  # seconds a run may take before the test gives up


def claim_until_empty(url, worker, start, results, batch=None):
    """Child process: claim batches of ``batch`` (else 1..5) until nothing is left; report the ids and tokens."""
    engine = make_engine(url)
    store = KeywordStore(engine)
    rng = random.Random(worker)
    got = []
    try:
        start.wait(timeout=DEADLINE)
        while True:
            leases = store.claim("boss", f"worker-{worker}", n=batch or rng.randint(1, 5))
            got.extend((lease.id, lease.lease_token) for lease in leases)
            # an empty claim can mean "the rest is locked by others right now": ask again
            # until no row is claimable at all
            if not leases and store.claimable("boss") == 0:
                break
        results.put((worker, got, None))
    except Exception as exc:  # the parent reports it; no child dies silently
        results.put((worker, got, repr(exc)))
    finally:
        engine.dispose()


def run_claimers(url, processes, keywords, batch=None):
    migrated(url)
    engine = make_engine(url)
    store = KeywordStore(engine)
    store.add_keywords(("boss", f"{101000000 + i % 97}", f"job{i}") for i in range(keywords))
    all_ids = {r["id"] for r in store.list_keywords()}
    assert len(all_ids) == keywords

    start = SPAWN.Event()
    results = SPAWN.Queue()
    procs = [
        SPAWN.Process(target=claim_until_empty, args=(url, w, start, results, batch), daemon=True)
        for w in range(processes)
    ]
    reports = {}
    try:
        for p in procs:
            p.start()
        start.set()
        deadline = time.monotonic() + DEADLINE
        while len(reports) < processes:
            try:
                worker, got, error = results.get(timeout=max(0.1, deadline - time.monotonic()))
            except queue.Empty:
                pytest.fail(f"only {len(reports)} of {processes} claimers finished in {DEADLINE}s")
            assert error is None, f"worker {worker} failed: {error}"
            reports[worker] = got
        for p in procs:
            p.join(timeout=10)
    finally:
        for p in procs:
            if p.is_alive():
                p.terminate()
                p.join(timeout=5)

    claimed = [kid for got in reports.values() for kid, _ in got]
    duplicates = [kid for kid, n in Counter(claimed).items() if n > 1]
    assert duplicates == []
    assert set(claimed) == all_ids
    assert sum(1 for got in reports.values() if got) > 1, "the claims were not concurrent"
    rows = store.list_keywords()
    # each row holds the token its one claimer was given, and no two claims got the same token
    token = {kid: token for got in reports.values() for kid, token in got}
    assert {r["id"]: r["lease_token"] for r in rows} == token
    assert len(set(token.values())) == len(token)
    assert {r["crawl_status"] for r in rows} == {"crawling"}
    owner = {kid: worker for worker, got in reports.items() for kid, _ in got}
    assert all(r["crawler_id"] == f"worker-{owner[r['id']]}" for r in rows)
    engine.dispose()
    return {kid: (owner[kid], token[kid]) for kid in token}


# `make test` races eight claimers on PostgreSQL and eight claiming a batch each on MariaDB; `make soak`
# (FARM_SOAK=1) eight on MariaDB too
@pytest.mark.mariadb
@pytest.mark.skipif(not os.environ.get("FARM_SOAK"), reason="make soak: make test races MariaDB's claims in batches")
def test_eight_processes_claim_each_keyword_once_on_mariadb(mariadb_url):
    run_claimers(mariadb_url, processes=8, keywords=5000)


@pytest.mark.postgresql
def test_eight_processes_claim_each_keyword_once_on_postgresql(postgresql_url):
    run_claimers(postgresql_url, processes=8, keywords=5000)


def test_four_processes_claim_each_keyword_once_on_sqlite(sqlite_url):
    run_claimers(sqlite_url, processes=4, keywords=5000)


@pytest.mark.mariadb
def test_claims_of_eight_a_round_trip_hand_each_keyword_once_each_under_its_own_fence(mariadb_url):
    # eight crawlers each claiming what a crawl holds at once (FARM_LEASES_IN_FLIGHT's 8) a round trip
    held = run_claimers(mariadb_url, processes=8, keywords=2000, batch=8)
    engine = make_engine(mariadb_url)
    try:
        later = KeywordStore(engine, clock=lambda: utcnow() + timedelta(hours=1))
        assert later.reap() == 2000  # every holder went silent: the next claims take their keywords
        taken = {}
        while leases := later.claim("boss", "successor", n=8):
            taken.update({lease.id: lease for lease in leases})
        assert set(taken) == set(held)
        # each lease of a batch is fenced on its own: the first holders' writes change nothing
        first = [
            Lease(kid, "boss", "", "", token, start_page=1, from_status="fresh") for kid, (_, token) in held.items()
        ]
        assert not any(write.applied for write in later.pages_done([(lease, 1, 5, 1) for lease in first[:50]]))
        assert not any(later.complete(lease) for lease in first[50:60])
        assert all(later.complete(taken[lease.id]) for lease in first[50:60])
    finally:
        engine.dispose()
