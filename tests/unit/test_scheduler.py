"""The farm scheduler over a work backend, with no database, no writer process and no Redis: an
in-memory backend and the few parts the scheduler reads."""

from collections import deque
from types import SimpleNamespace

from scrapy import Request
from scrapy.statscollectors import MemoryStatsCollector
from scrapy.utils.test import get_crawler

from farm.crawl.backends.base import WorkBackend
from farm.crawl.identities import Identities, IdentityPace
from farm.crawl.pace import SitePace
from farm.crawl.scheduler import FarmScheduler
from farm.crawl.window import PageWindow


class MemoryBackend(WorkBackend):
    def __init__(self, paced=False):
        self.requests = deque()
        self.paced = paced

    @classmethod
    def from_crawler(cls, crawler, crawl=None):
        return cls()

    def close(self, reason):
        pass

    def enqueue(self, request):
        self.requests.append(request)
        return True

    def fetch(self):
        return self.requests.popleft() if self.requests else None

    def __len__(self):
        return len(self.requests)

    def fetches_what_it_enqueues(self):
        return True


class Run:
    def __init__(self):
        self.live, self.taken_pages = True, []

    def taken(self, page):
        self.taken_pages.append(page)


class Parts(SimpleNamespace):
    def __init__(self, window=2, rate=0.0):
        runs = {(1, 1): Run()}
        super().__init__(
            window=PageWindow(window),
            pace=SitePace(rate, 1.0, 8.0),
            identities=Identities(None, lambda _: IdentityPace(0, 1.0, 8.0)),
            stats=MemoryStatsCollector(get_crawler()),
            runs=runs,
            given_up=[],
            woken_in=[],
        )
        give_up = lambda lease, page: self.given_up.append((lease.key, page))  # noqa: E731
        taken = lambda lease_key, page: runs[lease_key].taken(page)  # noqa: E731
        self.registry = SimpleNamespace(runs=runs, give_up=give_up, taken=taken)

    def wake_in(self, seconds):
        self.woken_in.append(seconds)


LEASE = SimpleNamespace(key=(1, 1))


def page(n, **meta):
    return Request(f"http://site.invalid/{n}", meta={"farm_lease": LEASE, "farm_page": n, **meta})


def out(scheduler):
    pages = []
    while (request := scheduler.next_request()) is not None:
        pages.append(request.meta.get("farm_page"))
    return pages


def test_the_window_parks_a_request_until_a_page_leaves_it():
    parts = Parts(window=2)
    scheduler = FarmScheduler(MemoryBackend(), parts)
    for n in (1, 2, 3):
        scheduler.enqueue_request(page(n))
    assert out(scheduler) == [1, 2]
    assert scheduler.has_pending_requests() and len(scheduler) == 1  # page 3, parked
    assert parts.stats.get_value("farm/window/full") == 1
    parts.window.leave((1, 1), 1)
    assert out(scheduler) == [3] and not scheduler.has_pending_requests()
    assert parts.registry.runs[(1, 1)].taken_pages == [1, 2, 3]


def test_an_ended_keywords_requests_are_given_up_in_the_scheduler():
    parts = Parts()
    scheduler = FarmScheduler(MemoryBackend(), parts)
    scheduler.enqueue_request(page(1))
    parts.registry.runs[(1, 1)].live = False
    assert out(scheduler) == [] and parts.given_up == [((1, 1), 1)]
    assert parts.stats.get_value("farm/lease/dropped_requests") == 1


def test_the_pace_parks_a_request_and_wakes_the_engine_unless_the_backend_paces_itself():
    for paced, expected in ((False, [1]), (True, [1, 2])):
        parts = Parts(window=5, rate=0.5)  # one request every 2 s
        scheduler = FarmScheduler(MemoryBackend(paced=paced), parts)
        scheduler.enqueue_request(page(1))
        scheduler.enqueue_request(page(2))
        assert out(scheduler) == expected
        assert bool(parts.woken_in) is not paced


def test_a_retry_of_a_page_in_the_window_goes_first_past_a_full_window():
    parts = Parts(window=1)
    scheduler = FarmScheduler(MemoryBackend(), parts)
    scheduler.enqueue_request(page(1))
    scheduler.enqueue_request(page(2))
    assert out(scheduler) == [1]  # page 2 parked: the window is full
    assert scheduler.enqueue_request(page(1, retry_times=1))
    assert scheduler.next_request().meta["farm_page"] == 1
    assert parts.stats.get_value("scheduler/enqueued/farm_again") == 1 and len(scheduler) == 1


def test_a_request_that_goes_at_once_never_waits_behind_a_retry_waiting_for_the_pace():
    parts = Parts(window=4)
    scheduler = FarmScheduler(MemoryBackend(), parts)
    for n in (1, 2, 3):
        scheduler.enqueue_request(page(n))
    assert out(scheduler) == [1, 2, 3]
    parts.pace.back_off()  # a block: the next paced request waits a second
    scheduler.enqueue_request(page(1, retry_times=1))
    scheduler.enqueue_request(page(2, farm_session_fresh=True))  # sent again with a session just earned
    scheduler.enqueue_request(page(3, farm_signed=True))  # the signed copy of a request that just went
    assert out(scheduler) == [2, 3]  # the retry waits for its turn; the others do not wait behind it
    assert parts.woken_in and len(scheduler) == 1
    assert parts.stats.get_value("scheduler/dequeued/farm_fresh_session") == 1


def test_other_requests_and_other_spiders_pass_as_scrapys_would():
    parts = Parts(window=1)
    scheduler = FarmScheduler(MemoryBackend(), parts)
    scheduler.enqueue_request(Request("http://site.invalid/robots.txt"))
    assert scheduler.next_request().url == "http://site.invalid/robots.txt"
    plain = FarmScheduler(MemoryBackend())
    plain.enqueue_request(page(1))
    plain.enqueue_request(page(2))
    assert out(plain) == [1, 2]
