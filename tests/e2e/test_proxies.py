"""Proxies (FARM_PROXIES) in real crawls through real forward proxies (tests/proxy.py) to the sandbox.

A proxy whose address the site has banned is a ForwardProxy with ``blocking``: it answers every
request with the site's 403, as the site would answer that address.
"""

import base64
import socket

import pytest
import redis

from farm.crawl.proxies import Proxy
from farm.sandbox.testing import SandboxProcess
from tests.e2e.harness import (
    crawl_stat,
    expected_crawl,
    fetched_pages,
    keywords,
    prepare_db,
    run_crawl,
    start_crawl,
    stop,
    stored_postings,
    wait_until,
)
from tests.proxy import ForwardProxy

pytestmark = pytest.mark.e2e

CITIES = ("北京", "上海", "广州", "深圳", "杭州", "成都")
PASSWORDS = ("pa55-Good-7f3a", "pa55-Bad-91c2")


def rows_for(n):
    return [("qcwy", CITIES[i % len(CITIES)], f"job{i}") for i in range(n)]


def secrets_in(output):
    """Each proxy password, and each Basic credential made from it, that shows in ``output``."""
    found = [password for password in PASSWORDS if password in output]
    for user, password in (("good", PASSWORDS[0]), ("bad", PASSWORDS[1])):
        token = base64.b64encode(f"{user}:{password}".encode()).decode()
        if token in output:
            found.append(token)
    return found


def check_completed(db_url, sandbox, rows, max_pages):
    pages, ids, per_keyword = expected_crawl(sandbox, "qcwy", rows, max_pages)
    progress = {(k["city"], k["job"]): (k["crawl_status"], k["jobs_found"]) for k in keywords(db_url)}
    assert progress == {key: ("completed", jobs) for key, (_, jobs) in per_keyword.items()}
    stored = stored_postings(db_url, "qcwy")
    assert len(stored) == len(set(stored)) and set(stored) == ids
    return pages


def test_a_proxy_drawing_blocks_is_quarantined_and_every_keyword_completes_through_the_other(sqlite_url):
    rows = rows_for(6)
    prepare_db(sqlite_url, rows)
    with (
        SandboxProcess(seed=4, postings=(100, 100)) as sandbox,
        ForwardProxy(auth=("good", PASSWORDS[0])) as good,
        ForwardProxy(auth=("bad", PASSWORDS[1]), blocking=True) as bad,
    ):
        proxies = f"{bad.url_with_credentials},{good.url_with_credentials}"
        # DEBUG: every line Scrapy and farm can write about a request, a retry or a setting
        proc = run_crawl(
            "qcwy", sqlite_url, sandbox.url, FARM_QCWY_MAX_PAGES=5, FARM_PROXIES=proxies, LOG_LEVEL="DEBUG"
        )
        output = proc.output
        assert proc.returncode == 0, output[-3000:]
        pages = check_completed(sqlite_url, sandbox, rows, 5)
        assert fetched_pages(sandbox, "qcwy") == {page: 1 for page in pages}
    assert good.relayed == len(pages) and good.refused == 0  # each page once, with the proxy's credentials
    # only what left before the first block came back went through the banned proxy
    bad_label = Proxy.of(bad.url_with_credentials).label
    assert 1 <= bad.blocked == crawl_stat(output, f"farm/proxy/used/{bad_label}") <= 8
    assert bad.relayed == 0 and bad.refused == 0
    assert crawl_stat(output, "farm/proxy/quarantined") == bad.blocked
    assert crawl_stat(output, "farm/block/gave_up") == 0
    assert f"farm: proxy {bad_label} quarantined for 1800s" in output
    assert secrets_in(output) == []


def test_a_dead_proxy_is_quarantined_without_slowing_the_site_and_the_crawl_completes(sqlite_url):
    rows = rows_for(4)
    prepare_db(sqlite_url, rows)
    with socket.socket() as closed:  # a port nothing listens on: a proxy that is down
        closed.bind(("127.0.0.1", 0))
        dead = f"http://dead:{PASSWORDS[1]}@127.0.0.1:{closed.getsockname()[1]}"
    with SandboxProcess(seed=4, postings=(60, 60)) as sandbox, ForwardProxy() as good:
        proc = run_crawl("qcwy", sqlite_url, sandbox.url, FARM_QCWY_MAX_PAGES=3, FARM_PROXIES=f"{dead},{good.url}")
        assert proc.returncode == 0, proc.output[-3000:]
        pages = check_completed(sqlite_url, sandbox, rows, 3)
    output = proc.output
    assert good.relayed == len(pages)
    assert crawl_stat(output, "farm/proxy/unreachable") >= 1
    assert crawl_stat(output, "farm/proxy/retry/count") == crawl_stat(output, "farm/proxy/unreachable")
    assert crawl_stat(output, "farm/site/errors") == 0  # the proxy's failure, not the site's
    assert f"farm: proxy {Proxy.of(dead).label} quarantined for 1800s: cannot be reached" in output
    assert secrets_in(output) == []


def test_with_every_proxy_quarantined_the_crawl_waits_and_fails_no_keyword(sqlite_url, tmp_path):
    rows = rows_for(4)
    prepare_db(sqlite_url, rows)
    quarantine = 4.0
    with (
        SandboxProcess(seed=5, postings=(60, 60)) as sandbox,
        ForwardProxy(auth=("good", PASSWORDS[0]), blocking=True) as first,
        ForwardProxy(blocking=True) as second,
    ):
        crawl = start_crawl(
            "qcwy",
            sqlite_url,
            sandbox.url,
            tmp_path / "crawl.log",
            FARM_QCWY_MAX_PAGES=3,
            FARM_LEASES_IN_FLIGHT=2,
            FARM_PROXY_QUARANTINE=quarantine,
            FARM_PROXIES=f"{first.url_with_credentials},{second.url}",
        )
        try:
            wait_until(lambda: first.blocked and second.blocked, 60, "both proxies to draw a block")
            first.blocking = second.blocking = False  # the bans are lifted; the quarantines still run
            assert stop(crawl, 120) == 0
        finally:
            crawl.kill()
            crawl.wait()
        output = (tmp_path / "crawl.log").read_text()
        check_completed(sqlite_url, sandbox, rows, 3)
    assert crawl_stat(output, "farm/proxy/none_free") >= 1
    assert "every proxy is quarantined; the crawl waits" in output
    assert crawl_stat(output, "farm/block/gave_up") == 0 and crawl_stat(output, "farm/site/gave_up") == 0
    # the wait itself: a stretch of most of a quarantine in which no request reached any proxy
    times = sorted(first.times + second.times)
    assert max(b - a for a, b in zip(times, times[1:])) >= 0.75 * quarantine
    assert secrets_in(output) == []


@pytest.mark.redis
def test_a_proxy_one_worker_quarantines_is_never_used_by_another(mariadb_url, shared, tmp_path):
    rows = rows_for(40)
    prepare_db(mariadb_url, rows)
    client = redis.Redis.from_url(shared[0])
    key = f"{shared[1]}:qcwy:proxies:quarantined"
    slow = {
        "FARM_QCWY_MAX_PAGES": 10,
        "FARM_WORKER_TIMEOUT": 2,
        "FARM_PAGES_IN_FLIGHT": 8,
        "FARM_LEASES_IN_FLIGHT": 3,
        "DOWNLOAD_DELAY": 0.05,
        "CONCURRENT_REQUESTS": 2,
    }
    with (
        SandboxProcess(seed=6, postings=(200, 200)) as sandbox,
        ForwardProxy(auth=("good", PASSWORDS[0])) as good,
        ForwardProxy(auth=("bad", PASSWORDS[1]), blocking=True) as bad,
    ):
        proxies = f"{bad.url_with_credentials},{good.url_with_credentials}"
        bad_id = Proxy.of(bad.url_with_credentials).id
        workers = [
            start_crawl(
                "qcwy",
                mariadb_url,
                sandbox.url,
                tmp_path / "worker0.log",
                redis=shared,
                FARM_CRAWLER_ID="worker0",
                FARM_PROXIES=proxies,
                **slow,
            )
        ]
        try:
            wait_until(lambda: client.zscore(key, bad_id) is not None, 60, "worker0 to quarantine the bad proxy")
            assert 1700 <= client.pttl(key) / 1000 <= 1800  # it expires with its last quarantine
            assert client.zrange(key, 0, -1) == [bad_id.encode()]  # a hash: no credentials in Redis
            blocked_before = bad.blocked
            workers.append(
                start_crawl(
                    "qcwy",
                    mariadb_url,
                    sandbox.url,
                    tmp_path / "worker1.log",
                    redis=shared,
                    FARM_CRAWLER_ID="worker1",
                    FARM_PROXIES=proxies,
                    **slow,
                )
            )
            for worker in workers:
                assert stop(worker, 180) == 0
        finally:
            for worker in workers:
                worker.kill()
                worker.wait()
        logs = [(tmp_path / f"worker{i}.log").read_text() for i in range(2)]
        check_completed(mariadb_url, sandbox, rows, 10)
    bad_label, good_label = (Proxy.of(p.url_with_credentials).label for p in (bad, good))
    assert crawl_stat(logs[1], f"farm/proxy/used/{good_label}") > 0  # worker1 crawled...
    assert crawl_stat(logs[1], f"farm/proxy/used/{bad_label}") == 0  # ...never through the quarantined proxy
    assert bad.blocked == blocked_before == crawl_stat(logs[0], f"farm/proxy/used/{bad_label}")
    for key_name in client.scan_iter(f"{shared[1]}:*"):
        if client.type(key_name) == b"hash":
            assert not secrets_in(str(client.hgetall(key_name)))
    assert secrets_in("\n".join(logs)) == []
    client.close()


def test_a_bad_proxy_entry_stops_the_crawl_at_start_naming_it_with_its_password_masked(sqlite_url):
    prepare_db(sqlite_url, rows_for(1))
    proxies = f"http://good:{PASSWORDS[0]}@127.0.0.1:3128,socks5://bad:{PASSWORDS[1]}@127.0.0.1:1080"
    proc = run_crawl("qcwy", sqlite_url, "http://127.0.0.1:9", timeout=60, FARM_PROXIES=proxies)
    assert proc.returncode != 0
    assert "FARM_PROXIES: 'socks5://bad:***@127.0.0.1:1080' is not an http:// or https:// proxy URL" in proc.output
    assert secrets_in(proc.output) == []
    assert [k["crawl_status"] for k in keywords(sqlite_url)] == ["idle"]  # nothing claimed
