"""The Prometheus extension without a crawl: off by default, its values read from the stats and the runtime."""

import socket
import urllib.request

import pytest
import pytest_twisted
from prometheus_client import generate_latest
from prometheus_client.parser import text_string_to_metric_families
from twisted.internet import threads

from farm.crawl.parts import CrawlParts
from farm.errors import MetricsPortError
from farm.extensions.metrics import FarmMetrics
from tests.unit.components import component, make_crawler
from tests.unit.spider_helpers import make_lease

ROWS = [("qcwy", "北京", "python")]


def free_port():
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def samples(text):
    """{(name, frozenset(labels)): value} of an exposition."""
    return {
        (sample.name, frozenset(sample.labels.items())): sample.value
        for family in text_string_to_metric_families(text)
        for sample in family.samples
    }


@pytest.fixture
def metrics_crawler(sqlite_url):
    crawler = make_crawler(
        sqlite_url, ROWS, FARM_METRICS_PORT=free_port(), FARM_METRICS_HOST="127.0.0.1", FARM_CRAWLER_ID="unit-1"
    )
    yield crawler
    ext = component(crawler, FarmMetrics)
    if ext._listening is not None:
        ext._listening.stopListening()
    crawler.get_extension(CrawlParts).close()


def test_off_by_default(sqlite_url):
    crawler = make_crawler(sqlite_url, ROWS)
    try:
        assert crawler.settings.getint("FARM_METRICS_PORT") == 0
        assert not [ext for ext in crawler.extensions.middlewares if isinstance(ext, FarmMetrics)]
    finally:
        crawler.get_extension(CrawlParts).close()


def test_values_come_from_the_stats_and_the_runtime_labelled_by_site_and_crawler(metrics_crawler):
    crawler = metrics_crawler
    ext = component(crawler, FarmMetrics)
    for name, value in {
        "farm/progress/pages": 120,
        "farm/sql/upserted": 2390,
        "item_scraped_count": 2400,
        "farm/lease/claimed/fresh": 7,
        "farm/lease/claimed/partial": 2,
        "farm/keyword/completed": 6,
        "farm/keyword/blocked": 1,
        "farm/block/count": 4,
        "farm/block/gave_up": 1,
        "farm/block/http_403": 3,
        "farm/block/waf": 1,
        "farm/block/retry/count": 3,
        "farm/site/errors": 2,
        "farm/site/retry/count": 2,
        "farm/page/error": 1,
        "farm/block/qcwy_empty_page": 2,
        "farm/session/earned": 3,
        "farm/browser/pages": 4,
        "farm/wall/not_passed/slider": 2,
    }.items():
        crawler.stats.set_value(name, value)
    for keyword_id in (1, 2):
        crawler.get_extension(CrawlParts).registry.add(make_lease("qcwy", id=keyword_id))
    ext.parts.outbox.postings.extend([b"{}"] * 5)
    try:
        got = samples(generate_latest(ext.registry).decode())
    finally:
        ext.parts.outbox.postings.clear()
    base = {("site", "qcwy"), ("crawler_id", "unit-1")}

    def value(name, **labels):
        return got[(name, frozenset(base | set(labels.items())))]

    assert value("farm_pages_total") == 120
    assert value("farm_postings_total") == 2390
    assert value("farm_postings_scraped_total") == 2400
    assert value("farm_keywords_claimed_total", **{"from": "fresh"}) == 7
    assert value("farm_keywords_claimed_total", **{"from": "partial"}) == 2
    assert value("farm_keywords_ended_total", outcome="completed") == 6
    assert value("farm_keywords_ended_total", outcome="blocked") == 1
    # blocks by reason: farm/block/<reason>, not the totals beside them
    blocks = {dict(labels)["reason"]: v for (name, labels), v in got.items() if name == "farm_blocks_total"}
    assert blocks == {"http_403": 3, "waf": 1, "qcwy_empty_page": 2}  # refusals by shape, as blocks
    assert value("farm_sessions_earned_total") == 3 and value("farm_browser_pages_total") == 4
    assert value("farm_walls_not_passed_total", kind="slider") == 2
    assert value("farm_retries_total", kind="block") == 3
    assert value("farm_retries_total", kind="site") == 2
    assert value("farm_errors_total", kind="site") == 2
    assert value("farm_errors_total", kind="page") == 1
    assert value("farm_leases_held") == 2
    assert value("farm_writer_queued_postings") == 5
    assert value("farm_queue_depth") == 0  # no engine running
    # every farm sample carries both labels
    assert all(base <= labels for (name, labels) in got if name.startswith("farm_"))


@pytest_twisted.ensureDeferred
async def test_the_endpoint_serves_the_exposition(metrics_crawler):
    ext = component(metrics_crawler, FarmMetrics)
    metrics_crawler.stats.set_value("farm/progress/pages", 3)

    def get():
        with urllib.request.urlopen(f"http://127.0.0.1:{ext.port}/metrics", timeout=10) as response:
            return response.headers["Content-Type"], response.read().decode()

    content_type, body = await threads.deferToThread(get)
    assert content_type.startswith("text/plain; version=")
    assert 'farm_pages_total{crawler_id="unit-1",site="qcwy"} 3.0' in body


def test_a_port_in_use_fails_the_crawl_at_start_naming_the_setting(sqlite_url):
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        with pytest.raises(MetricsPortError) as raised:
            make_crawler(sqlite_url, ROWS, FARM_METRICS_PORT=port, FARM_METRICS_HOST="127.0.0.1")
    assert str(raised.value).startswith(f"FARM_METRICS_PORT={port}: cannot listen on 127.0.0.1:{port} (")
    assert "Give each crawler its own FARM_METRICS_PORT" in str(raised.value)


def test_the_grafana_dashboard_charts_only_exported_metrics_from_a_prometheus_variable(metrics_crawler):
    import json
    import re
    from pathlib import Path

    dashboard = json.loads((Path(__file__).resolve().parents[2] / "deploy" / "grafana-farm.json").read_text())
    metrics_crawler.stats.set_value("farm/block/http_403", 1)  # farm_blocks_total has samples once a block was met
    exported = {name for name, _ in samples(generate_latest(component(metrics_crawler, FarmMetrics).registry).decode())}
    variables = {v["name"]: v for v in dashboard["templating"]["list"]}
    assert (variables["datasource"]["type"], variables["datasource"]["query"]) == ("datasource", "prometheus")
    charts = [panel for panel in dashboard["panels"] if panel["type"] != "row"]
    assert len(charts) >= 10
    assert len({panel["id"] for panel in dashboard["panels"]}) == len(dashboard["panels"])
    used = set()
    for panel in charts:
        assert panel["datasource"] == {"type": "prometheus", "uid": "${datasource}"}, panel["title"]
        assert panel["targets"] and set(panel["gridPos"]) == {"h", "w", "x", "y"}
        for target in panel["targets"]:
            used.update(re.findall(r"\bfarm_[a-z_]+", target["expr"]))
    assert used and used <= exported, used - exported
    # every kind of metric farm exports is charted
    assert {
        "farm_pages_total",
        "farm_postings_total",
        "farm_leases_held",
        "farm_keywords_claimed_total",
        "farm_blocks_total",
        "farm_errors_total",
        "farm_retries_total",
        "farm_queue_depth",
        "farm_writer_queued_postings",
        "farm_writer_frames_in_flight",
    } <= used


def test_each_identity_is_a_labelled_series_its_proxy_password_masked(sqlite_url):
    from scrapy import Request

    crawler = make_crawler(
        sqlite_url,
        ROWS,
        FARM_METRICS_PORT=free_port(),
        FARM_METRICS_HOST="127.0.0.1",
        FARM_CRAWLER_ID="unit-1",
        FARM_QCWY_RATE=2,
        FARM_PROXIES="http://alice:s3cret@10.0.0.1:3128,http://10.0.0.2:3128",
    )
    ext = component(crawler, FarmMetrics)
    try:
        identities = ext.parts.identities
        first, second = Request("http://example.com/1"), Request("http://example.com/2")
        assert identities.take(first) == 0 and identities.take(second) == 0
        identities.answered(second)
        identities.refused(first, "HTTP 403")
        for what, count in (("sessions", 2), ("session_pages", 7)):  # farm.sessions.middleware counts them
            crawler.stats.set_value(f"farm/identity/http://alice:***@10.0.0.1:3128/{what}", count)
        text = generate_latest(ext.registry).decode()
    finally:
        if ext._listening is not None:
            ext._listening.stopListening()
        crawler.get_extension(CrawlParts).close()
    assert "s3cret" not in text
    got = samples(text)
    base = {("site", "qcwy"), ("crawler_id", "unit-1")}

    def value(name, identity, **labels):
        return got[(name, frozenset(base | {("identity", identity)} | set(labels.items())))]

    masked, plain = "http://alice:***@10.0.0.1:3128", "http://10.0.0.2:3128"
    assert value("farm_identity_blocks_total", masked) == 1 and value("farm_identity_pages_total", plain) == 1
    assert value("farm_identity_pace", masked) == 1.0 and value("farm_identity_pace", plain) == 2.0
    assert value("farm_identity_state", masked, state="quarantined") == 1
    assert value("farm_identity_state", plain, state="working") == 1
    assert (
        value("farm_identity_sessions_total", masked) == 2 and value("farm_identity_session_pages_total", masked) == 7
    )
    assert value("farm_identity_sessions_total", plain) == 0
