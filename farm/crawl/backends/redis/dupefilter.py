"""The shared dupefilter: scrapy-redis's fingerprint set, one per lease, expiring after it.

scrapy-redis's RFPDupeFilter keeps one set for ever (Redis memory grows with every
request ever made) and deletes it when any worker closes. farm's page fingerprints
belong to their keyword's lease (``seen:<keyword id>:<lease token>``): the set
expires a day after the lease's last page was queued, so Redis holds about a day's
work, no worker's close touches it, and midnight changes nothing for a keyword in
flight. A request without a keyword goes through the day's set (in FARM_TIMEZONE,
``seen:<day>``), which expires an hour after its day ends.

A page request's fingerprint is its page number (a few bytes, not a 40-character
hash of a URL that carries a timestamp): two workers that both learn of page 7
queue it once; a keyword claimed again (a new token, a new set) may fetch its
pages again. The push script adds fingerprints in the same atomic step that
queues the request (farm.crawl.backends.redis.queue).
"""

from collections.abc import Callable
from datetime import datetime, timedelta
from typing import TYPE_CHECKING
from zoneinfo import ZoneInfo

from scrapy import Request
from scrapy_redis.dupefilter import RFPDupeFilter

from farm.crawl.meta import FarmMeta
from farm.state.clock import day_span, today

if TYPE_CHECKING:  # not at run time: the link imports the reactor
    from farm.crawl.backends.redis.link import BytesRedis

LEASE_SECONDS = 24 * 3600  # a lease's fingerprints, and its end, are kept this long after they are written


class DayDupeFilter(RFPDupeFilter):  # type: ignore[misc]  # scrapy-redis ships no types: its classes are Any
    def __init__(
        self, server: "BytesRedis", key: str, tz: ZoneInfo, clock: Callable[[], datetime], debug: bool = False
    ) -> None:
        super().__init__(server, key, debug=debug)
        self.base_key = key
        self.tz = tz
        self.clock = clock

    @property
    def key(self) -> str:
        return f"{self.base_key}:{today(self.clock(), self.tz).isoformat()}"

    @key.setter
    def key(self, value: str) -> None:  # RFPDupeFilter.__init__ assigns it
        self.base_key = value

    def ttl(self) -> int:
        """Seconds until an hour after today ends (in FARM_TIMEZONE)."""
        now = self.clock().astimezone(self.tz)
        end = day_span(now.date(), self.tz).end + timedelta(hours=1)
        return max(60, int((end - now).total_seconds()))

    def lease_key(self, lease_name: str) -> str:
        """The set of a lease's page fingerprints."""
        return f"{self.base_key}:{lease_name}"

    def request_fingerprint(self, request: Request) -> str:
        farm = FarmMeta.of(request)
        if farm.lease is None:
            fingerprint: str = super().request_fingerprint(request)
            return fingerprint
        return str(farm.page)

    def request_seen(self, request: Request) -> bool:
        lease = FarmMeta.of(request).lease
        key, ttl = (self.key, self.ttl()) if lease is None else (self.lease_key(lease.name), LEASE_SECONDS)
        added: int = self.server.sadd(key, self.request_fingerprint(request))
        if lease is None:
            self.server.expire(key, ttl, nx=True)
        else:
            self.server.expire(key, ttl)
        return added == 0

    def close(self, reason: str = "") -> None:
        """Shared by every worker: a worker's close keeps it (it expires with its day)."""

    def clear(self) -> None:
        raise RuntimeError("the shared dupefilter is never cleared by a worker: it expires with its day")
