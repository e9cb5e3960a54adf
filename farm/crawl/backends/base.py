"""The work backend: where a crawl's requests wait between the spider and the downloader.

farm has one scheduler (farm.crawl.scheduler.FarmScheduler) and a backend under it, named by
FARM_WORK_BACKEND as Scrapy names its SCHEDULER_QUEUE: farm.crawl.backends.local.LocalBackend (this
process's memory, and the JOBDIR checkpoint; the default) or farm.crawl.backends.redis.RedisBackend (a
queue every worker shares; the default when FARM_REDIS_URL is set). The scheduler applies farm's gates
(the page window, the site's pace, the identities' paces and proxies, the retry lane) to what a backend
hands out; a backend keeps requests, hands them out and settles them, and builds what it shares with
other processes: its queue and dupefilter, the site's pace, the identities' turns and the proxies'
quarantine.

This module is the contract and the few types both sides of it use; a backend imports nothing else of
the crawl (a test holds it to that). docs/glossary.md gives the words.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, ClassVar, Protocol, cast

from twisted.internet.defer import Deferred, succeed

if TYPE_CHECKING:
    from scrapy import Request, Spider
    from scrapy.crawler import Crawler

    from farm.config import FarmConfig
    from farm.crawl.identities import Identities
    from farm.crawl.pace import SitePace
    from farm.crawl.proxies import ProxyPool
    from farm.state.lease import Lease
    from farm.state.store import KeywordStore

LeaseKey = tuple[int, int]  # (keyword id, lease token)


@dataclass(frozen=True)
class Outcome:
    """How a keyword ends, as ``KeywordRegistry.end`` is told and ``farm.signals.keyword_ended`` says.

    ``kind`` is one of farm.state.lease.ENDS ("completed", "failed", "blocked", "released") or,
    once settled, "lost" (the store fenced this crawl's lease). ``page`` is the page given up with
    it, if any. ``written``: the keyword table holds it already (its last page's write completed
    it, or the store fenced the lease): nothing to write. ``elsewhere``: another process wrote it
    and told this one through the backend: nothing to write, no one to tell.
    """

    kind: str
    reason: str | None = None
    page: int | None = None
    written: bool = False
    elsewhere: bool = False


class PageSpider(Protocol):
    """What the crawl's machinery, a backend's included, asks of its spider (a farm.spiders.base.LeaseSpider)."""

    name: str

    def page_request(self, lease: Lease, page: int) -> Request: ...


def page_spider(crawler: Crawler) -> PageSpider:
    """The crawl's spider: a LeaseSpider, as the crawl's parts serve no other (CrawlParts.serves)."""
    return cast(PageSpider, crawler.spider)


class KeywordBook(Protocol):
    """What a backend may do to the keywords the crawl holds (farm.crawl.registry.KeywordRegistry)."""

    @property
    def runs(self) -> Mapping[LeaseKey, Any]: ...

    def add(self, lease: Lease, *, owned: bool = True) -> Any: ...

    def taken(self, lease_key: LeaseKey, page: int) -> None: ...

    def end(self, lease: Lease, outcome: Outcome) -> None: ...


class Crawl(Protocol):
    """What a backend is given of the crawl it serves (farm.crawl.parts.CrawlParts keeps it)."""

    config: FarmConfig
    store: KeywordStore
    crawler_id: str
    checkpoint: Any  # JOBDIR: farm.crawl.backends.checkpoint.Checkpoint, else None
    refused: str | None  # why the crawl must close at once (the JOBDIR holds another spider's checkpoint)

    @property
    def registry(self) -> KeywordBook: ...  # read-only: a backend calls the crawl's registry, never replaces it

    @property
    def site(self) -> str: ...

    @property
    def prefetch(self) -> int: ...  # how many requests the crawl may hold at once (its page window)

    def wake(self) -> None: ...

    def learned_paces(self) -> dict[str, float]: ...  # identity id -> the pace a past run learned

    def run(self, function: Callable[..., Any], *args: Any, **kwargs: Any) -> Deferred[Any]: ...

    def close_crawl(self, reason: str) -> None: ...


def pace_settings(crawl: Crawl) -> tuple[float, float, float]:
    """What a backend builds the site's own pace with: FARM_<SITE>_CEILING (the sum of every identity's
    requests; 0: none), and the back-off's FARM_BLOCK_BASE_DELAY and FARM_BLOCK_MAX_DELAY."""
    config = crawl.config
    return config.site(crawl.site).ceiling, config.block_base_delay, config.block_max_delay


def identity_settings(crawl: Crawl) -> tuple[float, float, float]:
    """What a backend builds each identity's pace with (farm.crawl.identities): FARM_<SITE>_RATE, and
    the back-off's FARM_BLOCK_BASE_DELAY and FARM_BLOCK_MAX_DELAY."""
    config = crawl.config
    return config.site(crawl.site).rate, config.block_base_delay, config.block_max_delay


class WorkBackend(ABC):
    """The contract every backend keeps; each backend's docstring says only how it differs.

    Life: built by ``from_crawler`` with the crawl it serves (None for a spider not of farm's); ``open``
    once, before the first request (from the scheduler's ``open``); ``close`` when the engine closes the
    scheduler; ``leave`` once, when the engine has stopped. Every method runs on the reactor and never
    blocks on I/O: what a backend must fetch from elsewhere it fetches in the background and wakes the
    engine (``crawl.wake``) when it has something.

    A page request handed out by ``fetch`` is this crawl's until ``mark_handled`` (its page recorded or
    given up): until then no one else gets it, and if this process dies it is handed out again.

    What it builds for the crawl: ``pace`` (the site's own pace: its ceiling, and the back-off after
    its trouble), ``proxies`` (the FARM_PROXIES pool, or None), ``identities`` (each proxy, or this
    machine's address, with its own pace: farm.crawl.identities) and ``peers`` (the other processes it
    shares the work with, farm.crawl.backends.base.Peers).
    """

    # True when ``fetch`` hands requests out at the site's pace itself; the scheduler then paces only
    # what it sends again (the retry lane)
    paced: ClassVar[bool] = False

    pace: SitePace
    proxies: ProxyPool | None = None
    identities: Identities
    peers: Peers

    @classmethod
    @abstractmethod
    def from_crawler(cls, crawler: Crawler, crawl: Crawl | None = None) -> WorkBackend:
        """Build the backend and what it shares: queue, dupefilter, pace, proxies (Scrapy's
        ``build_from_crawler`` calls it); a bad setting raises farm.errors.FarmStartError."""

    @classmethod
    def check(cls, config: FarmConfig, timeout: float) -> str:
        """For ``farm doctor``: reach what the backend needs beyond this process, within ``timeout``
        seconds, and say so in a line; FarmStartError with the line that says what to do when it
        cannot."""
        return "needs nothing beyond this process"

    def open(self, spider: Spider) -> Deferred[Any] | None:
        """Start its threads and take part (before the first request); may return a Deferred."""
        return None  # nothing to do, unless a backend says otherwise

    @abstractmethod
    def close(self, reason: str) -> None:
        """The engine closes the scheduler: stop fetching in the background."""

    def leave(self, give_back: bool = True) -> Deferred[Any] | None:
        """The engine stopped: give back what this process took and did not settle; may return a
        Deferred. ``give_back`` False (a tool or a test that built the parts without a crawl): stop at
        once, blocking, giving nothing back."""
        return None  # nothing to do, unless a backend says otherwise

    @abstractmethod
    def enqueue(self, request: Request) -> bool:
        """Keep the request; False only when it is refused as a duplicate (a request whose fingerprint
        the day has seen, unless ``dont_filter``). A keyword's page requests carry ``dont_filter``: the
        registry asks for each page once."""

    @abstractmethod
    def fetch(self) -> Request | None:
        """The next request, or None. None does not mean the crawl is finished: requests may be on
        their way to this process, or held by others; ask ``is_finished``."""

    @abstractmethod
    def __len__(self) -> int:
        """The requests this process holds and has not handed out."""

    @abstractmethod
    def fetches_what_it_enqueues(self) -> bool:
        """Whether ``fetch`` hands out every request this process enqueues, and none that another process
        enqueued. True: a page this crawl asks for is its own from the ask until it is settled, so a
        keyword with no page in its hands has nothing queued anywhere, and the crawl itself asks again for
        a page lost (farm.crawl.progress, a JOBDIR's take-back). False (a queue other processes take from
        too): a page is this crawl's from the moment ``fetch`` hands it out, and the backend itself finds a
        keyword left with nothing queued anywhere, to queue its missing pages again or complete it."""

    def mark_handled(self, lease_key: LeaseKey, page: int) -> None:
        """The page is recorded, or given up: its request is settled."""
        return None  # nothing to do, unless a backend says otherwise

    def mark_ended(self, lease: Lease, kind: str) -> None:
        """The lease's keyword ended here, as ``kind`` says (an ``Outcome``'s kind: "completed", "lost"...):
        its requests queued where other processes take work are dropped there, and whoever must know of
        the end is told. Those this process
        holds may still be handed out: the scheduler gives them up (farm.crawl.scheduler.still_wanted),
        so that no request of an ended keyword is fetched."""
        return None  # nothing to do, unless a backend says otherwise

    def is_finished(self) -> bool:
        """No request is queued or held anywhere, and no keyword is being taken on: the crawl may
        end once its own keywords have."""
        return True


class Peers:
    """The other processes a backend shares the work with, as the crawl's keywords meet them. This
    one is for a backend that shares with no one; a backend that shares says how it differs."""

    def claiming(self) -> Deferred[Any]:
        """Before a claim: a Deferred that fires once the claim may go ahead."""
        return succeed(None)  # no one else to tell

    def hold(self, leases: list[Lease]) -> None:
        """A claim (or a take-back) made these leases this process's (before their first requests)."""
        return None  # no one else to tell

    def adopted_elsewhere(self) -> Iterable[tuple[int, int]]:
        """(keyword id, token) of the keywords another process took over: not to be taken back."""
        return ()

    def held_pages(self) -> Iterable[tuple[LeaseKey, int]]:
        """(lease key, page) of the page requests this process took and has not settled."""
        return ()

    def closing(self) -> Deferred[Any]:
        """The crawl closes: a Deferred that fires once keywords being taken on have become runs."""
        return succeed(None)  # none is taken on from elsewhere

    def keep_listed(self) -> str | None:
        """The crawl closes with keywords it could not release: stay findable by those who take
        them over; says who does (for the log), or None when no one does."""
        return None  # no one else to take them over

    def busy(self) -> bool | None:
        """Whether other processes hold work, as far as known without asking; None: ``look``."""
        return False  # no one else

    def look(self, then: Callable[[bool], None]) -> None:
        """Ask whether other processes hold work or take keywords on; ``then(busy)`` once known."""
        then(False)
