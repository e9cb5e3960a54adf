"""Postings into SQL: each JobPosting becomes a row, encoded once, for the outbox.

The outbox (farm.outbox) batches the rows with the page progress that depends
on them and hands both to the state writer process, which upserts them on
another core. A posting that cannot be stored (no source or job_id, a
published_at that is not a datetime) is dropped with the reason, and does not
hold its page back.
"""

from datetime import datetime

import orjson
import scrapy
from scrapy.exceptions import DropItem
from scrapy.utils.defer import maybe_deferred_to_future

from farm.runtime import FarmRuntime
from farm.state.postings import FIELDS

REQUIRED = ("source", "job_id")


class SqlPostingsPipeline:
    def __init__(self, crawler, runtime: FarmRuntime):
        self.stats = crawler.stats
        self.runtime = runtime
        self.outbox = runtime.outbox
        runtime.postings = self

    @classmethod
    def from_crawler(cls, crawler):
        return cls(crawler, FarmRuntime.of(crawler))

    def process_item(self, item):
        # an Item's mapping protocol costs three times its own field dict
        row = item._values if isinstance(item, scrapy.Item) else {name: item.get(name) for name in FIELDS}
        problem = _problem(row)
        if problem:
            self.stats.inc_value("farm/sql/dropped")
            self._handled(item)
            raise DropItem(f"{problem}: {row.get('url')}")
        self.outbox.add_posting(orjson.dumps(row))
        self._handled(item)  # after the posting is queued: its page may now go out with it
        return item

    def _handled(self, item):
        page = getattr(item, "_farm_page", None)
        if page is not None and self.runtime.progress is not None:
            self.runtime.progress.posting_handled(*page, item=item)

    async def close_spider(self):
        await maybe_deferred_to_future(self.outbox.drain())


def _problem(row) -> str | None:
    """Why a posting cannot be stored, or None."""
    missing = [name for name in REQUIRED if not row.get(name)]
    if missing:
        return f"posting without {', '.join(missing)}"
    published = row.get("published_at")
    if published is not None and not isinstance(published, datetime):
        return f"posting {row['job_id']!r} has published_at {published!r}, not a datetime"
    return None
