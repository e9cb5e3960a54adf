"""Postings into SQL: each JobPosting becomes a row, encoded once, for the outbox.

The outbox (farm.crawl.outbox) batches the rows with the page progress that depends
on them and hands both to the state writer process, which fits them to their
columns and upserts them on another core (farm.state.normalise says what runs
where). A posting that cannot be stored under its own key (no source or job_id,
or one longer than its column) is dropped with the reason, and does not hold its
page back; one that orjson cannot encode as it is (an integer beyond 64 bits, a
non-string key, nesting too deep) is encoded from a copy that it can.

Its ``from_crawler`` hands it what it uses of the crawl's parts (farm.crawl.parts.CrawlParts): the
outbox and the page progress.
"""

import logging
from typing import Self

import orjson
import scrapy
from scrapy.crawler import Crawler
from scrapy.exceptions import DropItem, NotConfigured
from scrapy.utils.defer import maybe_deferred_to_future

from farm.crawl.outbox import Outbox
from farm.crawl.parts import CrawlParts
from farm.crawl.progress import PageProgress, ReportsPostings
from farm.items import JobPosting
from farm.state.normalise import encodable, key_problem
from farm.state.posting_fields import POSTING_FIELDS

logger = logging.getLogger(__name__)


class SqlPostingsPipeline(ReportsPostings):
    def __init__(self, crawler: Crawler, outbox: Outbox, progress: PageProgress):
        self.stats = crawler.stats
        self.outbox = outbox
        self.progress = progress  # told of each posting handled: its page may then count done

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> Self:
        parts = crawler.get_extension(CrawlParts)
        if parts is None:
            raise NotConfigured("not a farm crawl: no keyword leases, progress or postings")
        return cls(crawler, parts.outbox, parts.progress)

    def process_item(self, item):
        # an Item's mapping protocol costs three times its own field dict (and isinstance
        # an ABC check: the exact class is tried first)
        if type(item) is JobPosting or isinstance(item, scrapy.Item):
            row = item._values
        else:
            row = {name: item.get(name) for name in POSTING_FIELDS}
        problem = key_problem(row)
        if problem is None:
            try:
                encoded = orjson.dumps(row)
            except orjson.JSONEncodeError:
                encoded, problem = self._encode_copy(row)
        if problem is not None:
            self.stats.inc_value("farm/sql/dropped")
            self._handled(item)
            raise DropItem(f"{problem}: {row.get('url')}")
        self.outbox.add_posting(encoded)
        self._handled(item)  # after the posting is queued: its page may now go out with it
        return item

    def _encode_copy(self, row) -> tuple[bytes | None, str | None]:
        """The row as a copy orjson encodes, or the reason it cannot be."""
        try:
            encoded = orjson.dumps(encodable(row))
        except orjson.JSONEncodeError as exc:  # encodable missed a case: drop, and say which
            return None, f"posting {row['job_id']!r} cannot be encoded as JSON: {exc}"
        self.stats.inc_value("farm/posting/normalised/encoding")
        logger.debug("farm: posting %s %s encoded from a copy", row["source"], row["job_id"])
        return encoded, None

    def _handled(self, item):
        page = getattr(item, "_farm_page", None)
        if page is not None:
            self.progress.posting_handled(*page, item=item)

    async def close_spider(self):
        await maybe_deferred_to_future(self.outbox.drain())
