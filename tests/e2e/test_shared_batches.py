"""Redis mode's batches: a worker takes many requests in one pop and acknowledges many pages in one call,
after the fact. A worker killed, or Redis flushed, between a pop and its batched acknowledgement loses
no page and stores none twice."""

import re
import signal

import orjson
import pytest
import redis

from farm.sandbox.testing import SandboxProcess
from tests.e2e.harness import fetched_pages, prepare_db, served, wait_until
from tests.e2e.test_shared import (  # noqa: F401 (private_redis: a fixture)
    check_everything_once,
    finish,
    logs,
    private_redis,
    rows_for,
    start_workers,
)
from tests.relay import Relay

pytestmark = [pytest.mark.e2e, pytest.mark.redis]

SLOW = {"DOWNLOAD_DELAY": 0.02, "CONCURRENT_REQUESTS": 2}


@pytest.fixture
def relayed(mariadb_url, private_redis):
    """Twelve keywords to crawl; the private redis-server's URL, a client of it, a relay in front of it
    (stalled, the workers behind it go silent) and the URL through the relay."""
    url, _ = private_redis
    prepare_db(mariadb_url, rows_for(12))
    client = redis.Redis.from_url(url)
    port = int(url.rsplit(":", 1)[1].split("/")[0])
    relay = Relay(("127.0.0.1", port)).start()
    try:
        yield url, client, relay, f"redis://127.0.0.1:{relay.port}/0"
    finally:
        relay.stop()
        client.close()


def in_flight(client) -> set[bytes]:
    """The ids every worker took and has not acknowledged."""
    return {rid for key in client.scan_iter("farm:qcwy:taken:*") for rid in client.zrange(key, 0, -1)}


def held_pages(client, ids) -> set[tuple[int, int]]:
    """(keyword id, page) of the requests of these ids (their entry: the lease, a newline, the JSON)."""
    pages = set()
    for entry in client.hmget("farm:qcwy:req", list(ids)):
        meta = orjson.loads(entry.split(b"\n", 1)[1])["meta"]
        pages.add((meta["farm_lease"][0], meta["farm_page"]))
    return pages


def found_missing(output) -> set[tuple[int, int]]:
    """(keyword id, page) of the pages a worker found queued nowhere and queued again."""
    found = re.findall(r"\(#(\d+)\) had nothing queued anywhere; queueing pages \[([\d, ]+)\]", output)
    return {(int(kid), int(page)) for kid, pages in found for page in pages.split(", ")}


def settled_while_stalled(sandbox, workers):
    """Pages are fetched (and recorded) while the workers' acknowledgements cannot reach Redis."""
    more = served(sandbox) + 4
    wait_until(lambda: served(sandbox) >= more or any(w.poll() is not None for w in workers), 60, "pages")


def assert_nothing_left(client):
    """Every request taken was acknowledged once, every request queued counted out: nothing queued, in
    flight or open is left behind."""
    assert not client.zcard("farm:qcwy:queue")
    assert not in_flight(client)
    assert not client.hlen("farm:qcwy:req")
    assert {lease: left for lease, left in client.hgetall("farm:qcwy:open").items() if int(left)} == {}


def test_a_worker_killed_between_a_pop_and_its_batched_ack_has_its_pages_put_back_and_stored_once(
    mariadb_url, relayed, tmp_path
):
    url, client, relay, via_relay = relayed
    rows = rows_for(12)
    with SandboxProcess(seed=11, postings=(200, 200)) as sandbox:
        [victim] = start_workers(1, mariadb_url, sandbox, (via_relay, "farm"), tmp_path, **SLOW)
        wait_until(lambda: served(sandbox) >= 20 and client.zcard("farm:qcwy:taken:worker0"), 60, "a batch taken")
        relay.stall()  # what it sends Redis from now on, its batched acknowledgements first, goes no further
        settled_while_stalled(sandbox, [victim])
        held = in_flight(client)
        assert held and victim.poll() is None
        held = held_pages(client, held)
        victim.send_signal(signal.SIGKILL)  # popped, fetched, recorded: never acknowledged
        victim.wait()
        relay.stop()
        survivor = start_workers(1, mariadb_url, sandbox, (url, "farm"), tmp_path, first=1, **SLOW)
        finish(survivor, tmp_path, timeout=180)
        pages = check_everything_once(mariadb_url, sandbox, rows)  # every posting stored, once
        fetches = fetched_pages(sandbox, "qcwy")
    assert set(fetches) == pages
    # a page fetched twice is one the victim held unacknowledged: put back, fetched by the survivor
    assert max(fetches.values()) <= 2 and sum(fetches.values()) - len(pages) <= len(held)
    output = logs(tmp_path)
    assert "a worker stopped (worker0)" in output
    # the survivor was given the victim's requests back: none had to be found missing (a page the
    # victim pushed, its push held with the acknowledgements, is: the keyword table has it)
    assert not found_missing(output) & held
    assert_nothing_left(client)


def test_redis_flushed_between_pops_and_their_batched_acks_loses_no_page_and_stores_none_twice(
    mariadb_url, relayed, tmp_path
):
    url, client, relay, via_relay = relayed
    rows = rows_for(12)
    with SandboxProcess(seed=12, postings=(200, 200)) as sandbox:
        # FARM_WORKER_TIMEOUT past the stall: neither finds the other stopped
        workers = start_workers(2, mariadb_url, sandbox, (via_relay, "farm"), tmp_path, FARM_WORKER_TIMEOUT=30, **SLOW)
        wait_until(lambda: served(sandbox) >= 20 and len(in_flight(client)) >= 2, 60, "batches taken")
        relay.stall()  # the workers' batched acknowledgements and pushes wait in their links
        settled_while_stalled(sandbox, workers)
        assert in_flight(client)
        client.flushall()  # Redis loses everything, the batches on their way included
        relay.resume()  # they arrive at an empty Redis: the workers rebuild it from the keyword table
        finish(workers, tmp_path, timeout=180)
        pages = check_everything_once(mariadb_url, sandbox, rows)  # every posting stored, once
        fetches = fetched_pages(sandbox, "qcwy")
    # none twice: what a worker held as Redis lost it (taken, fetched, recorded and not acknowledged) is
    # written back, or known done in the keyword table, before the rebuild
    assert fetches == {page: 1 for page in pages}
    assert "rebuilt from the keyword table" in logs(tmp_path)
    assert_nothing_left(client)
