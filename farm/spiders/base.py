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

The base never touches the database. It is handed leases by the lease
middleware (``lease_requests``), keeps what it asked for of each in its run
(farm.crawl.keywordrun), held by the crawl's keyword registry (``registry``),
tells the crawl's page progress (``progress``) how many postings each page yielded,
and ends keywords through the registry (``registry.end``), which writes them.
It finds the registry and the progress itself, through Scrapy
(``crawler.get_extension(SpiderParts)``), the first time it uses them.
"""

import logging
import math
import re
from dataclasses import dataclass, field
from functools import cached_property
from typing import TYPE_CHECKING
from weakref import WeakKeyDictionary

import scrapy
from scrapy.exceptions import IgnoreRequest
from scrapy.spidermiddlewares.httperror import HttpError

from farm.config import FarmConfig
from farm.crawl.keywordrun import KeywordRun, Outcome
from farm.errors import ParseError, SettingError, UnknownCity
from farm.items import JobPosting
from farm.sessions.wall import Wall, captcha_in, in_wall_shape, looks_html, text_of, unknown_wall
from farm.state.lease import Lease

if TYPE_CHECKING:
    from farm.crawl.progress import PageProgress
    from farm.crawl.registry import KeywordRegistry

logger = logging.getLogger(__name__)

BLOCK_STATUSES = {403: "http_403", 429: "http_429", 503: "http_503"}


class KeywordBlocked(IgnoreRequest):
    """The site still blocked a page after FARM_BLOCK_RETRIES retries."""


class SiteUnavailable(IgnoreRequest):
    """The site kept failing (refused or dropped connections, timeouts, server errors
    across keywords) after FARM_BLOCK_RETRIES retries: the site's trouble, not the keyword's."""


class LeaseLost(IgnoreRequest):
    """The request belongs to a keyword this process no longer crawls (ended or taken over)."""


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


class SpiderParts:
    """What a LeaseSpider uses of its crawl: the keyword registry (farm.crawl.registry) and the page
    progress (farm.crawl.progress). farm.crawl.parts.CrawlParts, the extension that builds the crawl's
    parts, is one: the spider finds it with ``crawler.get_extension(SpiderParts)``."""

    registry: "KeywordRegistry"
    progress: "PageProgress"


class LeaseSpider(scrapy.Spider):
    page_size: int
    city_codes: dict[str, str]
    code_pattern: re.Pattern
    paging: str = "parallel"
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
    def progress(self):
        """The crawl's page progress (farm.crawl.progress): told how many postings each page
        yielded by a plain call, as a signal per page cost seven times as much."""
        return self._parts().progress

    @cached_property
    def registry(self):
        """The crawl's keyword registry (farm.crawl.registry): the keywords this crawl holds, and
        the one way to end one."""
        return self._parts().registry

    def _parts(self) -> SpiderParts:
        parts = self.crawler.get_extension(SpiderParts)
        if parts is None:
            # an AttributeError, as a missing attribute is: inspect.getmembers (Request.to_dict, for
            # Scrapy's disk queues and scrapy-redis) passes over it and stops at anything else
            raise AttributeError("farm.crawl.parts.CrawlParts is not in EXTENSIONS: enable farm with its add-on")
        return parts

    @property
    def runs(self):
        """The keywords this crawl holds, by lease key (read-only): what each asked for."""
        return self.registry.runs

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
        page_no = response.request.meta.get("farm_page", 1) if response.request is not None else 1
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

    def lease_requests(self, lease: Lease) -> list[scrapy.Request]:
        """The first requests of a newly claimed keyword; from now on it is one of ``runs``."""
        run = self.registry.add(lease)
        try:
            self.city_code(lease.city)
        except UnknownCity as exc:
            self.registry.end(lease, Outcome("failed", str(exc)))
            return []
        if lease.total_pages is None:
            if lease.start_page > self.max_pages:  # resumed past a lowered FARM_*_MAX_PAGES
                self.registry.end(lease, Outcome("completed", "no page left to fetch"))
                return []
            pages = self.registry.ask(run, [lease.start_page])
        else:
            self.registry.tell_last(run, min(lease.total_pages, self.max_pages))
            pages = [page for page in range(lease.start_page, run.last + 1) if not run.done(page)]
            pages = self.registry.ask(run, pages[:1] if self.paging == "sequential" else pages)
        if not pages:
            self.registry.end(lease, Outcome("completed", "no page left to fetch"))
            return []
        return [self.page_request(lease, page) for page in pages]

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
        request.meta.update(farm_lease=lease, farm_page=page, dont_retry=True)
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

    def next_pages(self, run: KeywordRun, page_no: int, page: Page) -> list[int]:
        """The pages this response makes known that nobody asked for yet, now asked for."""
        last = self.last_page(page, page_no)
        self.registry.tell_last(run, last)
        if self.paging == "sequential" or last is None:
            # one page at a time: the next, unless this one is the last
            return self.registry.ask(run, [] if last is not None else [page_no + 1])
        # the latest total decides: every page up to it, including those a growing total reveals
        return self.registry.ask(run, range(run.lease.start_page, last + 1))

    def parse_search(self, response):
        lease: Lease = response.meta["farm_lease"]
        page_no: int = response.meta["farm_page"]
        try:
            page = self.page_of(response)
        except ParseError as exc:
            self.crawler.stats.inc_value("farm/page/unparsable")
            self.registry.end(lease, Outcome("failed", f"{exc} at {response.url}", page_no))
            return
        run = self.runs.get(lease.key)
        next_pages = self.next_pages(run, page_no, page) if run is not None else []
        if run is not None:
            self.registry.tell_site_total(run, page.site_total)
        place = (lease, page_no)
        for posting in page.postings:
            posting["source"] = self.name
            posting["keyword_id"] = lease.id
            # not a field: set past Item.__setattr__'s check, a Python call per posting
            object.__setattr__(posting, "_farm_page", place)
            yield posting
        self.crawler.stats.inc_value("farm/page/parsed")
        self.progress.page_parsed(lease, page_no, len(page.postings), self)
        for next_page in next_pages:
            yield self.page_request(lease, next_page)

    def page_error(self, failure):
        request = failure.request
        lease: Lease = request.meta["farm_lease"]
        page: int = request.meta["farm_page"]
        if failure.check(LeaseLost):
            return  # given up where it was dropped
        if failure.check(KeywordBlocked):
            self.registry.end(lease, Outcome("blocked", str(failure.value), page))
            return
        if failure.check(SiteUnavailable):
            self.registry.end(lease, Outcome("released", f"site unavailable: {failure.value}", page))
            return
        if failure.check(HttpError):
            reason = f"HTTP {failure.value.response.status} at {request.url}"
        else:
            reason = f"{failure.type.__name__}: {failure.getErrorMessage()} at {request.url}"
        self.crawler.stats.inc_value("farm/page/error")
        self.registry.end(lease, Outcome("failed", reason, page))
