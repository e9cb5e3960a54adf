"""Building farm's components without a crawl: a crawler on farm's settings and a SQLite file."""

import time

from scrapy.utils.test import get_crawler
from twisted.internet import reactor
from twisted.internet.task import LoopingCall, deferLater

import farm.settings
from farm import signals
from farm.crawl.parts import CrawlParts
from farm.sites.qcwy.spider import QcwySpider
from farm.state.db import make_engine
from farm.state.store import KeywordStore
from tests.migrated import migrated


def farm_settings(**overrides):
    values = {name: getattr(farm.settings, name) for name in dir(farm.settings) if name.isupper()}
    return {**values, **overrides}


def make_crawler(db_url, rows, spidercls=QcwySpider, **settings):
    migrated(db_url)
    store = KeywordStore(make_engine(db_url))
    store.add_keywords(rows)
    store.engine.dispose()
    crawler = get_crawler(
        spidercls, farm_settings(FARM_DB_URL=db_url, FARM_QCWY_BASE_URL="http://sandbox.invalid", **settings)
    )
    crawler.spider = spidercls.from_crawler(crawler)
    crawler.get_extension(CrawlParts).start()  # as the scheduler does when a crawl opens
    return crawler


def keywords_ended(crawler, entry=lambda lease, outcome: (lease.id, outcome)):
    """What the crawl's keyword_ended signal says, one ``entry(lease, outcome)`` per keyword ended."""
    outcomes = []

    def keyword_ended(lease, outcome, spider):
        outcomes.append(entry(lease, outcome))

    crawler.signals.connect(keyword_ended, signal=signals.keyword_ended, weak=False)
    return outcomes


def component(crawler, cls):
    found = [c for c in crawler.extensions.middlewares if isinstance(c, cls)]
    assert found, f"{cls.__name__} is not enabled"
    return found[0]


async def db_barrier(crawler):
    """Wait until every database write and claim queued so far (and its callbacks) has run.

    What the outbox holds is written first (its drain: page progress, ends and claims);
    then, as the crawl's database thread is first in, first out, a no-op queued now
    finishes after everything queued before it. What either's callbacks queued in the
    other (a take-back on the thread, then a claim in the outbox) is waited for in turn.
    """
    runtime = crawler.get_extension(CrawlParts)
    while True:
        await runtime.outbox.drain()
        await runtime.run(lambda: None)
        if not runtime.outbox.queued and not runtime.outbox.in_flight:
            return


async def until(condition, timeout, what):
    """Wait until ``condition()`` holds; fail the test after ``timeout`` seconds."""
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        await deferLater(reactor, 0.02, lambda: None)


async def writer_started(crawler, timeout=30.0):
    """Wait until the crawl's state writer says it has started (a third of a second)."""
    writer = crawler.get_extension(CrawlParts).writer
    await until(lambda: writer.ready, timeout, "the state writer to start")


def keyword_row(crawler, keyword_id):
    rows = crawler.get_extension(CrawlParts).store.list_keywords()
    return next(row for row in rows if row["id"] == keyword_id)


def pending_timers() -> set[object]:
    """The reactor's pending timers: a repeating one (a LoopingCall) as itself, since each of its ticks
    schedules a new DelayedCall, so that a loop that was running before is told from one started since."""
    pending: set[object] = set()
    for call in reactor.getDelayedCalls():
        if call.active():
            pending.add(call.func if isinstance(call.func, LoopingCall) else call)
    return pending
