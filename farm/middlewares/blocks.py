"""Site blocks: recognise them, slow the site down, retry, and give up as partial.

Each site spider says what a block looks like (``block_reason``): Boss's JSON
codes, 51job's WAF pages, Zhilian's verification and login walls, HTTP
403/429/503. A blocked page is retried up to FARM_BLOCK_RETRIES times while
the site's download slot backs off exponentially (honouring Retry-After);
good responses ease the delay back. A page still blocked after that raises
KeywordBlocked, which the spider turns into a ``partial`` keyword: a block is
not the keyword's fault.
"""

import logging

from scrapy.downloadermiddlewares.retry import get_retry_request

from farm.runtime import FarmRuntime
from farm.spiders.base import KeywordBlocked

logger = logging.getLogger(__name__)


class SiteBlockMiddleware:
    def __init__(self, crawler, retries: int, base_delay: float, max_delay: float):
        self.crawler = crawler
        self.retries = retries
        self.base_delay = base_delay
        self.max_delay = max_delay
        self.normal_delay = crawler.settings.getfloat("DOWNLOAD_DELAY")
        # transient server errors are Scrapy's RetryMiddleware's, then the keyword's: not blocks
        self.error_statuses = {int(code) for code in crawler.settings.getlist("RETRY_HTTP_CODES")} | {404}
        self.stats = crawler.stats

    @classmethod
    def from_crawler(cls, crawler):
        FarmRuntime.of(crawler)  # NotConfigured for a spider not of farm's
        settings = crawler.settings
        retries = settings.getint("FARM_BLOCK_RETRIES")
        base_delay = settings.getfloat("FARM_BLOCK_BASE_DELAY")
        max_delay = settings.getfloat("FARM_BLOCK_MAX_DELAY")
        if retries < 0 or base_delay < 0 or max_delay < base_delay:
            raise ValueError(
                "FARM_BLOCK_RETRIES must be >= 0 and 0 <= FARM_BLOCK_BASE_DELAY <= FARM_BLOCK_MAX_DELAY"
            )
        return cls(crawler, retries, base_delay, max_delay)

    def process_response(self, request, response):
        if "farm_lease" not in request.meta or response.status in self.error_statuses:
            return response
        spider = self.crawler.spider
        reason = spider.block_reason(response)
        slot = self._slot(request)
        if reason is None:
            if slot is not None and slot.delay > self.normal_delay:
                slot.delay = max(self.normal_delay, slot.delay / 2)
            return response
        self.stats.inc_value("farm/block/count")
        self.stats.inc_value(f"farm/block/{reason.split()[0]}")
        if slot is not None:
            slot.delay = self._backoff(slot.delay, response)
        retry = get_retry_request(
            request,
            spider=spider,
            reason=f"farm_block/{reason.split()[0]}",
            max_retry_times=self.retries,
            stats_base_key="farm/block/retry",
        )
        if retry is not None:
            return retry
        self.stats.inc_value("farm/block/gave_up")
        raise KeywordBlocked(f"{reason} at {request.url} (still blocked after {self.retries} retries)")

    def _backoff(self, delay, response):
        delay = min(self.max_delay, max(self.base_delay, delay * 2))
        retry_after = response.headers.get(b"Retry-After")
        if retry_after and retry_after.strip().isdigit():
            delay = max(delay, min(self.max_delay, float(retry_after)))
        return delay

    def _slot(self, request):
        downloader = self.crawler.engine.downloader
        return downloader.slots.get(downloader.get_slot_key(request))
