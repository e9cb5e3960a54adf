"""Prometheus metrics of one crawl on FARM_METRICS_PORT (off unless it is set).

Every value is read when Prometheus scrapes, by a collector over what the crawl
keeps anyway: its stats (the ``farm/...`` names and Scrapy's own) and its
parts (farm.crawl.parts: the keywords held, the scheduler's queue, the page
window, the outbox). Nothing is counted on the crawl's hot path. The endpoint is served by
the reactor itself (twisted.web), so a scrape reads the values between two
callbacks, never while one is changing them.

Every sample is labelled ``site`` (the spider) and ``crawler_id``
(FARM_CRAWLER_ID). After the crawl, the endpoint stays up for at most
FARM_METRICS_LINGER seconds, until it has been scraped once more: so that
Prometheus sees the final counts of a crawl that ended between two scrapes.
"""

import logging
from functools import cached_property

from prometheus_client import CollectorRegistry, ProcessCollector, generate_latest
from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily
from prometheus_client.exposition import CONTENT_TYPE_LATEST
from scrapy import signals
from scrapy.exceptions import NotConfigured
from scrapy.utils.defer import maybe_deferred_to_future
from twisted.internet import reactor
from twisted.internet.defer import Deferred, maybeDeferred
from twisted.internet.error import CannotListenError
from twisted.web.resource import Resource
from twisted.web.server import Site

from farm.config import FarmConfig
from farm.crawl.identities import STATES
from farm.crawl.parts import FarmExtension
from farm.errors import MetricsPortError

logger = logging.getLogger(__name__)

LABELS = ["site", "crawler_id"]
SENT = 0.2  # seconds for the last answer to leave before the endpoint closes

# (metric, help, stat): counters read from the crawl's stats as they are
COUNTERS = [
    ("farm_pages", "Pages recorded done (postings committed, the keyword's progress written)", "farm/progress/pages"),
    ("farm_pages_parsed", "Result pages parsed", "farm/page/parsed"),
    ("farm_postings", "Postings committed to job_posting (inserted or updated)", "farm/sql/upserted"),
    ("farm_postings_scraped", "Postings through the item pipeline", "item_scraped_count"),
    ("farm_responses", "Responses received (every page, retries included)", "response_received_count"),
    ("farm_leases_reaped", "Stale leases this crawler's reaper made partial", "farm/lease/reaped"),
    ("farm_sessions_earned", "Sessions earned in headless Chromium past a site's wall", "farm/session/earned"),
    ("farm_browser_pages", "Browser pages opened to pass walls", "farm/browser/pages"),
]
# (metric, help, label, {label value: stat})
LABELLED_COUNTERS = [
    (
        "farm_keywords_claimed",
        "Keywords claimed, by what they were before",
        "from",
        {kind: f"farm/lease/claimed/{kind}" for kind in ("fresh", "partial", "failed")},
    ),
    (
        "farm_keywords_ended",
        "Keywords ended by this crawler, by how",
        "outcome",
        {outcome: f"farm/keyword/{outcome}" for outcome in ("completed", "failed", "blocked", "released", "lost")},
    ),
    (
        "farm_errors",
        "Errors, by kind",
        "kind",
        {
            "page": "farm/page/error",  # a page failed its keyword (HTTP error, transport error)
            "unparsable": "farm/page/unparsable",
            "site": "farm/site/errors",  # server and transport errors met (each retried)
            "sql": "farm/sql/error",
            "posting_rejected": "farm/posting/rejected",
            "claim": "farm/lease/claim_error",
            "reap": "farm/lease/reap_error",
            "spider": "spider_exceptions/count",
            "download": "downloader/exception_count",
        },
    ),
    (
        "farm_walls_not_passed",
        "Walls the browser could not pass, by why: a slider (not solved), no cookie in time, no browser, "
        "or an unknown wall's session that got no data",
        "kind",
        {kind: f"farm/wall/not_passed/{kind}" for kind in ("slider", "timeout", "browser", "unproven")},
    ),
    (
        "farm_retries",
        "Requests retried: after a site block, site trouble, a proxy unreachable (FARM_PROXIES), "
        "or by Scrapy's RetryMiddleware",
        "kind",
        {
            "block": "farm/block/retry/count",
            "site": "farm/site/retry/count",
            "proxy": "farm/proxy/retry/count",
            "other": "retry/count",
        },
    ),
]
BLOCK_PREFIX = "farm/block/"
NOT_BLOCK_REASONS = {"count", "gave_up"}  # farm/block/<reason> counts each block by its reason


class FarmMetrics(FarmExtension):
    def __init__(self, crawler, host: str, port: int, linger: float):
        self.crawler = crawler
        self.host = host
        self.port = port
        self.linger = linger
        self.registry = CollectorRegistry(auto_describe=False)
        self.registry.register(_Collector(self))
        ProcessCollector(registry=self.registry)  # CPU and memory, read from /proc at scrape time
        self.open = False
        self._scraped_after_close: Deferred | None = None
        self._listening = None

    @classmethod
    def from_crawler(cls, crawler):
        cls.require_farm_spider(crawler)
        config = FarmConfig.of(crawler)
        if not config.metrics_port:
            raise NotConfigured("FARM_METRICS_PORT is not set")
        ext = cls(crawler, config.metrics_host, config.metrics_port, config.metrics_linger)
        ext.listen()  # before the crawl's parts start its state writer: a port in use fails the crawl first
        crawler.signals.connect(ext.spider_opened, signal=signals.spider_opened)
        crawler.signals.connect(ext.engine_stopped, signal=signals.engine_stopped)
        return ext

    @cached_property
    def labels(self) -> list[str]:
        # the crawler id the parts hold: a crawl resumed from JOBDIR holds its keywords under its first id
        return [self.crawler.spidercls.name, self.parts.crawler_id]

    def listen(self) -> None:
        root = Resource()
        root.putChild(b"metrics", _MetricsPage(self))
        root.putChild(b"", _MetricsPage(self))
        site = _QuietSite(root)
        try:
            self._listening = reactor.listenTCP(self.port, site, interface=self.host)
        except CannotListenError as exc:
            raise MetricsPortError(
                f"FARM_METRICS_PORT={self.port}: cannot listen on {self.host}:{self.port} ({exc.socketError}); "
                "is another crawler on this machine using it? Give each crawler its own FARM_METRICS_PORT"
            ) from None
        logger.info("farm: Prometheus metrics on http://%s:%s/metrics", self.host, self.port)

    def spider_opened(self, spider):
        self.open = True

    async def engine_stopped(self):
        self.open = False
        if self.linger > 0:
            waiting = self._scraped_after_close = Deferred()
            timer = reactor.callLater(self.linger, self._release, waiting)
            logger.info("farm: the metrics endpoint stays up until it is scraped once more (at most %ss)", self.linger)
            await maybe_deferred_to_future(waiting)
            if timer.active():
                timer.cancel()
        listening, self._listening = self._listening, None
        if listening is not None:
            await maybe_deferred_to_future(maybeDeferred(listening.stopListening))

    def render(self, request) -> bytes:
        body = generate_latest(self.registry)
        waiting = self._scraped_after_close
        if waiting is not None and not waiting.called:
            # the final values are out: the crawl's process may end once this answer is on its way
            request.notifyFinish().addBoth(lambda _: reactor.callLater(SENT, self._release, waiting))
        return body

    @staticmethod
    def _release(waiting: Deferred):
        if not waiting.called:
            waiting.callback(None)


class _QuietSite(Site):
    noisy = False

    def log(self, request):  # no access log line per scrape
        pass


class _MetricsPage(Resource):
    isLeaf = True

    def __init__(self, ext: FarmMetrics):
        super().__init__()
        self.ext = ext

    def render_GET(self, request):
        request.setHeader(b"Content-Type", CONTENT_TYPE_LATEST.encode())
        return self.ext.render(request)


class _Collector:
    """The values at scrape time, from the crawl's stats and parts."""

    def __init__(self, ext: FarmMetrics):
        self.ext = ext

    def collect(self):
        ext = self.ext
        labels = ext.labels
        stats = ext.crawler.stats.get_stats()
        for name, text, stat in COUNTERS:
            family = CounterMetricFamily(name, text, labels=LABELS)
            family.add_metric(labels, stats.get(stat, 0))
            yield family
        for name, text, label, by_value in LABELLED_COUNTERS:
            family = CounterMetricFamily(name, text, labels=LABELS + [label])
            for value, stat in by_value.items():
                family.add_metric(labels + [value], stats.get(stat, 0))
            yield family
        blocks = CounterMetricFamily(
            "farm_blocks", "Site blocks met, by reason (each retried or ending its keyword)", labels=LABELS + ["reason"]
        )
        for stat, count in sorted(stats.items()):
            reason = stat[len(BLOCK_PREFIX) :] if stat.startswith(BLOCK_PREFIX) else None
            if reason and "/" not in reason and reason not in NOT_BLOCK_REASONS:
                blocks.add_metric(labels + [reason], count)
        yield blocks
        yield from self._gauges(labels, stats)
        yield from self._identities(labels, stats)

    def _identities(self, labels, stats):
        """Each identity of the site (a proxy, its password masked, or ``direct``): its pages, blocks,
        sessions earned, pages those sessions served, learned pace and state (farm.crawl.identities)."""
        seen = self.ext.parts.identities.seen()
        label = LABELS + ["identity"]
        pages = CounterMetricFamily("farm_identity_pages", "Good answers through each identity", labels=label)
        blocks = CounterMetricFamily("farm_identity_blocks", "Refusals each identity drew", labels=label)
        sessions = CounterMetricFamily("farm_identity_sessions", "Sessions each identity earned", labels=label)
        session_pages = CounterMetricFamily(
            "farm_identity_session_pages", "Pages the sessions of each identity served", labels=label
        )
        pace = GaugeMetricFamily(
            "farm_identity_pace", "Each identity's learned pace (requests a second; 0: no limit)", labels=label
        )
        state = GaugeMetricFamily(
            "farm_identity_state",
            "1 for each identity's state: working, cooling or quarantined",
            labels=label + ["state"],
        )
        for row in seen:
            named = labels + [row["identity"]]
            pages.add_metric(named, row["pages"])
            blocks.add_metric(named, row["blocks"])
            for family, what in ((sessions, "sessions"), (session_pages, "session_pages")):
                family.add_metric(named, stats.get(f"farm/identity/{row['identity']}/{what}", 0))
            pace.add_metric(named, row["pace"])
            for name in STATES:
                state.add_metric(named + [name], int(row["state"] == name))
        yield from (pages, blocks, sessions, session_pages, pace, state)

    def _gauges(self, labels, stats):
        ext = self.ext
        parts = ext.parts
        outbox = parts.outbox
        try:
            scheduler = ext.crawler.engine.scheduler  # None before the spider opens and after it closed
        except RuntimeError:  # no engine yet: scraped while the crawl starts
            scheduler = None
        values = [
            ("farm_crawl_open", "1 while the crawl runs, 0 once it has ended", int(ext.open)),
            ("farm_leases_held", "Keywords this crawler holds now", len(parts.registry.runs)),
            ("farm_queue_depth", "Requests in the scheduler's queue", len(scheduler) if scheduler is not None else 0),
            (
                "farm_pages_in_flight",
                "Pages fetched or being fetched whose progress is not recorded yet (at most FARM_PAGES_IN_FLIGHT)",
                len(parts.window),
            ),
            (
                "farm_writer_queued_postings",
                "Postings in the outbox, not yet sent to the state writer",
                len(outbox.postings),
            ),
            (
                "farm_writer_queued_ops",
                "Page progress, keyword ends and claims in the outbox, not yet sent to the state writer",
                len(outbox.ops),
            ),
            ("farm_writer_frames_in_flight", "Frames sent to the state writer and not yet committed", outbox.in_flight),
        ]
        for name, text, value in values:
            family = GaugeMetricFamily(name, text, labels=LABELS)
            family.add_metric(labels, value)
            yield family
        start = stats.get("start_time")
        if start is not None:
            family = GaugeMetricFamily(
                "farm_crawl_start_time_seconds", "When the crawl started (Unix time)", labels=LABELS
            )
            family.add_metric(labels, start.timestamp())
            yield family
