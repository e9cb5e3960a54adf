"""The Redis work backend (FARM_REDIS_URL): the queue every worker shares, on scrapy-redis's pieces.

It keeps scrapy-redis's queue shape and dupefilter (farm.crawl.backends.redis.queue and
.dupefilter), and holds them rather than being scrapy-redis's Scheduler, whose contracts do not
hold here:

- scrapy-redis's ``close()`` deletes the queue and the dupefilter unless SCHEDULER_PERSIST: here
  nothing shared is ever deleted by a worker; ``leave`` puts back what this worker took and did
  not settle (farm.crawl.backends.redis.membership).
- scrapy-redis pops on the reactor (a Redis round trip per request; with
  SCHEDULER_IDLE_BEFORE_CLOSE, a blocking BRPOP): here a pump takes requests on the Redis link's
  thread, at the site's shared pace, into a local buffer of up to a page window's worth that
  ``fetch`` serves without touching Redis, refilled when half empty. A taken request not yet
  fetched costs nothing if this worker dies: it goes back to the queue. The engine is woken when
  requests come. An empty queue is looked at again after a growing pause, and at once when this
  worker has queued requests of its own.
- scrapy-redis checks the dupefilter and pushes on the reactor: here ``enqueue`` adds the request
  to the worker's ordered outgoing batch; the dupefilter check happens in the same Lua script that
  queues it.
- ``has_pending`` is what this worker holds; ``is_finished`` is the shared queue's last look
  (farm.crawl.backends.redis.membership.SharedWork.busy).

The Redis calls a page costs are all here and in the membership's sends: one push (batched), one
pop (batched), one acknowledgement (batched).
"""

from __future__ import annotations

import logging
import socket
from collections import deque
from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING, Any

from scrapy import Request, Spider
from scrapy.crawler import Crawler
from twisted.internet import reactor, threads
from twisted.internet.defer import Deferred

from farm.crawl.backends.base import Crawl, LeaseKey, Peers, WorkBackend, identity_settings, pace_settings
from farm.crawl.backends.redis.dupefilter import DayDupeFilter
from farm.crawl.backends.redis.identities import SharedIdentities, SharedIdentityPace
from farm.crawl.backends.redis.link import RedisLink, check_reach
from farm.crawl.backends.redis.membership import SharedWork
from farm.crawl.backends.redis.pace import SharedPace
from farm.crawl.backends.redis.proxies import SharedProxyPool
from farm.crawl.backends.redis.queue import SharedQueue
from farm.crawl.identities import DIRECT
from farm.crawl.meta import FarmMeta
from farm.crawl.proxies import Proxy, proxy_pool_from
from farm.errors import BadPayload, FarmStartError, RedisUnreachable
from farm.state.clock import utcnow
from farm.state.lease import Lease

if TYPE_CHECKING:
    from twisted.internet.interfaces import IDelayedCall

    from farm.config import FarmConfig
    from farm.crawl.backends.redis.queue import Taken

logger = logging.getLogger(__name__)

# Seconds between looks at an empty shared queue, growing to the last while it stays empty.
IDLE_POLLS = (0.05, 0.1, 0.2, 0.5, 1.0)


class RedisBackend(WorkBackend):
    """The request queue shared by every worker; ``work`` is this worker's part in it."""

    paced = True  # the pop hands requests out at the site's shared pace (scripts/pop.lua)

    def __init__(
        self,
        crawler: Crawler,
        crawl: Crawl,
        link: RedisLink,
        queue: SharedQueue,
        resuming: set[tuple[int, int]] | None = None,
    ) -> None:
        """``crawl``: the crawl it serves; ``link``, ``queue``: its Redis connection and shared queue;
        ``resuming``: JOBDIR, the leases of the checkpoint this worker resumes from, else None."""
        config = crawl.config
        self.work = SharedWork(
            crawler,
            link,
            queue,
            crawl.store,
            crawl.registry,
            config.worker_timeout,
            run_db=crawl.run,
            on_lost=lambda reason: crawl.close_crawl("farm_redis_error"),
            on_queued=self._queued,
            resuming=resuming,
        )
        self.registry = crawl.registry
        self.stats = crawler.stats
        self.crawl = crawl
        self.pace = SharedPace(*pace_settings(crawl), link, queue)
        self.peers = SharedPeers(self.work)
        self.wake = crawl.wake
        self._buffer: deque[Request] = deque()  # taken from the shared queue for this worker
        self._popping = False
        self._pump_call: IDelayedCall | None = None
        self._idle_poll = 0
        self._closing = False

    @classmethod
    def from_crawler(cls, crawler: Crawler, crawl: Crawl | None = None) -> RedisBackend:
        """The link (FARM_REDIS_URL), the site's queue and dupefilter under FARM_REDIS_PREFIX, the shared
        pace and the proxies' shared quarantine."""
        if crawl is None:
            raise FarmStartError("the Redis work backend serves farm's LeaseSpiders only")
        config = crawl.config
        if not config.redis_url:
            raise FarmStartError("FARM_WORK_BACKEND names the Redis backend: set FARM_REDIS_URL to a Redis URL")
        try:
            link = RedisLink(config.redis_url, config.outage_grace)
        except RedisUnreachable as exc:  # the setting named, the password masked
            raise FarmStartError(str(exc)) from None
        key = f"{config.redis_prefix}:{crawl.site}"
        dupefilter = DayDupeFilter(link.server, f"{key}:seen", crawl.store.tz, utcnow)
        queue = SharedQueue(link.server, crawler.spider, key, crawl.crawler_id, dupefilter)
        checkpoint = crawl.checkpoint
        resuming = set(checkpoint.saved.leases) if checkpoint is not None and checkpoint.saved is not None else None
        backend = cls(crawler, crawl, link, queue, resuming)
        backend.proxies = proxy_pool_from(crawler, backend._proxy_pool)
        rate, base_delay, max_delay = identity_settings(crawl)
        learned = crawl.learned_paces()
        turns, learned_key = queue.k("identities:turns"), queue.k("identities:learned")

        def make_pace(identity: str) -> SharedIdentityPace:
            # this machine's own address is its own: another machine's is another identity
            shared_as = f"{identity}:{socket.gethostname()}" if identity == DIRECT else identity
            return SharedIdentityPace(
                rate,
                base_delay,
                max_delay,
                learned.get(identity),
                identity=shared_as,
                link=link,
                key=turns,
                learned_key=learned_key,
                wake=crawl.wake,
            )

        backend.identities = SharedIdentities(backend.proxies, make_pace, link, learned_key, stats=crawler.stats)
        return backend

    @classmethod
    def check(cls, config: FarmConfig, timeout: float) -> str:
        return check_reach(config.redis_url, timeout)

    def _proxy_pool(self, proxies: list[Proxy], seconds: float) -> SharedProxyPool:
        return SharedProxyPool.for_crawl(self.work.crawler, proxies, seconds, self.work)

    # --- the contract ----------------------------------------------------------------------

    def open(self, spider: Spider) -> Deferred[Any] | None:
        self.work.link.start()
        return self.work.start()

    def close(self, reason: str) -> None:
        self._closing = True
        if self._pump_call is not None and self._pump_call.active():
            self._pump_call.cancel()

    def leave(self, give_back: bool = True) -> Deferred[Any] | None:
        if not give_back:
            self.work.stop()
            self.work.link.close()
            return None
        d = self.work.leave()
        d.addBoth(self._left)
        return d

    def _left(self, result: object) -> Deferred[Any]:
        # the link's thread joins: not on the reactor; a failed leave fails once the link is closed
        d = threads.deferToThread(self.work.link.close)
        d.addCallback(lambda _: result)
        return d

    def enqueue(self, request: Request) -> bool:
        self.work.push(request)
        self.stats.inc_value("scheduler/enqueued/redis")
        return True

    def fetch(self) -> Request | None:
        if not self._buffer:
            if self._pump_call is None or not self._pump_call.active():  # else the next look is set
                self._pump()
            return None
        request = self._buffer.popleft()
        if len(self._buffer) <= self.prefetch // 2:
            self._pump()
        self.stats.inc_value("scheduler/dequeued/redis")
        return request

    def __len__(self) -> int:
        # not a pop under way: each empty fetch starts one, and counting it would keep the engine
        # from ever being idle; whether the shared queue holds work is ``is_finished``'s to say
        return len(self._buffer)

    def fetches_what_it_enqueues(self) -> bool:
        # any worker pops what any worker pushed; the stall look finds a keyword left with nothing open
        # (farm.crawl.backends.redis.adoption)
        return False

    def mark_handled(self, lease_key: LeaseKey, page: int) -> None:
        self.work.settled(lease_key, page)

    def mark_ended(self, lease: Lease, kind: str) -> None:
        self.work.ended(lease, kind)

    def is_finished(self) -> bool:
        return not (self.work.busy or self.work.adopting)

    # --- the pump ------------------------------------------------------------------------

    @property
    def prefetch(self) -> int:
        return self.crawl.prefetch

    def _queued(self) -> None:
        """This worker's own requests reached the shared queue: take them now, not at the next idle poll."""
        self._idle_poll = 0
        if self._pump_call is not None and self._pump_call.active():
            self._pump()

    def _pump(self) -> None:
        room = self.prefetch - len(self._buffer)
        if self._popping or self._closing or room <= 0:
            return
        if self._pump_call is not None and self._pump_call.active():
            self._pump_call.cancel()
        self._pump_call = None
        self._popping = True
        work, pace = self.work, self.pace
        # the pop carries the site's pace (written back if Redis lost it) and its call id (made again
        # after a lost reply, it answers the requests it took: none is stranded in the in-flight set)
        d = work.link.run(work.queue.pop_many, room, pace.interval, pace.penalty, work.queue.new_call())
        d.addCallback(self._popped)
        d.addErrback(work._failed, "taking requests from the shared queue")
        d.addBoth(self._pumped)

    def _pumped(self, _: object) -> None:
        self._popping = False

    def _popped(self, result: tuple[float, list[Taken]]) -> None:
        wait, taken = result
        self.stats.inc_value("farm/shared/pops")
        self.stats.inc_value("farm/shared/taken", len(taken))
        for item in taken:
            request = item.request
            if isinstance(request, BadPayload):
                self.stats.inc_value("farm/shared/bad_payload")
                logger.error("farm: refused a queued payload that is not a farm request (id %s): %s", item.id, request)
                self.work.ack(item.id)
                continue
            lease, page = FarmMeta.of(request).lease_page()  # every request the codec reads is a page
            if (lease.key, page) in self.work.taken:
                # a second copy of a page this worker holds (queued again by a rebuild after
                # Redis lost everything): the first settles the page; this one is done with now
                self.stats.inc_value("farm/shared/duplicate")
                self.work.ack(item.id)
                continue
            # another worker's keyword, if not held here: handled here page by page
            self.registry.add(lease, owned=False)
            self.registry.taken(lease.key, page)
            self.work.taken[(lease.key, page)] = item.id
            logger.debug("farm: took page %s of %s (id %s)", page, item.lease, item.id)
            self.work.held[(lease.key, page)] = (item.lease, request.priority, item.payload)
            self._buffer.append(request)
        if taken:
            self._idle_poll = 0
            self.wake()
            if len(self._buffer) <= self.prefetch // 2:  # else fetch pumps when it is
                # it took less than it asked for: the queue was empty, look again as when idle (topping
                # up at once made pops of one or two requests, or none, each a round trip)
                self._idle_poll = 1
                self._later(IDLE_POLLS[0])
        elif wait > 0:
            self._later(wait)
        else:
            self._later(IDLE_POLLS[min(self._idle_poll, len(IDLE_POLLS) - 1)])
            self._idle_poll += 1

    def _later(self, seconds: float) -> None:
        if self._closing:
            return
        if self._pump_call is not None and self._pump_call.active():
            return
        self._pump_call = reactor.callLater(seconds, self._pump_now)

    def _pump_now(self) -> None:
        self._pump_call = None
        self._pump()


class SharedPeers(Peers):
    """The other workers, met through the shared work (farm.crawl.backends.redis.membership)."""

    def __init__(self, work: SharedWork):
        self.work = work

    def claiming(self) -> Deferred[Any]:
        # Redis first says this worker is taking keywords on: should it stop, a survivor looks
        return self.work.claiming()

    def hold(self, leases: list[Lease]) -> None:
        self.work.hold(leases, claimed=True)

    def adopted_elsewhere(self) -> Iterable[tuple[int, int]]:
        # looked at when the scheduler opened (the join)
        return self.work.others

    def held_pages(self) -> Iterable[tuple[LeaseKey, int]]:
        return list(self.work.taken)

    def closing(self) -> Deferred[Any]:
        return self.work.closing()

    def keep_listed(self) -> str | None:
        self.work.keep_listed()
        return (
            f"this worker stays listed in Redis: a {self.work.spider.name} worker that finds it silent "
            f"for FARM_WORKER_TIMEOUT ({self.work.worker_timeout:g}s) adopts them once the database answers "
            f"(one running now, or the next started)"
        )

    def busy(self) -> bool | None:
        return None  # to be looked up in Redis

    def look(self, then: Callable[[bool], None]) -> None:
        d = self.work.link.run(self.work.queue.busy)
        d.addCallback(self._looked, then)
        d.addErrback(self.work._failed, "looking at the shared queue")

    def _looked(self, busy: bool, then: Callable[[bool], None]) -> None:
        self.work.busy = busy
        then(busy or self.work.adopting)
