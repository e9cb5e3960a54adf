"""The shared dupefilter: scrapy-redis's fingerprint set, one per day, expiring with it.

scrapy-redis's RFPDupeFilter keeps one set for ever (Redis memory grows with every
request ever made) and deletes it when any worker closes. farm's fingerprints
belong to the day (in FARM_TIMEZONE) their keyword is crawled on: the set expires
an hour after that day ends, so Redis holds at most about a day's work, and no
worker's close touches it.

A page request's fingerprint is its page's identity, ``keyword id:lease token:page``
(a few bytes, not a 40-character hash of a URL that carries a timestamp): two
workers that both learn of page 7 queue it once; a keyword claimed again (a new
token) may fetch its pages again. The push script adds fingerprints in the same
atomic step that queues the request (farm.shared.queue).
"""

from datetime import datetime, time, timedelta

from scrapy_redis.dupefilter import RFPDupeFilter

from farm.state.clock import today


class DayDupeFilter(RFPDupeFilter):
    def __init__(self, server, key, tz, clock, debug=False):
        super().__init__(server, key, debug=debug)
        self.base_key = key
        self.tz = tz
        self.clock = clock

    @property
    def key(self) -> str:  # noqa: D401 - scrapy-redis reads self.key
        return f"{self.base_key}:{today(self.clock(), self.tz).isoformat()}"

    @key.setter
    def key(self, value):  # RFPDupeFilter.__init__ assigns it
        self.base_key = value

    def ttl(self) -> int:
        """Seconds until an hour after today ends (in FARM_TIMEZONE)."""
        now = self.clock().astimezone(self.tz)
        end = datetime.combine(now.date() + timedelta(days=1), time(), tzinfo=self.tz) + timedelta(hours=1)
        return max(60, int((end - now).total_seconds()))

    def request_fingerprint(self, request) -> str:
        lease = request.meta.get("farm_lease")
        if lease is None:
            return super().request_fingerprint(request)
        return f"{lease.id}:{lease.lease_token}:{request.meta['farm_page']}"

    def request_seen(self, request) -> bool:
        key = self.key
        added = self.server.sadd(key, self.request_fingerprint(request))
        self.server.expire(key, self.ttl(), nx=True)
        return added == 0

    def close(self, reason=""):
        """Shared by every worker: a worker's close keeps it (it expires with its day)."""

    def clear(self):
        raise RuntimeError("the shared dupefilter is never cleared by a worker: it expires with its day")
