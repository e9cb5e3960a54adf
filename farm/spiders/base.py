"""What the three site spiders share: lease-driven paging.

A site spider subclasses :class:`LeaseSpider` and gives only what differs:

- ``name`` (== the module name == the ``source`` in the keyword table);
- ``page_size``, ``city_codes`` (city name -> site code) and ``code_pattern``
  (what a site code looks like, so that a code passes through as is);
- ``paging``: ``"parallel"`` when a response tells the total (all remaining
  pages are requested at once) or ``"sequential"`` when it only says whether
  another page follows;
- ``search_request(city_code, job, page)``: the site's search request, exactly
  as CONTRACTS.md gives it (no callback: the base adds it);
- ``parse_page(response)``: a :class:`Page`, or :class:`ParseError`;
- ``block_reason(response)``: why the response is a block, or None
  (call ``super()`` to keep the HTTP 403/429/503 rule).

The base never touches the database. It is handed leases by the lease
middleware (``lease_requests``), and reports what happened through farm's
signals; the progress extension writes it.
"""

import math
import re
from dataclasses import dataclass, field

import scrapy
from scrapy.exceptions import IgnoreRequest, NotConfigured
from scrapy.spidermiddlewares.httperror import HttpError

from farm import signals
from farm.items import JobPosting
from farm.state.lease import Lease

BLOCK_STATUSES = {403: "http_403", 429: "http_429", 503: "http_503"}


class ParseError(ValueError):
    """A response that is neither a page of results nor a recognised block."""


class UnknownCity(ValueError):
    pass


class KeywordBlocked(IgnoreRequest):
    """The site still blocked a page after FARM_BLOCK_RETRIES retries."""


class LeaseLost(IgnoreRequest):
    """The request belongs to a lease this process no longer holds."""


@dataclass
class Page:
    postings: list[JobPosting] = field(default_factory=list)
    total_count: int | None = None  # postings the site says the keyword has (parallel sites)
    total_pages: int | None = None  # pages the site says the keyword has (overrides total_count)
    has_more: bool | None = None  # whether another page follows (sequential sites)


class LeaseSpider(scrapy.Spider):
    page_size: int
    city_codes: dict[str, str]
    code_pattern: re.Pattern
    paging: str = "parallel"
    site: str | None = None  # whose FARM_<SITE>_* settings apply, when not the spider's name

    @classmethod
    def from_crawler(cls, crawler, *args, **kwargs):
        spider = super().from_crawler(crawler, *args, **kwargs)
        prefix = f"FARM_{(cls.site or cls.name).upper()}"
        base_url = crawler.settings.get(f"{prefix}_BASE_URL")
        if not base_url:
            raise NotConfigured(f"{prefix}_BASE_URL is empty: set it to the site or the sandbox")
        spider.base_url = base_url.rstrip("/")
        spider.max_pages = crawler.settings.getint(f"{prefix}_MAX_PAGES")
        # One bound method for every page request: Scrapy caches its per-callback
        # source inspection weakly, and a fresh bound method each time re-parses it.
        spider._page_callback, spider._page_errback = spider.parse_search, spider.page_error
        if spider.max_pages < 1:
            raise ValueError(f"{prefix}_MAX_PAGES must be at least 1, got {spider.max_pages}")
        return spider

    async def start(self):
        # Keywords arrive from the lease middleware (farm.middlewares.lease),
        # which claims them when the crawl opens and whenever a slot frees up.
        return
        yield

    # --- what the site spiders give --------------------------------------

    def search_request(self, city_code: str, job: str, page: int) -> scrapy.Request:
        raise NotImplementedError

    def parse_page(self, response) -> Page:
        raise NotImplementedError

    def block_reason(self, response) -> str | None:
        return BLOCK_STATUSES.get(response.status)

    # --- shared ----------------------------------------------------------

    def city_code(self, city: str) -> str:
        city = city.strip()
        if self.code_pattern.fullmatch(city):
            return city
        try:
            return self.city_codes[city]
        except KeyError:
            raise UnknownCity(
                f"unknown city {city!r} for {self.name}: use one of "
                f"{', '.join(self.city_codes)} or a {self.name} city code"
            ) from None

    def lease_requests(self, lease: Lease) -> list[scrapy.Request]:
        """The first requests of a newly claimed keyword."""
        try:
            self.city_code(lease.city)
        except UnknownCity as exc:
            self._send(signals.keyword_failed, lease=lease, reason=str(exc))
            return []
        if lease.total_pages is None:
            if lease.start_page > self.max_pages:  # resumed past a lowered FARM_*_MAX_PAGES
                self._send(signals.keyword_exhausted, lease=lease)
                return []
            return [self.page_request(lease, lease.start_page)]
        pages = lease.pages_to_fetch(lease.total_pages)
        if not pages:
            self._send(signals.keyword_exhausted, lease=lease)
            return []
        if self.paging == "sequential":
            pages = pages[:1]
        return [self.page_request(lease, page) for page in pages]

    def page_request(self, lease: Lease, page: int) -> scrapy.Request:
        request = self.search_request(self.city_code(lease.city), lease.job, page)
        return request.replace(
            callback=self._page_callback,
            errback=self._page_errback,
            # the keyword table, not the dupefilter, says what is done:
            # a retried keyword must be able to fetch its pages again
            dont_filter=True,
            meta={**request.meta, "farm_lease": lease, "farm_page": page},
        )

    def postings_from(self, entries, build, id_field: str, response) -> list[JobPosting]:
        """``build(entry)`` for each of the site's entries that has an id; the others are
        skipped, counted (``farm/page/posting_without_id``) and logged."""
        postings = [build(entry) for entry in entries if isinstance(entry, dict) and entry.get(id_field)]
        skipped = len(entries) - len(postings)
        if skipped:
            self.crawler.stats.inc_value("farm/page/posting_without_id", skipped)
            self.logger.warning("%s: %d entries without %s skipped at %s", self.name, skipped, id_field, response.url)
        return postings

    def last_page(self, page: Page, page_no: int) -> int | None:
        """The keyword's last page, capped, when the response tells it."""
        if page.total_pages is not None:
            return max(1, min(page.total_pages, self.max_pages))
        if page.total_count is not None:
            return max(1, min(math.ceil(page.total_count / self.page_size), self.max_pages))
        if not page.has_more or not page.postings or page_no >= self.max_pages:
            return page_no
        return None

    def follow_up_pages(self, lease: Lease, page_no: int, page: Page) -> tuple[int | None, list[int]]:
        """(the keyword's last page if known, the pages to request next)."""
        if self.paging == "sequential":
            last = self.last_page(page, page_no)
            return last, ([] if last is not None else [page_no + 1])
        last = lease.total_pages or self.last_page(page, page_no)
        if last is None:  # this response told no total: go on one page at a time
            return None, [page_no + 1]
        if lease.total_pages is None and page_no == lease.start_page:
            # the first page of a keyword whose total was unknown: request the rest at once
            return last, [p for p in lease.pages_to_fetch(last) if p != page_no]
        return last, []

    def parse_search(self, response):
        lease: Lease = response.meta["farm_lease"]
        page_no: int = response.meta["farm_page"]
        try:
            page = self.parse_page(response)
        except ParseError as exc:
            self.crawler.stats.inc_value("farm/page/unparsable")
            self._send(signals.keyword_failed, lease=lease, reason=f"{exc} at {response.url}")
            return
        last, next_pages = self.follow_up_pages(lease, page_no, page)
        for posting in page.postings:
            posting["source"] = self.name
            posting["keyword_id"] = lease.id
            posting._farm_page = (lease, page_no)
            yield posting
        self.crawler.stats.inc_value("farm/page/parsed")
        self._send(
            signals.page_parsed, lease=lease, page=page_no, postings=len(page.postings), last_page=last
        )
        for next_page in next_pages:
            yield self.page_request(lease, next_page)

    def page_error(self, failure):
        request = failure.request
        lease: Lease = request.meta["farm_lease"]
        if failure.check(LeaseLost):
            return
        if failure.check(KeywordBlocked):
            self._send(signals.keyword_blocked, lease=lease, reason=str(failure.value))
            return
        if failure.check(HttpError):
            reason = f"HTTP {failure.value.response.status} at {request.url}"
        else:
            reason = f"{failure.type.__name__}: {failure.getErrorMessage()} at {request.url}"
        self.crawler.stats.inc_value("farm/page/error")
        self._send(signals.keyword_failed, lease=lease, reason=reason)

    def _send(self, signal, **kwargs):
        self.crawler.signals.send_catch_log(signal, spider=self, **kwargs)
