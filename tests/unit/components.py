"""Building farm's components without a crawl: a crawler on farm's settings and a SQLite file."""

from scrapy.utils.test import get_crawler

import farm.settings
from farm.runtime import FarmRuntime
from farm.spiders.qcwy import QcwySpider
from farm.state.db import make_engine
from farm.state.migrate import upgrade
from farm.state.store import KeywordStore


def farm_settings(**overrides):
    values = {name: getattr(farm.settings, name) for name in dir(farm.settings) if name.isupper()}
    return {**values, **overrides}


def make_crawler(db_url, rows, spidercls=QcwySpider, **settings):
    upgrade(db_url)
    store = KeywordStore(make_engine(db_url))
    store.add_keywords(rows)
    store.engine.dispose()
    crawler = get_crawler(
        spidercls, farm_settings(FARM_DB_URL=db_url, FARM_QCWY_BASE_URL="http://sandbox.invalid", **settings)
    )
    crawler.spider = spidercls.from_crawler(crawler)
    FarmRuntime.of(crawler).start()  # as the scheduler does when a crawl opens
    return crawler


def component(crawler, cls):
    found = [c for c in crawler.extensions.middlewares if isinstance(c, cls)]
    assert found, f"{cls.__name__} is not enabled"
    return found[0]


async def db_barrier(crawler):
    """Wait until every database write queued so far (and its callbacks) has run.

    Ready page progress is written first (the outbox's drain); then, as the
    crawl's database thread is first in, first out, a no-op queued now finishes
    after everything queued before it.
    """
    runtime = FarmRuntime.of(crawler)
    await runtime.outbox.drain()
    await runtime.run(lambda: None)


def keyword_row(crawler, keyword_id):
    rows = FarmRuntime.of(crawler).store.list_keywords()
    return next(row for row in rows if row["id"] == keyword_id)
