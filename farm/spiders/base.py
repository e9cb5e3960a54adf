"""What the three site spiders share: lease-driven paging.

A site spider subclasses :class:`LeaseSpider` and gives only what differs:

- ``name`` (== the module name == the ``source`` in the keyword table);
- ``page_size``, ``city_codes`` (city name -> site code) and ``code_pattern``
  (what a site code looks like, so that a code passes through as is);
- ``paging``: ``"parallel"`` when a response tells the total (all pages up to
  it are requested at once, and more when a later page tells a larger total)
  or ``"sequential"`` when it only says whether another page follows;
- ``search_request(city_code, job, page)``: the site's search request, exactly
  as docs/sites.md gives it (no callback: the base adds it);
- ``parse_page(response)``: a :class:`Page`, or :class:`ParseError`;
- ``block_reason(response)``: why the response is a block, or None
  (call ``super()`` to keep the HTTP 403/429/503 rule);
- ``browser_wall(response)``: the wall a browser can pass that the response is
  (farm.sessions.wall.Wall: the page to open, the cookies it grants), or None;
- ``refusals``: its block kinds no browser changes (a limit, a block page, a captcha, a
  login), never tried as walls it does not name (``unknown_wall``, farm.sessions.wall).

An answer is a page only when farm understands it (``refusal``): not a block, parsed
without error, and not empty while its own count says more remain. Anything else is a
refusal, retried with the site's back-off (farm.middlewares.blocks): farm fails closed,
and never ends a keyword short on an answer it does not understand. The page is parsed
once, there, and the callback reuses it.

The base knows no lease's life: which pages a keyword asks for, and when it ends, is the crawl's
(farm.crawl.paging.KeywordPaging), and the base's page callback and errback (``parse_search``,
``page_error``) hand each answer and each failure to it. It finds the paging through Scrapy
(``crawler.get_extension(PagingParts)``), the first time it uses it.
"""

import logging
import math
import re
from dataclasses import dataclass, field
from functools import cached_property
from weakref import WeakKeyDictionary

import scrapy

from farm.config import FarmConfig
from farm.crawl.meta import FarmMeta
from farm.crawl.paging import KeywordPaging, PagingParts
from farm.errors import ParseError, SettingError, UnknownCity
from farm.items import JobPosting
from farm.sessions.wall import Wall, captcha_in, in_wall_shape, looks_html, text_of, unknown_wall
from farm.state.lease import Lease

logger = logging.getLogger(__name__)

BLOCK_STATUSES = {403: "http_403", 429: "http_429", 503: "http_503"}


@dataclass
class Page:
    postings: list[JobPosting] = field(default_factory=list)
    total_count: int | None = None  # postings the site says the keyword has (parallel sites)
    total_pages: int | None = None  # pages the site says the keyword has (overrides total_count)
    has_more: bool | None = None  # whether another page follows (sequential sites)
    # postings the site says the keyword holds, past any cap: stored and shown against what the cap
    # let farm take (keyword.site_total), never paged by (Boss's resCount counts what it never serves)
    site_total: int | None = None


# Each response's page, or its ParseError: the refusal check parses it, the callback reuses it.
_pages: "WeakKeyDictionary[scrapy.http.Response, Page | ParseError]" = WeakKeyDictionary()


class LeaseSpider(scrapy.Spider):
    page_size: int
    city_codes: dict[str, str]
    code_pattern: re.Pattern
    paging: str = "parallel"
    max_pages: int  # FARM_<SITE>_MAX_PAGES, set by from_crawler
    # The most pages the site itself serves a search (None: not known): an empty page past them is the end,
    # whatever the count says (51job's totalCount runs past its 50 pages)
    site_pages: int | None = None
    site: str | None = None  # whose FARM_<SITE>_* settings apply, when not the spider's name
    refusals: frozenset[str] = frozenset({"http_429"})  # block kinds no browser changes (see the docstring)
    # block kinds that say only "not understood" (HTML where JSON was due…): named a captcha when one shows
    unrecognised: frozenset[str] = frozenset()

    @classmethod
    def from_crawler(cls, crawler, *args, **kwargs):
        spider = super().from_crawler(crawler, *args, **kwargs)
        try:
            site = FarmConfig.of(crawler).site(cls.site or cls.name)  # FARM_<SITE>_*, checked
            if not site.base_url:
                raise SettingError(
                    f"{site.key('base_url')} is not set: set it to the site's address (or the sandbox's)"
                )
        except SettingError as exc:
            logger.error("farm: %s", exc)  # its one line: `scrapy crawl` takes the error quietly
            raise
        spider.base_url = site.base_url.rstrip("/")
        spider.max_pages = site.max_pages
        # One bound method for every page request: Scrapy caches its per-callback
        # source inspection weakly, and a fresh bound method each time re-parses it.
        spider._page_callback, spider._page_errback = spider.parse_search, spider.page_error
        return spider

    @cached_property
    def crawl_paging(self) -> KeywordPaging:
        """The crawl's paging (farm.crawl.paging): the pages each keyword asks for, and its end."""
        parts = self.crawler.get_extension(PagingParts)
        if parts is None:
            # an AttributeError, as a missing attribute is: inspect.getmembers (Request.to_dict, for
            # Scrapy's disk queues and scrapy-redis) passes over it and stops at anything else
            raise AttributeError("farm.crawl.parts.CrawlParts is not in EXTENSIONS: enable farm with its add-on")
        return parts.paging

    async def start(self):
        # Keywords arrive from the lease middleware (farm.crawl.leases),
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

    def browser_wall(self, response) -> Wall | None:
        return None

    def wall_of(self, response) -> Wall | None:
        """The wall ``response`` is: the spider's own (``browser_wall``, its fast path), else one no spider
        names (``unknown_wall``), else None."""
        return self.browser_wall(response) or self.unknown_wall(response)

    def unknown_wall(self, response) -> Wall | None:
        """A wall in a shape the spider does not name, to try in the browser where it was met: not a page
        farm understands, not one of ``refusals``, an HTML page with scripts or a redirect away from the data."""
        text = text_of(response)
        if not in_wall_shape(response, text):
            return None
        if response.status in (301, 302, 303, 307, 308):
            reason = self.block_reason(response)
        else:
            reason = self.refusal(response)
            if reason is None:
                return None
        if reason is not None and reason.split()[0] in self.refusals:
            return None
        return unknown_wall(self.site or self.name, response, text)

    # --- what farm understands -------------------------------------------

    def refusal(self, response) -> str | None:
        """Why ``response`` is not a page farm understands, its shape first; None for a page."""
        reason = self.block_reason(response)
        if reason is not None:
            return self._captcha_named(reason, response) if reason.split()[0] in self.unrecognised else reason
        try:
            page = self.page_of(response)
        except ParseError as exc:
            return self._captcha_named(f"{self.name}_unrecognised {exc}", response)
        page_no = FarmMeta.of(response.request).page if response.request is not None else 1
        if not page.postings and self.more_promised(page, page_no):
            return f"{self.name}_empty_page page {page_no} empty while {self.promise(page)}"
        return None

    def _captcha_named(self, reason: str, response) -> str:
        """``reason``, named a captcha when the answer is an HTML page with one that the spider did not name."""
        if response.status != 200:
            return reason
        text = text_of(response)
        marker = captcha_in(text) if looks_html(response, text) else None
        return f"{self.name}_captcha ({marker}) {reason}" if marker is not None else reason

    def page_of(self, response) -> Page:
        """``parse_page(response)``, parsed once per response (ParseError raised each time)."""
        try:
            parsed = _pages[response]
        except KeyError:
            try:
                parsed = self.parse_page(response)
            except ParseError as exc:
                parsed = exc
            _pages[response] = parsed
        if isinstance(parsed, ParseError):
            raise parsed
        return parsed

    def more_promised(self, page: Page, page_no: int) -> bool:
        """Whether an answer says more postings remain at or after ``page_no`` (of its own count)."""
        if self.site_pages is not None and page_no > self.site_pages:
            return False
        if page.total_pages is not None:
            return page_no <= page.total_pages
        if page.total_count is not None:
            return (page_no - 1) * self.page_size < page.total_count
        return bool(page.has_more)

    @staticmethod
    def promise(page: Page) -> str:
        if page.total_pages is not None:
            return f"the site says {page.total_pages} pages"
        if page.total_count is not None:
            return f"the site says {page.total_count} postings"
        return "the site says more follow"

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

    def page_request(self, lease: Lease, page: int) -> scrapy.Request:
        request = self.search_request(self.city_code(lease.city), lease.job, page)
        # made here, so set in place rather than copied by replace(): a page request is the
        # crawl's most frequent object after a posting
        request.callback = self._page_callback
        request.errback = self._page_errback
        # the keyword table, not the dupefilter, says what is done:
        # a retried keyword must be able to fetch its pages again
        request.dont_filter = True
        # retries are farm's (farm.middlewares.blocks): with the site's back-off, and
        # an outage is not the keyword's fault; Scrapy's RetryMiddleware stays out
        FarmMeta.of(request).set_page(lease, page)
        request.meta["dont_retry"] = True
        return request

    def postings_from(self, entries, build, id_field: str, response) -> list[JobPosting]:
        """``build(entry)`` for each of the site's entries that has an id; the others are
        skipped, counted (``farm/page/posting_without_id``, ``farm/page/posting_unreadable``)
        and logged: one odd posting never costs its page."""
        postings, unreadable = [], 0
        for entry in entries:
            if not (isinstance(entry, dict) and entry.get(id_field)):
                continue
            try:
                postings.append(build(entry))
            except (AttributeError, TypeError, ValueError, KeyError, IndexError) as exc:
                unreadable += 1
                self.logger.warning(
                    "%s: posting %r skipped at %s: %s", self.name, str(entry.get(id_field))[:64], response.url, exc
                )
        skipped = len(entries) - len(postings) - unreadable
        if skipped:
            self.crawler.stats.inc_value("farm/page/posting_without_id", skipped)
            self.logger.warning("%s: %d entries without %s skipped at %s", self.name, skipped, id_field, response.url)
        if unreadable:
            self.crawler.stats.inc_value("farm/page/posting_unreadable", unreadable)
        return postings

    def last_page(self, page: Page, page_no: int) -> int | None:
        """The keyword's last page, capped, as this response tells it; None when it tells none."""
        if page.total_pages is not None:
            last = max(1, min(page.total_pages, self.max_pages))
        elif page.total_count is not None:
            last = max(1, min(math.ceil(page.total_count / self.page_size), self.max_pages))
        elif not page.has_more or not page.postings or page_no >= self.max_pages:
            return page_no
        else:
            return None
        if not page.postings and page_no > 1:
            # the site answers empty past its real end, whatever its (stale) totals say
            last = min(last, page_no - 1)
        return last

    def parse_search(self, response):
        """The page callback: the crawl's paging reads the answer (farm.crawl.paging)."""
        return self.crawl_paging.page_read(self, response)

    def page_error(self, failure) -> None:
        """The page errback: the crawl's paging ends the keyword by what kept the page."""
        self.crawl_paging.page_failed(failure)
