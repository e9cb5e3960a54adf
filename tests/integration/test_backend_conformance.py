"""Every work backend keeps farm.crawl.backends.base.WorkBackend's contract: one module of tests, run
against each backend FARM_WORK_BACKEND may name, as crawlee-python tests its storage clients.

Each backend is built as a crawl builds it (farm.crawl.parts.CrawlParts, through
farm.crawl.starting.build_backend) on a SQLite keyword table, with the machine's real Redis and a key
prefix of the test's own in its settings (``shared``, deleted afterwards): the local backend is given
them too, and must keep nothing there. No crawl runs: a test opens the backend, holds a lease as a
claim does (``peers.hold``), enqueues its page requests and fetches them as the farm scheduler would.
Where a backend hands requests out later (the Redis one takes them from its shared queue in the
background), a test waits on a condition; where the contract lets backends differ, it goes by the
contract's own answers (``fetches_what_it_enqueues``), never by a backend's class.
"""

import threading
import time
from dataclasses import dataclass

import pytest
import pytest_twisted
import redis
from scrapy import Request
from scrapy.crawler import Crawler
from scrapy.utils.misc import load_object
from twisted.internet import reactor
from twisted.internet.defer import Deferred, maybeDeferred
from twisted.internet.task import deferLater

from farm.config import LOCAL_BACKEND, REDIS_BACKEND
from farm.crawl.backends.base import Outcome, Peers, WorkBackend
from farm.crawl.pace import SitePace
from farm.crawl.parts import CrawlParts
from farm.crawl.scheduler import FarmScheduler
from farm.crawl.starting import build_backend
from farm.errors import FarmStartError
from farm.state.lease import Lease
from tests.integration.test_shared_scheduler import crawler_with_parts
from tests.unit.components import pending_timers, until
from tests.unit.spider_helpers import make_lease

pytestmark = pytest.mark.redis  # each backend is given the machine's Redis (the local one must not use it)
BACKENDS = [pytest.param(LOCAL_BACKEND, id="local"), pytest.param(REDIS_BACKEND, id="redis")]
WAIT = 30  # seconds any one wait may take before it fails the test


def crawler_on(backend_path: str, db_url: str, redis_url: str, prefix: str, **settings: object) -> Crawler:
    """A crawler whose parts are built with the backend ``backend_path`` names, in the order Scrapy's
    crawl builds them (the spider first), not crawling; ``settings`` over the test's."""
    return crawler_with_parts(
        db_url,
        [("qcwy", "北京", "python")],
        redis_url,
        prefix,
        FARM_WORK_BACKEND=backend_path,
        # Scrapy's default queue asks the engine's downloader for its slots: there is no engine here
        SCHEDULER_PRIORITY_QUEUE="scrapy.pqueues.ScrapyPriorityQueue",
        **settings,
    )


@dataclass
class Built:
    """A backend as its crawl built it, and where it may keep what it shares."""

    crawler: Crawler
    parts: CrawlParts
    backend: WorkBackend
    server: redis.Redis
    prefix: str
    state: str = "built"  # then "open", "closed" and "left", as the contract's life goes

    async def open(self) -> WorkBackend:
        await maybeDeferred(self.backend.open, self.crawler.spider).addTimeout(WAIT, reactor)
        self.state = "open"
        return self.backend

    def close(self) -> None:
        self.backend.close("finished")
        self.state = "closed"

    def keys(self) -> set[str]:
        """The keys under the test's prefix."""
        return {key.decode() for key in self.server.scan_iter(f"{self.prefix}:*")}

    def page(self, lease: Lease, page: int) -> Request:
        return self.crawler.spider.page_request(lease, page)


@pytest.fixture(params=BACKENDS)
def backend_path(request) -> str:
    return request.param


def build(backend_path: str, db_url: str, redis_url: str, prefix: str, **settings: object) -> Built:
    """The backend FARM_WORK_BACKEND names, built with its crawl's parts, which are started (the DB
    thread, the state writer) as the scheduler's ``open`` starts them; not yet opened."""
    crawler = crawler_on(backend_path, db_url, redis_url, prefix, **settings)
    parts = crawler.get_extension(CrawlParts)
    parts.start()
    return Built(crawler, parts, parts.backend, redis.Redis.from_url(redis_url), prefix)


async def done_with(built: Built) -> None:
    """Close what ``build`` built, as far as the test left it."""
    built.server.close()
    if built.state == "open":
        built.close()
    if built.state == "left":  # the contract's leave is once: the parts' close must not make it again
        built.parts.backend.leave = lambda give_back=True: None
    built.parts.close()  # the backend leaves without giving back, the DB thread stops, the writer's input ends
    await built.parts.writer.ended.addTimeout(WAIT, reactor)  # its process has exited


@pytest_twisted.async_yield_fixture
async def built(backend_path, sqlite_url, shared):
    """The backend FARM_WORK_BACKEND names, built (``build``); not yet opened."""
    built = build(backend_path, sqlite_url, *shared)
    yield built
    await done_with(built)


@pytest_twisted.async_yield_fixture
async def another(backend_path, sqlite_url, shared):
    """A second process's backend of the same kind, on the same keyword table and settings, under a
    crawler id of its own; not yet opened."""
    another = build(backend_path, sqlite_url, *shared, FARM_CRAWLER_ID="another-worker")
    yield another
    await done_with(another)


def key(request: Request) -> tuple[tuple[int, int], int]:
    """A page request's (lease key, page)."""
    return request.meta["farm_lease"].key, request.meta["farm_page"]


class HandedOut:
    """What ``fetch`` hands out, fetched as the engine asks for it, and the lengths seen meanwhile."""

    def __init__(self, backend: WorkBackend):
        self.backend = backend
        self.requests: list[Request] = []
        self.lengths: list[int] = []

    def fetch(self, most: int | None = None) -> list[Request]:
        """Fetch until ``fetch`` says None, or ``most`` requests are handed out in all; all handed out."""
        self.lengths.append(len(self.backend))
        while most is None or len(self.requests) < most:
            request = self.backend.fetch()
            self.lengths.append(len(self.backend))
            if request is None:
                break
            self.requests.append(request)
        return self.requests

    @property
    def keys(self) -> list[tuple[tuple[int, int], int]]:
        return [key(request) for request in self.requests]

    async def until_seen(self, wanted: set, what: str) -> None:
        """Fetch until every (lease key, page) of ``wanted`` has been handed out."""
        await until(lambda: wanted <= {key(request) for request in self.fetch()}, WAIT, what)


async def finished(backend: WorkBackend) -> bool:
    """``is_finished`` once the backend's peers have looked whether any work is left (Peers.look:
    a backend that shares its work knows it from its last look)."""
    looked: Deferred = Deferred()
    backend.peers.look(lambda busy: looked.callback(backend.is_finished()))
    return await looked.addTimeout(WAIT, reactor)


async def until_finished(backend: WorkBackend, what: str) -> None:
    """Wait until ``finished(backend)``; fail the test after WAIT seconds."""
    deadline = time.monotonic() + WAIT
    while not await finished(backend):
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        await deferLater(reactor, 0.02, lambda: None)


def settle(backend: WorkBackend, requests: list[Request]) -> None:
    for request in requests:
        backend.mark_handled(*key(request))


# --- the contract, each backend ------------------------------------------------------------------


def test_the_backend_is_built_from_FARM_WORK_BACKEND_with_its_pace_and_peers_and_checks_in_a_line(built, backend_path):
    backend_cls = load_object(backend_path)
    assert issubclass(backend_cls, WorkBackend) and type(built.backend) is backend_cls
    again = build_backend(built.crawler, built.parts)  # as the crawl's parts built theirs
    try:
        assert type(again) is backend_cls
        for backend in (built.backend, again):
            assert isinstance(backend.pace, SitePace) and isinstance(backend.peers, Peers)
            assert backend.proxies is None  # no FARM_PROXIES
    finally:
        again.leave(give_back=False)  # never opened: nothing to give back
    line = backend_cls.check(built.parts.config, 5.0)
    assert isinstance(line, str) and line.strip() and "\n" not in line


@pytest_twisted.ensureDeferred
async def test_each_page_request_is_handed_out_exactly_once(built):
    backend = await built.open()
    lease = make_lease("qcwy")
    backend.peers.hold([lease])
    pages = [built.page(lease, page) for page in range(1, 8)]
    assert all(backend.enqueue(request) for request in pages)
    handed = HandedOut(backend)
    await handed.until_seen({key(request) for request in pages}, "every page request to be handed out")
    assert sorted(handed.keys) == sorted(key(request) for request in pages)  # each once, in any order
    assert len(backend) == 0
    settle(backend, handed.requests)
    await until_finished(backend, "no work left anywhere")
    handed.fetch()
    assert len(handed.requests) == len(pages)  # and no more
    assert min(handed.lengths) >= 0 and len(backend) == 0


@pytest_twisted.ensureDeferred
async def test_a_request_the_dupefilter_has_seen_is_handed_out_once(built):
    # page requests carry dont_filter (the registry asks for each page once); any other request the
    # day has seen is refused, or kept and not handed out again
    backend = await built.open()
    lease = make_lease("qcwy")
    backend.peers.hold([lease])
    filtered = built.page(lease, 1).replace(dont_filter=False)
    backend.enqueue(filtered)
    backend.enqueue(filtered.replace())
    backend.enqueue(built.page(lease, 2))
    handed = HandedOut(backend)
    await handed.until_seen({(lease.key, 1), (lease.key, 2)}, "both pages to be handed out")
    settle(backend, handed.requests)
    await until_finished(backend, "no work left anywhere")
    handed.fetch()
    assert sorted(handed.keys) == [(lease.key, 1), (lease.key, 2)]


@pytest_twisted.ensureDeferred
async def test_no_request_of_an_ended_keyword_leaves_the_scheduler_and_anothers_still_do(built):
    # mark_ended drops what waits where others take work; what this process holds, the scheduler
    # gives up: over any backend, an ended keyword's request is never fetched
    backend = await built.open()
    parts = built.parts
    scheduler = FarmScheduler(backend, parts)
    ended, other = make_lease("qcwy", id=1), make_lease("qcwy", id=2, job="java")
    parts.registry.hold([ended, other])  # as a claim does: the crawl's runs, the backend's peers told
    for page in (1, 2, 3):
        assert scheduler.enqueue_request(built.page(ended, page))
        assert scheduler.enqueue_request(built.page(other, page))
    first: list[Request] = []
    await until(lambda: first or first.extend(filter(None, [scheduler.next_request()])), WAIT, "a first request")
    parts.registry.end(ended, Outcome("completed", written=True))  # its end already in the keyword table
    after: list[Request] = []
    wanted = {(other.key, page) for page in (1, 2, 3)} - {key(request) for request in first}

    def fetched_the_others() -> bool:
        after.extend(iter(scheduler.next_request, None))
        return wanted <= {key(request) for request in after}

    await until(fetched_the_others, WAIT, "the other keyword's requests")
    # at most one of its three requests went out before its end: the others waited, and stay unfetched
    assert [key(request) for request in after if key(request)[0] == ended.key] == []


@pytest_twisted.ensureDeferred
async def test_a_page_handed_out_and_not_handled_keeps_a_shared_backend_unfinished_until_handled(built):
    backend = await built.open()
    lease = make_lease("qcwy")
    backend.peers.hold([lease])
    backend.enqueue(built.page(lease, 1))
    handed = HandedOut(backend)
    await handed.until_seen({(lease.key, 1)}, "the page request to be handed out")
    assert len(backend) == 0
    # held by this process, not handled: a backend whose queue other processes take from too is not
    # finished (a survivor would hand the page out again); one that fetches only what this process
    # enqueues holds nothing elsewhere
    assert await finished(backend) is backend.fetches_what_it_enqueues()
    backend.mark_handled(lease.key, 1)
    await until_finished(backend, "the handled page to leave no work anywhere")


@pytest_twisted.ensureDeferred
async def test_fetches_what_it_enqueues_says_whether_another_process_is_handed_this_ones_requests(built, another):
    backend, elsewhere = await built.open(), await another.open()
    own = backend.fetches_what_it_enqueues()
    assert elsewhere.fetches_what_it_enqueues() is own  # an answer of the kind of backend, not of one process
    mine, theirs = make_lease("qcwy", id=1), make_lease("qcwy", id=2, job="java")
    backend.peers.hold([mine])
    elsewhere.peers.hold([theirs])
    my_pages, their_pages = {(mine.key, page) for page in (1, 2, 3)}, {(theirs.key, page) for page in (1, 2, 3)}
    here, there = HandedOut(backend), HandedOut(elsewhere)
    there.fetch()  # the other process asks first, and on
    for _, page in sorted(my_pages):
        assert backend.enqueue(built.page(mine, page))
    if own:
        # each process is handed what it enqueued and nothing the other did, both asking at once
        for _, page in sorted(their_pages):
            assert elsewhere.enqueue(another.page(theirs, page))

        def all_handed_out() -> bool:
            there.fetch()
            here.fetch()
            return my_pages | their_pages <= set(here.keys) | set(there.keys)

        await until(all_handed_out, WAIT, "every page to be handed out")
        assert (sorted(here.keys), sorted(there.keys)) == (sorted(my_pages), sorted(their_pages))
    else:
        # the other process is handed what this one enqueued, this one fetching nothing meanwhile
        await there.until_seen(my_pages, "the other process to be handed this one's requests")
        assert here.fetch() == []
        assert sorted(there.keys) == sorted(my_pages)  # each once
    settle(backend, here.requests)
    settle(elsewhere, there.requests)


@pytest_twisted.ensureDeferred
async def test_leaving_without_giving_back_stops_at_once_and_leaves_no_thread(built):
    threads_before = set(threading.enumerate())  # the crawl's DB thread among them: the parts'
    timers_before = pending_timers()  # another test's loop, ticking meanwhile, is one of them
    backend = await built.open()
    lease = make_lease("qcwy")
    backend.peers.hold([lease])
    for page in (1, 2, 3):
        backend.enqueue(built.page(lease, page))
    handed = HandedOut(backend)
    await until(lambda: handed.fetch(most=1), WAIT, "a first request to be handed out")
    built.close()
    left = backend.leave(give_back=False)
    built.state = "left"
    assert left is None or left.called  # blocking: done when it returns
    assert [thread.name for thread in threading.enumerate() if thread not in threads_before] == []
    assert pending_timers() - timers_before == set()
    # what it shares it keeps under its site's key, and only a backend whose queue other processes
    # take from keeps anything there
    kept = built.keys()
    assert {name for name in kept if not name.startswith(f"{built.prefix}:qcwy:")} == set()
    assert bool(kept) is not backend.fetches_what_it_enqueues()


@pytest.mark.parametrize("spoil", ["names nothing", "not a backend"])
def test_a_bad_FARM_WORK_BACKEND_is_one_line_naming_it(backend_path, spoil, sqlite_url, shared):
    # beside each backend: its class path misspelt, and a class of its module that is not a WorkBackend
    value = {"names nothing": f"{backend_path}s", "not a backend": f"{load_object(backend_path).__module__}.Peers"}
    with pytest.raises(FarmStartError) as error:
        crawler_on(value[spoil], sqlite_url, *shared)
    message = str(error.value)
    assert message.startswith(f"FARM_WORK_BACKEND={value[spoil]!r}") and "\n" not in message
