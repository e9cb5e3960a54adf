"""KeywordPaging: the crawl's side of a keyword's pages, which it owns with the keyword's lease.

A site spider (farm.spiders.base.LeaseSpider) says what to ask and how to read an answer: the request
for a page (``page_request``), the page an answer is (``page_of``: a Page, or ParseError) and the last
page it tells (``last_page``). Which pages a keyword asks for, and when a keyword ends, is the crawl's:

- a keyword just claimed asks for its first pages, or for every unfinished page when it resumes
  (``first_requests``), and ends at once when its city is unknown or no page is left;
- a page's answer tells the keyword's last page, and the pages nobody asked for yet are asked for
  (all at once for a ``"parallel"`` spider, the next alone for a ``"sequential"`` one); its postings
  are marked with their keyword and page, and the page progress is told how many there were
  (``page_read``); an answer that does not parse fails its keyword;
- a page that could not be fetched ends its keyword: blocked, released (the site's trouble), or
  failed (``page_failed``); one of a keyword no longer held is left alone.

The spider's page callback and errback are its own methods (Scrapy and the shared queue name a
request's callbacks by the spider's method names), each a call to this.
"""

from collections.abc import Iterable, Iterator
from typing import Any, Protocol, cast

from scrapy import Request
from scrapy.crawler import Crawler
from scrapy.exceptions import IgnoreRequest
from scrapy.spidermiddlewares.httperror import HttpError
from twisted.python.failure import Failure

from farm.crawl.keywordrun import KeywordRun, Outcome
from farm.crawl.meta import FarmMeta
from farm.errors import ParseError, UnknownCity
from farm.state.lease import Lease


class KeywordBlocked(IgnoreRequest):
    """The site still blocked a page after FARM_BLOCK_RETRIES retries."""


class SiteUnavailable(IgnoreRequest):
    """The site kept failing (refused or dropped connections, timeouts, server errors
    across keywords) after FARM_BLOCK_RETRIES retries: the site's trouble, not the keyword's."""


class LeaseLost(IgnoreRequest):
    """The request belongs to a keyword this process no longer crawls (ended or taken over)."""


class PagedSpider(Protocol):
    """What the paging asks of a site spider (farm.spiders.base.LeaseSpider)."""

    name: str
    paging: str
    max_pages: int

    def city_code(self, city: str) -> str: ...

    def page_request(self, lease: Lease, page: int) -> Request: ...

    def page_of(self, response: Any) -> Any: ...

    def last_page(self, page: Any, page_no: int) -> int | None: ...


class PagingRegistry(Protocol):
    """What the paging uses of the keyword registry (farm.crawl.registry.KeywordRegistry)."""

    @property
    def runs(self) -> Any: ...

    def add(self, lease: Lease) -> KeywordRun: ...

    def ask(self, run: KeywordRun, pages: Iterable[int]) -> list[int]: ...

    def tell_last(self, run: KeywordRun, last: int | None) -> None: ...

    def tell_site_total(self, run: KeywordRun, site_total: int | None) -> None: ...

    def end(self, lease: Lease, outcome: Outcome) -> None: ...


class PageCounter(Protocol):
    """What the paging tells the page progress (farm.crawl.progress.PageProgress)."""

    def page_parsed(self, lease: Lease, page: int, postings: int, spider: Any) -> None: ...


class KeywordPaging:
    """The pages each keyword asks for, and its end when a page cannot be had (see the module docstring)."""

    def __init__(self, crawler: Crawler, registry: PagingRegistry, progress: PageCounter):
        self.crawler = crawler
        self.registry = registry
        self.progress = progress
        self.stats = crawler.stats

    def first_requests(self, lease: Lease) -> list[Request]:
        """The first requests of a newly claimed keyword; from now on it is one of the registry's runs."""
        registry, spider = self.registry, cast(PagedSpider, self.crawler.spider)
        run = registry.add(lease)
        try:
            spider.city_code(lease.city)
        except UnknownCity as exc:
            registry.end(lease, Outcome("failed", str(exc)))
            return []
        if lease.total_pages is None:
            if lease.start_page > spider.max_pages:  # resumed past a lowered FARM_*_MAX_PAGES
                registry.end(lease, Outcome("completed", "no page left to fetch"))
                return []
            pages = registry.ask(run, [lease.start_page])
        else:
            registry.tell_last(run, min(lease.total_pages, spider.max_pages))
            assert run.last is not None  # told just above
            pages = [page for page in range(lease.start_page, run.last + 1) if not run.done(page)]
            pages = registry.ask(run, pages[:1] if spider.paging == "sequential" else pages)
        if not pages:
            registry.end(lease, Outcome("completed", "no page left to fetch"))
            return []
        return [spider.page_request(lease, page) for page in pages]

    def next_pages(self, spider: PagedSpider, run: KeywordRun, page_no: int, page: Any) -> list[int]:
        """The pages this answer makes known that nobody asked for yet, now asked for."""
        last = spider.last_page(page, page_no)
        self.registry.tell_last(run, last)
        if spider.paging == "sequential" or last is None:
            # one page at a time: the next, unless this one is the last
            return self.registry.ask(run, [] if last is not None else [page_no + 1])
        # the latest total decides: every page up to it, including those a growing total reveals
        return self.registry.ask(run, range(run.lease.start_page, last + 1))

    def page_read(self, spider: PagedSpider, response: Any) -> Iterator[Any]:
        """A page's postings, marked with their keyword and page, then the requests for the pages it
        makes known; its keyword failed when it does not parse."""
        lease, page_no = FarmMeta.of(response).lease_page()
        try:
            page = spider.page_of(response)
        except ParseError as exc:
            self.stats.inc_value("farm/page/unparsable")
            self.registry.end(lease, Outcome("failed", f"{exc} at {response.url}", page_no))
            return
        run = self.registry.runs.get(lease.key)
        next_pages = self.next_pages(spider, run, page_no, page) if run is not None else []
        if run is not None:
            self.registry.tell_site_total(run, page.site_total)
        place = (lease, page_no)
        for posting in page.postings:
            posting["source"] = spider.name
            posting["keyword_id"] = lease.id
            # not a field: set past Item.__setattr__'s check, a Python call per posting
            object.__setattr__(posting, "_farm_page", place)
            yield posting
        self.stats.inc_value("farm/page/parsed")
        self.progress.page_parsed(lease, page_no, len(page.postings), spider)
        for next_page in next_pages:
            yield spider.page_request(lease, next_page)

    def page_failed(self, failure: Failure) -> None:
        """A page that could not be had ends its keyword, by what kept it."""
        request = failure.request  # type: ignore[attr-defined]  # Scrapy sets it on an errback's failure
        lease, page = FarmMeta.of(request).lease_page()
        error = failure.value
        if isinstance(error, LeaseLost):
            return  # given up where it was dropped
        if isinstance(error, KeywordBlocked):
            self.registry.end(lease, Outcome("blocked", str(error), page))
            return
        if isinstance(error, SiteUnavailable):
            self.registry.end(lease, Outcome("released", f"site unavailable: {error}", page))
            return
        if isinstance(error, HttpError):
            reason = f"HTTP {error.response.status} at {request.url}"
        else:
            reason = f"{type(error).__name__}: {failure.getErrorMessage()} at {request.url}"
        self.stats.inc_value("farm/page/error")
        self.registry.end(lease, Outcome("failed", reason, page))


class PagingParts:
    """What a LeaseSpider uses of its crawl: the paging. farm.crawl.parts.CrawlParts, the extension that
    builds the crawl's parts, is one: the spider finds it with ``crawler.get_extension(PagingParts)``."""

    paging: KeywordPaging
