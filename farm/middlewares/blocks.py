"""Site blocks and site trouble: recognise them, slow the site down, retry, give up without blame.

Each site spider says what a refusal looks like (``refusal``): a block (``block_reason``:
Boss's JSON codes, 51job's WAF pages, Zhilian's verification and login walls, HTTP
403/429/503), a wall the browser could not pass (farm.sessions names it, a slider
most often), or an answer the spider does not understand (one that does not parse, an
empty page while its count says more remain): farm fails closed, it never takes an
answer it does not understand for the end of a keyword. Each is counted by its shape
(``farm/block/<shape>``). Site trouble is a refused, reset or dropped connection, a timeout,
a DNS failure (Scrapy's RETRY_EXCEPTIONS), or a server error (RETRY_HTTP_CODES).

Either way the page is retried up to FARM_BLOCK_RETRIES times. A refusal is the identity's that
drew it (farm.crawl.identities: the proxy, or this machine's own address): that identity's pace backs
off exponentially, honouring Retry-After, its learned pace drops, and a proxy is quarantined, so the
retry goes through another; the other identities keep their pace. Site trouble backs off the site's
own pace (farm.crawl.pace) for every identity. Good answers ease both back. None of that spends the
keyword's own retries:

- a page still blocked ends its keyword ``blocked`` (partial, counted against
  FARM_MAX_BLOCKED_CLAIMS for the day);
- a page the site still cannot serve ends its keyword ``released`` (partial):
  an outage is the site's trouble. A server error only the one keyword meets
  (no other keyword met one in the last minute) is the keyword's: it fails,
  and is retried after FARM_RETRY_DELAY.

A page whose keyword has ended meanwhile is not retried. When a site has answered
nothing but refusals for FARM_SITE_REFUSED_AFTER seconds (farm.middlewares.refusals), from every
identity (one identity's page is an answer: the site does not refuse the crawl), the crawl
concludes the site refuses it and closes (``farm_site_refused``), its keywords partial.

With proxies (FARM_PROXIES), a connection to the proxy that fails (refused, timed out, its name
unknown) is the proxy's: through an HTTP proxy the site's own connection failures come back as the
proxy's 502/504 answers, so
a connect error names the proxy itself, a dead one that would otherwise take
every n-th request and pass for the site's trouble: it is quarantined, and its page is retried
through another proxy without slowing the site. A timeout or a connection lost once
connected may be the site's as well as the proxy's: site trouble, as without.

Its ``from_crawler`` hands it what it uses of the crawl's parts (farm.crawl.parts.CrawlParts): the
site's pace, the identities, the keyword registry (is a page's keyword still live?) and the way to close
the crawl.
"""

import logging
import time
from collections import deque
from collections.abc import Callable
from email.utils import parsedate_to_datetime
from typing import Self, cast

from curl_cffi.requests.exceptions import ConnectionError as CurlConnectionError
from curl_cffi.requests.exceptions import ProxyError as CurlProxyError
from curl_cffi.requests.exceptions import SSLError as CurlSSLError
from scrapy.crawler import Crawler
from scrapy.downloadermiddlewares.retry import get_retry_request
from scrapy.exceptions import CannotResolveHostError, DownloadConnectionRefusedError, NotConfigured
from scrapy.utils.misc import load_object
from twisted.internet.error import ConnectError

from farm.config import FarmConfig
from farm.crawl.identities import Identities
from farm.crawl.meta import FarmMeta
from farm.crawl.pace import SitePace
from farm.crawl.paging import KeywordBlocked, LeaseLost, SiteUnavailable
from farm.crawl.parts import CrawlParts
from farm.crawl.registry import KeywordRegistry
from farm.middlewares.refusals import RefusalWatch
from farm.spiders.base import BLOCK_STATUSES, LeaseSpider

logger = logging.getLogger(__name__)

# Failures to connect at all: through a proxy, the connection is to the proxy (refused, its host name
# unknown; Twisted's ConnectError for a TCP timeout or no route; curl_cffi's connection and proxy errors
# for requests sent with a browser's fingerprint, but its TLS errors, which may be the site's). Not
# DownloadTimeoutError: the download timeout runs for the whole exchange, the site's answer included.
PROXY_FAILURES = (
    DownloadConnectionRefusedError,
    CannotResolveHostError,
    ConnectError,
    CurlConnectionError,
    CurlProxyError,
)
# Seconds over which server errors of several keywords make a site's trouble, and how many others.
TROUBLE_WINDOW = 60.0
TROUBLE_KEYWORDS = 2


class SiteBlockMiddleware:
    def __init__(
        self,
        crawler: Crawler,
        retries: int,
        server_errors: set[int],
        transport_errors: tuple[type[BaseException], ...],
        refused_after: float = 0.0,
        *,
        pace: SitePace,
        identities: Identities,
        registry: KeywordRegistry,
        close_crawl: Callable[[str], None],
    ):
        self.crawler = crawler
        self.pace = pace  # the site's own: its trouble backs it off
        self.identities = identities  # each proxy (or this machine's address): its refusals back it off
        self.registry = registry  # whether a page's keyword is still live, and the one way to give its page up
        self.close_crawl = close_crawl
        self.retries = retries
        self.server_errors = server_errors
        self.transport_errors = transport_errors
        self.stats = crawler.stats
        self.trouble: deque[tuple[float, int]] = deque()  # (when, keyword id) of recent site errors
        self.watch = RefusalWatch(refused_after)
        self.concluded = False

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> Self:
        parts = crawler.get_extension(CrawlParts)
        if parts is None:
            raise NotConfigured("not a farm crawl: no keyword leases")
        settings = crawler.settings
        config = FarmConfig.of(crawler)  # FARM_BLOCK_BASE_DELAY <= FARM_BLOCK_MAX_DELAY, checked there
        server_errors = {int(code) for code in settings.getlist("RETRY_HTTP_CODES")} - set(BLOCK_STATUSES)
        transport_errors = tuple(
            error if isinstance(error, type) else load_object(error) for error in settings.getlist("RETRY_EXCEPTIONS")
        )
        return cls(
            crawler,
            config.block_retries,
            server_errors,
            transport_errors,
            config.site_refused_after,
            pace=parts.pace,
            identities=parts.identities,
            registry=parts.registry,
            close_crawl=parts.close_crawl,
        )

    @property
    def spider(self) -> LeaseSpider:
        """The crawl's spider: a LeaseSpider, as the parts serve no other (CrawlParts.serves)."""
        return cast(LeaseSpider, self.crawler.spider)

    def process_response(self, request, response):
        if FarmMeta.of(request).lease is None:
            return response
        if response.status in self.server_errors:
            return self._site_trouble(request, f"HTTP {response.status}", response)
        reason = self.spider.refusal(response)
        if reason is None:
            self.watch.page()
            self.pace.eased()
            self.identities.answered(request)
            return response
        wall = FarmMeta.of(request).wall_refused  # the browser met it and could not pass it (on this page)
        if wall is not None:
            reason = f"{wall} ({reason})"
        kind = reason.split()[0]
        self.stats.inc_value("farm/block/count")
        self.stats.inc_value(f"farm/block/{kind}")
        self.identities.refused(request, f"{reason} at {request.url}", self._retry_after(response))
        if self.watch.refused(kind, time.monotonic()):
            self._site_refused()
        retry = self._retry(request, f"farm_block/{kind}", "farm/block/retry")
        if retry is not None:
            return retry
        self.stats.inc_value("farm/block/gave_up")
        raise KeywordBlocked(f"{reason} at {request.url} (still blocked after {self.retries} retries)")

    def process_exception(self, request, exception):
        if FarmMeta.of(request).lease is None or not isinstance(exception, self.transport_errors):
            return None
        what = f"{type(exception).__name__}: {exception}"
        if isinstance(exception, PROXY_FAILURES) and not isinstance(exception, CurlSSLError):
            if self.identities.unreachable(request, f"cannot be reached ({what})"):
                return self._proxy_failed(request, what)
        return self._site_trouble(request, what)

    def _proxy_failed(self, request, what):
        """The proxy, not the site, failed: retried through another proxy, the site's pace untouched."""
        self.stats.inc_value("farm/proxy/unreachable")
        retry = self._retry(request, "farm_proxy/unreachable", "farm/proxy/retry")
        if retry is not None:
            return retry
        self.stats.inc_value("farm/site/gave_up")
        raise SiteUnavailable(f"{what} at {request.url} (no proxy reached after {self.retries} retries)")

    def _site_trouble(self, request, what, response=None):
        """A server error (``response``) or a transport error: the site's trouble, unless one keyword alone meets it."""
        lease, _ = FarmMeta.of(request).lease_page()
        now = time.monotonic()
        self.trouble.append((now, lease.id))
        while self.trouble and self.trouble[0][0] < now - TROUBLE_WINDOW:
            self.trouble.popleft()
        self.stats.inc_value("farm/site/errors")
        self.pace.back_off(self._retry_after(response) if response is not None else None)
        retry = self._retry(request, f"farm_site/{what.split(':')[0].replace(' ', '_')}", "farm/site/retry")
        if retry is not None:
            return retry
        others = {keyword for _, keyword in self.trouble if keyword != lease.id}
        if response is not None and len(others) < TROUBLE_KEYWORDS:
            return response  # the keyword's own trouble: HttpError fails it
        self.stats.inc_value("farm/site/gave_up")
        raise SiteUnavailable(f"{what} at {request.url} (still failing after {self.retries} retries)")

    def _site_refused(self) -> None:
        if self.concluded:
            return
        self.concluded = True
        self.stats.set_value("farm/site/refused", self.watch.summary())
        logger.error(
            "farm %s: the site refused every answer for %.0f s (%s): it refuses this crawl; the crawl ends, its "
            "keywords left partial for a later run",
            self.spider.name,
            self.watch.after,
            self.watch.summary(),
        )
        self.close_crawl("farm_site_refused")

    def _retry_after(self, response) -> float | None:
        """Retry-After, in seconds or as an HTTP date, at most FARM_BLOCK_MAX_DELAY (the pace caps it)."""
        seconds = retry_after(response)
        if seconds is not None:
            self.stats.inc_value("farm/retry_after/honoured")
        return seconds

    def _retry(self, request, reason, stats_key):
        lease, page = FarmMeta.of(request).lease_page()
        run = self.registry.runs.get(lease.key)
        if run is None or not run.live:
            # its keyword ended meanwhile: nothing to retry it for
            self.registry.give_up(lease, page)
            raise LeaseLost(f"keyword {lease.id} ended while its page was retried")
        return get_retry_request(
            request,
            spider=self.spider,
            reason=reason,
            max_retry_times=self.retries,
            stats_base_key=stats_key,
            give_up_log_level="WARNING",
        )


def retry_after(response, now: float | None = None) -> float | None:
    """The seconds a response's Retry-After asks for (a number, or an HTTP date); None without one."""
    value = response.headers.get(b"Retry-After") if response is not None else None
    if not value:
        return None
    text = value.decode("latin-1").strip()
    if text.isdigit():
        return float(text)
    try:
        when = parsedate_to_datetime(text)
    except (TypeError, ValueError, IndexError):
        return None
    if when.tzinfo is None:  # an HTTP date is GMT
        return None
    return max(0.0, when.timestamp() - (time.time() if now is None else now))
