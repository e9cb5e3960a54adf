"""What this crawl knows of one keyword it holds: the pages it asked for, and how it ends.

A keyword held by the crawl has one ``KeywordRun`` from its claim to its end. Its
pages go through these sets, and leave each when they settle:

    asked for ──► pending ──────────────────────────────────────────► recorded / given up
                     └─ taken from the queue ──► fetching ──► handed to the outbox (writing)

- ``last`` is the keyword's last page as the latest page that told one says it
  (capped by FARM_<SITE>_MAX_PAGES); pages up to it that no one asked for yet are
  asked for, so a total that grows on a later page is followed.
- An end (an ``Outcome``: completed, failed, blocked, released) is decided once,
  and written only when no page the keyword took from the queue is still on its
  way to the outbox: it is then ordered after their progress, and no fetched page
  is thrown away. farm.crawl.registry.KeywordRegistry.end is the one way in.
- ``total_pages``, what a page write tells the store, is never below a page
  asked for: the store completes the keyword only when every page asked for is
  recorded, so nothing fetched is left behind by a total that shrank.
- ``site_total`` is the postings the site says the keyword holds, past any cap,
  as the latest page that told one says; every page write carries it.
"""

from collections.abc import Iterable
from dataclasses import dataclass, field

from farm.crawl.backends.base import LeaseKey
from farm.crawl.backends.base import Outcome as Outcome  # re-exported: the crawl takes it from here with KeywordRun
from farm.state.lease import Lease
from farm.state.models import site_count


@dataclass(eq=False)
class KeywordRun:
    lease: Lease
    # the backend fetches what this process enqueues, and nothing else (WorkBackend.fetches_what_it_enqueues):
    # a page is pending from its ask; else any worker may take a page asked for, and ``pending`` holds the
    # pages this worker took, from when it took them
    pending_from_ask: bool = True
    # this worker claimed (or adopted) the keyword: it keeps its lease alive and counts it as its own;
    # a keyword another worker claimed has a run here only while this worker handles its pages
    owned: bool = True
    last: int | None = None
    requested: set[int] = field(default_factory=set)  # pages asked for under this lease
    pending: set[int] = field(default_factory=set)  # asked for, not yet recorded nor given up
    fetching: set[int] = field(default_factory=set)  # taken from the queue, not yet handed to the outbox
    writing: set[int] = field(default_factory=set)  # handed to the outbox, not yet answered
    recorded: set[int] = field(default_factory=set)  # recorded done under this lease
    outcome: Outcome | None = None  # the end, once decided (the first decided wins)
    outcome_sent: bool = False  # its end is on its way to the store
    over: bool = False  # its end is settled: nothing more happens to it
    orphan_rounds: int = 0  # times pages were found lost inside the crawl (see the lease middleware)
    site_total: int | None = None  # postings the site says the keyword holds (farm.state.pagewrites)

    def __post_init__(self) -> None:
        if self.last is None:
            self.last = self.lease.total_pages

    @property
    def key(self) -> LeaseKey:
        return self.lease.key

    @property
    def live(self) -> bool:
        """Still asking for pages: no end decided."""
        return self.outcome is None and not self.over

    def done(self, page: int) -> bool:
        """Recorded done, by this lease or an earlier one."""
        return page < self.lease.start_page or page in self.lease.pages_ahead or page in self.recorded

    def tell_last(self, last: int | None) -> None:
        if last is not None:
            self.last = last

    def tell_site_total(self, count: int | None) -> None:
        """The postings a page says the keyword holds: kept as its column holds it, when told."""
        count = site_count(count)
        if count is not None:
            self.site_total = count

    def ask(self, pages: Iterable[int]) -> list[int]:
        """Of ``pages``, those neither asked for nor done, now asked for (none once an end is decided)."""
        if not self.live:
            return []
        new = [page for page in pages if page not in self.requested and not self.done(page)]
        self.requested.update(new)
        if self.pending_from_ask:
            self.pending.update(new)
        return new

    @property
    def total_pages(self) -> int | None:
        """The last page as far as this crawl knows: the latest told, or a page asked for beyond it."""
        known = max(self.last or 0, max(self.requested, default=0))
        return known or None

    def taken(self, page: int) -> None:
        """The page's request left the queue for the downloader."""
        if not self.pending_from_ask:
            self.requested.add(page)  # asked for by whoever queued it: not to be asked for again here
            self.pending.add(page)
        if page in self.pending:
            self.fetching.add(page)

    def sent_to_writer(self, page: int) -> None:
        """The page's progress is queued in the outbox, after its postings."""
        self.fetching.discard(page)
        self.writing.add(page)

    def handled(self, page: int, recorded: bool) -> None:
        """The page's write was answered (``recorded``), or the page was given up."""
        self.pending.discard(page)
        self.fetching.discard(page)
        self.writing.discard(page)
        if recorded:
            self.recorded.add(page)

    def missing(self, watermark: int) -> list[int]:
        """Pages up to ``total_pages`` that are neither done nor on their way."""
        return [
            page
            for page in range(watermark + 1, (self.total_pages or 0) + 1)
            if not self.done(page) and page not in self.pending
        ]

    @property
    def idle(self) -> bool:
        """No page of it is in this worker's hands."""
        return not (self.pending or self.fetching or self.writing)

    @property
    def end_due(self) -> bool:
        """An end is decided and every page taken from the queue has been handed over or given up."""
        return self.outcome is not None and not self.outcome_sent and not self.over and not self.fetching
