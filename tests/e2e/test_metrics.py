"""The Prometheus endpoint of a real crawl: scraped during and after it, against its stats dump and the table."""

import os
import socket
import time
import urllib.error
import urllib.request
from pathlib import Path

import pytest
from prometheus_client.parser import text_string_to_metric_families

from farm.sandbox.testing import SandboxProcess
from tests.e2e.harness import crawl_stat, keywords, prepare_db, run_crawl, served, start_crawl, stored_postings

pytestmark = pytest.mark.e2e

ROWS = [("qcwy", city, job) for city in ("北京", "上海", "广州", "深圳") for job in ("python", "java", "前端")]
# slowed down, so that there is a "during" to scrape
SETTINGS = {"FARM_QCWY_MAX_PAGES": 10, "CONCURRENT_REQUESTS": 4, "FARM_LEASES_IN_FLIGHT": 2, "DOWNLOAD_DELAY": 0.05}
LABELS = {("site", "qcwy"), ("crawler_id", "metrics-e2e")}
# metric -> the stat of Scrapy's end-of-crawl dump it must equal
FROM_STATS = {
    ("farm_pages_total", ()): "farm/progress/pages",
    ("farm_pages_parsed_total", ()): "farm/page/parsed",
    ("farm_postings_total", ()): "farm/sql/upserted",
    ("farm_postings_scraped_total", ()): "item_scraped_count",
    ("farm_responses_total", ()): "response_received_count",
    ("farm_keywords_claimed_total", (("from", "fresh"),)): "farm/lease/claimed/fresh",
    ("farm_keywords_ended_total", (("outcome", "completed"),)): "farm/keyword/completed",
}


def free_port():
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def scrape(port):
    """{(name, frozenset(labels)): value}, or None while nothing answers on the port."""
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=10) as response:
            text = response.read().decode()
    except (urllib.error.URLError, ConnectionError):
        return None
    return {
        (sample.name, frozenset(sample.labels.items())): sample.value
        for family in text_string_to_metric_families(text)
        for sample in family.samples
    }


def value(samples, name, *labels):
    return samples[(name, frozenset(LABELS | set(labels)))]


def poll(get, done, timeout, what, every=0.2):
    """``get()`` again every ``every`` seconds until ``done(result)``; the result. Fails after ``timeout``."""
    deadline = time.monotonic() + timeout
    while True:
        result = get()
        if result is not None and done(result):
            return result
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}; last: {result!r:.2000}")
        time.sleep(every)


def listening_ports(pid):
    """The TCP ports the process listens on (its socket fds that /proc/net/tcp* lists as LISTEN)."""
    inodes = set()
    for fd in Path(f"/proc/{pid}/fd").iterdir():
        try:
            link = os.readlink(fd)
        except OSError:
            continue
        if link.startswith("socket:["):
            inodes.add(link[len("socket:[") : -1])
    ports = set()
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        for line in Path(table).read_text().splitlines()[1:]:
            fields = line.split()
            if fields[3] == "0A" and fields[9] in inodes:  # 0A: LISTEN
                ports.add(int(fields[1].rsplit(":", 1)[1], 16))
    return ports


def pages_recorded(db_url):
    """Pages the keyword table holds as done: each watermark, and the pages done beyond it."""
    return sum(k["last_completed_page"] + len([p for p in k["pages_ahead"].split(",") if p]) for k in keywords(db_url))


def test_metrics_during_and_after_a_crawl_match_its_stats_and_the_keyword_table(sqlite_url, tmp_path):
    prepare_db(sqlite_url, ROWS)
    port = free_port()
    log_path = tmp_path / "crawl.log"
    with SandboxProcess(seed=4, postings=(200, 200)) as sandbox:
        crawler = start_crawl(
            "qcwy",
            sqlite_url,
            sandbox.url,
            log_path,
            FARM_METRICS_PORT=port,
            FARM_METRICS_HOST="127.0.0.1",
            FARM_METRICS_LINGER=60,
            FARM_CRAWLER_ID="metrics-e2e",
            **SETTINGS,
        )
        try:
            during = poll(lambda: scrape(port), lambda s: value(s, "farm_pages_total") >= 10, 90, "10 pages recorded")
            assert value(during, "farm_crawl_open") == 1
            assert port in listening_ports(crawler.pid)
            # counted once recorded: never more than the table holds, read just after
            assert 10 <= value(during, "farm_pages_total") <= pages_recorded(sqlite_url)
            assert 1 <= value(during, "farm_leases_held") <= SETTINGS["FARM_LEASES_IN_FLIGHT"]
            assert value(during, "farm_keywords_claimed_total", ("from", "fresh")) >= 1
            assert all(LABELS <= labels for name, labels in during if name.startswith("farm_"))

            # after: the endpoint stays up (FARM_METRICS_LINGER) until it has been scraped once more
            after = poll(lambda: scrape(port), lambda s: value(s, "farm_crawl_open") == 0, 120, "the crawl's end")
            waited = time.monotonic()
            assert crawler.wait(45) == 0  # ended by that scrape, well before the 60 s linger
            assert time.monotonic() - waited < 45
        finally:
            crawler.kill()
            crawler.wait(30)
        assert served(sandbox) == value(after, "farm_responses_total")
    log = log_path.read_text()
    for (name, labels), stat in FROM_STATS.items():
        assert value(after, name, *labels) == crawl_stat(log, stat), (name, stat)
    table = keywords(sqlite_url)
    assert {k["crawl_status"] for k in table} == {"completed"}
    assert value(after, "farm_pages_total") == sum(k["last_completed_page"] for k in table)
    # postings committed: each posting a keyword found, less a posting two keywords share that was written
    # once in one batch (a batch keeps one row a posting; two batches write it twice)
    stored = len(set(stored_postings(sqlite_url, "qcwy")))
    assert stored <= value(after, "farm_postings_total") <= sum(k["jobs_found"] for k in table)
    assert value(after, "farm_keywords_ended_total", ("outcome", "completed")) == len(ROWS)
    assert value(after, "farm_keywords_claimed_total", ("from", "fresh")) == len(ROWS)
    for gauge in (
        "farm_leases_held",
        "farm_queue_depth",
        "farm_pages_in_flight",
        "farm_writer_queued_postings",
        "farm_writer_queued_ops",
        "farm_writer_frames_in_flight",
    ):
        assert value(after, gauge) == 0, gauge
    assert value(after, "farm_errors_total", ("kind", "page")) == 0


def test_metrics_are_off_by_default_no_port_is_opened(sqlite_url, tmp_path):
    prepare_db(sqlite_url, ROWS[:4])
    log_path = tmp_path / "crawl.log"
    with SandboxProcess(seed=4, postings=(200, 200)) as sandbox:
        crawler = start_crawl("qcwy", sqlite_url, sandbox.url, log_path, **SETTINGS)
        try:
            poll(lambda: served(sandbox), lambda n: n >= 3 or crawler.poll() is not None, 60, "3 pages served")
            assert crawler.poll() is None, "the crawl ended before it could be looked at"
            assert listening_ports(crawler.pid) == set()
            assert crawler.wait(120) == 0
        finally:
            crawler.kill()
            crawler.wait(30)
    log = log_path.read_text()
    assert "Disabled farm.extensions.metrics.FarmMetrics: FARM_METRICS_PORT is not set" in log
    enabled = log.split("Enabled extensions:", 1)[1].split("]", 1)[0]
    assert "farm.extensions.logstats.FarmLogStats" in enabled and "FarmMetrics" not in enabled


def test_a_port_in_use_stops_the_crawl_at_start_before_anything_is_claimed(sqlite_url):
    prepare_db(sqlite_url, ROWS[:2])
    before = keywords(sqlite_url)
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        with SandboxProcess(seed=4) as sandbox:
            proc = run_crawl(
                "qcwy", sqlite_url, sandbox.url, timeout=60, FARM_METRICS_PORT=port, FARM_METRICS_HOST="127.0.0.1"
            )
            assert served(sandbox) == 0
    assert proc.returncode == 1
    assert f"MetricsPortError: FARM_METRICS_PORT={port}: cannot listen on 127.0.0.1:{port} (" in proc.output
    assert keywords(sqlite_url) == before
