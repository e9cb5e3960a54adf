"""Many workers sharing one site's work through Redis (FARM_REDIS_URL) and one keyword table on MariaDB."""

import random
import re
import signal
import socket
import subprocess
import time
import uuid
from collections import Counter

import pytest
import redis

from farm.crawl.backends.redis.dupefilter import DayDupeFilter
from farm.crawl.backends.redis.queue import SharedQueue
from farm.sandbox.testing import SandboxProcess
from farm.sites.qcwy.spider import QcwySpider
from farm.state.clock import utcnow
from tests.conftest import REDIS_URL
from tests.e2e.harness import (
    expected_crawl,
    fetched_pages,
    keywords,
    kill_at_a_random_moment,
    prepare_db,
    served,
    start_crawl,
    stop,
    stored_postings,
    wait_until,
)
from tests.relay import relay_to_database
from tests.unit.spider_helpers import make_spider

pytestmark = [pytest.mark.e2e, pytest.mark.redis]

PAGES_IN_FLIGHT = 8
SETTINGS = {
    "FARM_QCWY_MAX_PAGES": 10,
    "FARM_WORKER_TIMEOUT": 2,
    "FARM_PAGES_IN_FLIGHT": PAGES_IN_FLIGHT,
    "FARM_LEASES_IN_FLIGHT": 3,
}
CITIES = ("北京", "上海", "广州", "深圳", "杭州", "成都")


def rows_for(n):
    return [("qcwy", CITIES[i % len(CITIES)], f"job{i}") for i in range(n)]


def start_workers(n, db_url, sandbox, shared, tmp_path, first=0, **settings):
    return [
        start_crawl(
            "qcwy",
            db_url,
            sandbox.url,
            tmp_path / f"worker{i}.log",
            redis=shared,
            FARM_CRAWLER_ID=f"worker{i}",
            **{**SETTINGS, **settings},
        )
        for i in range(first, first + n)
    ]


def finish(workers, tmp_path, timeout=120):
    try:
        for worker in workers:
            assert stop(worker, timeout) == 0, logs(tmp_path, tail=2000)
    finally:
        for worker in workers:
            worker.kill()
            worker.wait()


def logs(tmp_path, tail=None):
    """The workers' logs (the last ``tail`` characters of each, for a failure message)."""
    return "\n".join(path.read_text()[-tail if tail else 0 :] for path in sorted(tmp_path.glob("worker*.log")))


def check_everything_once(db_url, sandbox, rows):
    pages, ids, per_keyword = expected_crawl(sandbox, "qcwy", rows, 10)
    progress = {(k["city"], k["job"]): (k["crawl_status"], k["jobs_found"]) for k in keywords(db_url)}
    assert progress == {key: ("completed", jobs) for key, (_, jobs) in per_keyword.items()}
    stored = stored_postings(db_url, "qcwy")
    assert len(stored) == len(set(stored)) and set(stored) == ids
    return pages


def test_three_workers_share_the_keywords_and_fetch_each_page_once(mariadb_url, shared, tmp_path):
    rows = rows_for(60)
    prepare_db(mariadb_url, rows)
    client = redis.Redis.from_url(shared[0])
    # a payload someone wrote into the queue by hand: refused with a log line, never run
    client.zadd(f"{shared[1]}:qcwy:queue", {"666": -1e15})
    client.hset(f"{shared[1]}:qcwy:req", "666", b"\x80\x04\x95 a pickle that would run code")
    with SandboxProcess(seed=2, postings=(200, 200)) as sandbox:
        workers = start_workers(3, mariadb_url, sandbox, shared, tmp_path)
        finish(workers, tmp_path)
        pages = check_everything_once(mariadb_url, sandbox, rows)
        assert fetched_pages(sandbox, "qcwy") == {page: 1 for page in pages}
    claims = Counter(k["crawler_id"] for k in keywords(mariadb_url))
    assert sum(claims.values()) == 60 and len(claims) == 3  # every worker held keywords...
    output = logs(tmp_path)
    claimed = [int(n) for n in re.findall(r"'farm/lease/claimed': (\d+)", output)]
    assert len(claimed) == 3 and sum(claimed) == 60  # ...each claimed once, never twice
    assert "refused a queued payload that is not a farm request (id 666)" in output
    assert not client.exists(f"{shared[1]}:qcwy:queue")  # nothing left behind
    for key in client.scan_iter(f"{shared[1]}:qcwy:seen:*"):
        assert 0 < client.ttl(key) <= 25 * 3600  # the day's fingerprints expire with it


def test_a_worker_killed_five_times_over_loses_nothing_and_is_replaced_at_once(mariadb_url, shared, tmp_path):
    rows = rows_for(30)
    prepare_db(mariadb_url, rows)
    chance = random.Random(9)
    client = redis.Redis.from_url(shared[0])
    with SandboxProcess(seed=6, postings=(200, 200)) as sandbox:
        # slowed so that a kill lands mid-crawl; FARM_LEASE_TIMEOUT stays at its 30 minutes
        slow = {"DOWNLOAD_DELAY": 0.02, "CONCURRENT_REQUESTS": 2}
        survivors = start_workers(2, mariadb_url, sandbox, shared, tmp_path, **slow)
        killed = []
        for kill in range(5):
            name = f"worker{2 + kill}"
            [victim] = start_workers(1, mariadb_url, sandbox, shared, tmp_path, first=2 + kill, **slow)
            # at a random moment once it has joined: claiming, holding keywords, fetching
            joined = lambda: client.zscore(f"{shared[1]}:qcwy:live", name) is not None  # noqa: E731
            wait_until(lambda: joined() or victim.poll() is not None, 60, "the worker to join")
            target = served(sandbox) + chance.randint(0, 25)
            wait_until(lambda: served(sandbox) >= target or victim.poll() is not None, 60, "pages")
            if victim.poll() is None:
                killed.append(name)
            victim.send_signal(signal.SIGKILL)
            victim.wait()
        client.close()
        started = time.monotonic()
        finish(survivors, tmp_path, timeout=180)
        assert time.monotonic() - started < 120  # not FARM_LEASE_TIMEOUT
        pages = check_everything_once(mariadb_url, sandbox, rows)
        fetches = fetched_pages(sandbox, "qcwy")
        assert set(fetches) == pages
        assert sum(fetches.values()) - len(pages) <= 5 * PAGES_IN_FLIGHT  # at most each kill's pages in flight
    stopped = re.findall(r"a worker stopped \(([^)]*)\)", logs(tmp_path))
    found = {name for names in stopped for name in names.split(", ")}
    assert killed and found & set(killed)
    # a worker killed while it held nothing in flight and took nothing on keeps no survivor
    # waiting (they may end before its heartbeat is stale); one that held something was found
    client = redis.Redis.from_url(shared[0])
    for name in set(killed) - found:
        held = client.zcard(f"{shared[1]}:qcwy:taken:{name}") + client.scard(f"{shared[1]}:qcwy:taking:{name}")
        assert held == 0, f"{name} was killed holding work and no worker found it stopped"
    client.close()


def test_a_worker_killed_between_its_claim_and_listing_it_in_redis_loses_no_keyword(mariadb_url, shared, tmp_path):
    rows = rows_for(12)
    store = prepare_db(mariadb_url, rows)
    # what a worker leaves when killed after its claim committed and before it listed the claim in
    # Redis: live (its last heartbeat), taking keywords on, and three keywords crawling under its id
    spider, _ = make_spider(QcwySpider)
    key = f"{shared[1]}:qcwy"
    server = redis.Redis.from_url(shared[0])
    SharedQueue(server, spider, key, "killed", DayDupeFilter(server, f"{key}:seen", store.tz, utcnow)).claiming()
    server.close()
    claimed = store.claim("qcwy", "killed", 3)
    with SandboxProcess(seed=4, postings=(200, 200)) as sandbox:
        finish(start_workers(1, mariadb_url, sandbox, shared, tmp_path), tmp_path)
        check_everything_once(mariadb_url, sandbox, rows)  # the killed worker's three included
    assert {k["crawler_id"] for k in keywords(mariadb_url) if k["id"] in {lease.id for lease in claimed}} == {"worker0"}
    assert "3 keyword(s) held by killed in the keyword table, adopted" in logs(tmp_path)


def test_a_worker_killed_and_started_again_under_its_id_without_jobdir_takes_its_work_back(
    mariadb_url, shared, tmp_path
):
    """No survivor, no checkpoint, FARM_LEASE_TIMEOUT far away: the worker started again under the same
    FARM_CRAWLER_ID puts back what it had in flight (its own heartbeat would keep it there for ever,
    and every worker waiting on it) and adopts the keywords the keyword table says it holds."""
    rows = rows_for(12)
    prepare_db(mariadb_url, rows)
    slow = {"DOWNLOAD_DELAY": 0.02, "CONCURRENT_REQUESTS": 2}
    with SandboxProcess(seed=5, postings=(200, 200)) as sandbox:
        start = lambda: start_workers(1, mariadb_url, sandbox, shared, tmp_path, **slow)[0]  # noqa: E731
        assert kill_at_a_random_moment(sandbox, start, random.Random(5), 20, 40)
        finish([start()], tmp_path, timeout=120)
        check_everything_once(mariadb_url, sandbox, rows)
    assert "held by worker0 in the keyword table, adopted" in logs(tmp_path)


def test_redis_losing_everything_mid_crawl_is_rebuilt_from_the_keyword_table(mariadb_url, tmp_path):
    # a Redis database of its own, emptied mid-crawl as a FLUSHALL or a restart without persistence
    # would; a prefix of its own too, so that a run beside this one is flushed and rebuilt, not mixed in
    url = REDIS_URL.rsplit("/", 1)[0] + "/13"
    prefix = f"farm-flush-{uuid.uuid4().hex[:8]}"
    client = redis.Redis.from_url(url)
    rows = rows_for(24)
    prepare_db(mariadb_url, rows)
    try:
        with SandboxProcess(seed=7, postings=(200, 200)) as sandbox:
            slow = {"DOWNLOAD_DELAY": 0.02, "CONCURRENT_REQUESTS": 2}
            workers = start_workers(3, mariadb_url, sandbox, (url, prefix), tmp_path, **slow)
            wait_until(lambda: served(sandbox) >= 60, 60, "a third of the pages")
            client.flushdb()
            finish(workers, tmp_path, timeout=180)
            pages = check_everything_once(mariadb_url, sandbox, rows)
            # none twice: the pages the workers held as Redis lost them are written back before the rebuild
            assert fetched_pages(sandbox, "qcwy") == {page: 1 for page in pages}
        output = logs(tmp_path)
        assert "rebuilt from the keyword table" in output
    finally:
        keys = list(client.scan_iter(f"{prefix}:*"))
        if keys:
            client.delete(*keys)
        client.close()


def test_three_workers_keep_one_shared_rate(mariadb_url, shared, tmp_path):
    rows = rows_for(12)
    prepare_db(mariadb_url, rows)
    with SandboxProcess(seed=3, postings=(200, 200)) as sandbox:
        workers = start_workers(3, mariadb_url, sandbox, shared, tmp_path, FARM_QCWY_RATE=20)
        finish(workers, tmp_path, timeout=120)
        timeline = sandbox.timeline()
    seconds = sorted(timeline)
    assert sum(timeline.values()) >= 100
    for start in range(seconds[0], seconds[-1] - 3):
        window = sum(timeline.get(second, 0) for second in range(start, start + 5))
        assert window <= 5 * 20 * 1.2, (start, window)  # about 20 a second, whatever the number of workers


def test_mariadb_gone_for_10_seconds_mid_crawl_is_ridden_out(mariadb_url, shared, tmp_path):
    rows = rows_for(18)
    prepare_db(mariadb_url, rows)
    relay, via_relay = relay_to_database(mariadb_url)
    try:
        with SandboxProcess(seed=8, postings=(200, 200)) as sandbox:
            slow = {"DOWNLOAD_DELAY": 0.02, "CONCURRENT_REQUESTS": 2}
            workers = start_workers(3, via_relay, sandbox, shared, tmp_path, **slow)
            wait_until(lambda: served(sandbox) >= 40, 60, "some pages")
            relay.stop()  # the database stops: connections drop, new ones are refused
            time.sleep(10)  # the outage itself, not a wait for a condition
            relay.restart()
            finish(workers, tmp_path, timeout=180)
            check_everything_once(mariadb_url, sandbox, rows)
        assert "the database is unreachable" in logs(tmp_path)
    finally:
        relay.stop()


def test_mariadb_silent_mid_crawl_is_an_outage_ridden_out(mariadb_url, shared, tmp_path):
    rows = rows_for(12)
    prepare_db(mariadb_url, rows)
    relay, via_relay = relay_to_database(mariadb_url)
    try:
        with SandboxProcess(seed=9, postings=(200, 200)) as sandbox:
            slow = {"DOWNLOAD_DELAY": 0.02, "CONCURRENT_REQUESTS": 2, "FARM_DB_TIMEOUT": 1}
            workers = start_workers(2, via_relay, sandbox, shared, tmp_path, **slow)
            wait_until(lambda: served(sandbox) >= 30, 60, "some pages")
            relay.stall()  # the server keeps every connection and answers nothing
            wait_until(lambda: "timed out" in logs(tmp_path), 30, "the crawl to see the silence as an outage")
            time.sleep(3)  # the outage itself goes on, not a wait for a condition
            relay.resume()  # what the workers sent meanwhile reaches it: writes whose outcome they never learnt
            finish(workers, tmp_path, timeout=120)
            check_everything_once(mariadb_url, sandbox, rows)
        assert "the database is unreachable" in logs(tmp_path)
    finally:
        relay.stop()


@pytest.mark.parametrize(
    "setting, url, words",
    [
        (
            "FARM_REDIS_URL",
            "redis://:s3cret@127.0.0.1:9/0",
            "cannot reach Redis at FARM_REDIS_URL='redis://:***@127.0.0.1:9/0'",
        ),
        (
            "FARM_DB_URL",
            "mysql+pymysql://root:s3cret@127.0.0.1:9/farm",
            "cannot reach the database at FARM_DB_URL='mysql+pymysql://root:***@127.0.0.1:9/farm'",
        ),
    ],
)
def test_redis_or_the_database_unreachable_at_start_is_one_clear_line_and_a_failure(
    setting, url, words, mariadb_url, shared, tmp_path
):
    prepare_db(mariadb_url, rows_for(2))
    redis_url = url if setting == "FARM_REDIS_URL" else shared[0]
    db_url = url if setting == "FARM_DB_URL" else mariadb_url
    crawl = start_crawl("qcwy", db_url, "http://127.0.0.1:9", tmp_path / "worker.log", redis=(redis_url, shared[1]))
    assert stop(crawl, 60) != 0
    output = logs(tmp_path)
    assert f"ERROR: farm: {words}" in output and "s3cret" not in output


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


@pytest.fixture
def private_redis():
    """A redis-server of this test's own, on a free port (stalled and flushed as the shared one must
    never be); its URL, and the process."""
    port = free_port()
    server = subprocess.Popen(
        ["redis-server", "--port", str(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no"],
        stdout=subprocess.DEVNULL,
    )
    url = f"redis://127.0.0.1:{port}/0"
    client = redis.Redis.from_url(url)

    def answers():
        try:
            return client.ping()
        except redis.ConnectionError:
            return False

    try:
        wait_until(answers, 10, "the private redis-server to answer")
        yield url, server
    finally:
        client.close()
        server.send_signal(signal.SIGCONT)  # should the test have failed while it was stopped
        server.kill()
        server.wait()


def test_redis_stalled_then_flushed_ends_the_crawl_with_everything_once_at_its_pace(
    mariadb_url, private_redis, tmp_path
):
    """Redis stalls for longer than the link's socket timeout (10 s), so that replies are lost, then
    loses everything (a FLUSHALL); two workers share a pace of 8 requests a second. The stall is shorter
    than FARM_WORKER_TIMEOUT, as an operator's would be: no worker finds the other stopped and puts back
    what it holds (a batch taken by a pop whose reply was lost would stay in its in-flight set)."""
    url, server = private_redis
    rows = rows_for(8)
    prepare_db(mariadb_url, rows)
    client = redis.Redis.from_url(url)
    rate = 8
    with SandboxProcess(seed=10, postings=(200, 200)) as sandbox:
        workers = start_workers(
            2, mariadb_url, sandbox, (url, "farm"), tmp_path, FARM_QCWY_RATE=rate, FARM_WORKER_TIMEOUT=30
        )
        wait_until(lambda: served(sandbox) >= 15, 60, "some pages")
        server.send_signal(signal.SIGSTOP)  # Redis stalls: every command waits past the socket timeout
        time.sleep(12)  # the stall itself, not a wait for a condition
        server.send_signal(signal.SIGCONT)
        resumed = served(sandbox) + 8
        wait_until(lambda: served(sandbox) >= resumed, 60, "the crawl to go on after the stall")
        client.flushall()  # then Redis loses everything
        client.close()
        finish(workers, tmp_path, timeout=120)
        check_everything_once(mariadb_url, sandbox, rows)
        timeline = sandbox.timeline()
    output = logs(tmp_path)
    assert "Redis unreachable" in output and "rebuilt from the keyword table" in output
    seconds = sorted(timeline)
    for start in range(seconds[0], seconds[-1] - 3):
        window = sum(timeline.get(second, 0) for second in range(start, start + 5))
        assert window <= 5 * rate * 1.2, (start, window)  # the pace held through the stall and the flush
