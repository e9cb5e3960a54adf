"""The farm scheduler with FARM_REDIS_URL: scrapy-redis's scheduler, extended where it loses work.

What scrapy-redis's Scheduler does, and what this one does instead:

- ``close()`` deletes the queue and the dupefilter unless SCHEDULER_PERSIST: here
  nothing shared is ever deleted by a worker; a clean close puts back what this
  worker took and did not settle (farm.shared.work.leave).
- ``next_request()`` pops on the reactor (a Redis round trip per request; with
  SCHEDULER_IDLE_BEFORE_CLOSE, a blocking BRPOP): here a pump takes requests on the
  Redis link's thread, at the site's shared pace, into a local buffer of up to a
  page window's worth that ``next_request`` serves without touching Redis, refilled
  when half empty. A request takes its place in the page window when it leaves the
  buffer (a taken request not yet fetched costs nothing if this worker dies: it
  goes back to the queue). The engine is woken when requests come. An empty queue
  is looked at again after a growing pause, and at once when this worker has
  queued requests of its own.
- ``enqueue_request()`` checks the dupefilter and pushes on the reactor: here the
  request joins the worker's ordered outgoing batch; the dupefilter check happens
  in the same Lua script that queues it.
- ``has_pending_requests()`` is "the queue is not empty": here it is what this
  worker holds; whether others still hold work is the lease middleware's to weigh
  (farm.shared.work.SharedWork.busy) before the worker ends.

A request for a page already in this worker's window (a retry, a redirect) stays
with this worker and goes out first, as in local mode. Either way a page request
takes its proxy (FARM_PROXIES) as it leaves; with every proxy quarantined it waits
here, in this worker, as in local mode.
"""

import logging
from collections import deque

from scrapy_redis.scheduler import Scheduler as RedisScheduler
from twisted.internet import reactor

from farm.proxies import take_proxy
from farm.scheduler import RetryLane, still_wanted
from farm.shared.codec import BadPayload

logger = logging.getLogger(__name__)

# Seconds between looks at an empty shared queue, growing to the last while it stays empty.
IDLE_POLLS = (0.05, 0.1, 0.2, 0.5, 1.0)


class SharedScheduler(RedisScheduler):
    def __init__(self, runtime):
        work = runtime.shared
        super().__init__(server=work.link.server, persist=True, dupefilter=work.queue.dupefilter)
        self.runtime = runtime
        self.work = work
        self.stats = runtime.stats
        self._buffer = deque()  # taken from the shared queue for this worker, places in the window reserved
        self._again = RetryLane(runtime)
        self._popping = False
        self._pump_call = None
        self._idle_poll = 0
        self._closing = False
        work.on_queued = self._queued

    @classmethod
    def from_crawler(cls, crawler):
        from farm.runtime import FarmRuntime

        return cls(FarmRuntime.of(crawler))

    def open(self, spider):
        self.spider = spider
        self.queue = self.work.queue
        self.runtime.start()  # the crawl's writer process and threads: the first step that needs them
        return self.work.start()

    def close(self, reason):
        self._closing = True
        if self._pump_call is not None and self._pump_call.active():
            self._pump_call.cancel()

    def __len__(self) -> int:
        return len(self._buffer) + len(self._again)

    def has_pending_requests(self) -> bool:
        # not a pop under way: each empty next_request starts one, and counting it would keep the
        # engine from ever being idle; whether the shared queue holds work is weighed at idle
        return bool(self._buffer or self._again)

    def enqueue_request(self, request) -> bool:
        if "farm_lease" in request.meta and self._again.offer(request):
            return True
        self.work.push(request)
        self.stats.inc_value("scheduler/enqueued/redis")
        return True

    def next_request(self):
        runtime = self.runtime
        request = self._again.next_request()
        if request is not None or self._again:  # one to go, or one waiting for its turn
            return request
        window = runtime.window
        while self._buffer:
            request = self._buffer[0]
            if not still_wanted(runtime, request):
                self._buffer.popleft()
                continue
            lease, page = request.meta["farm_lease"], request.meta["farm_page"]
            if not window.has_room(lease.key, page):
                self.stats.inc_value("farm/window/full")
                return None  # the window wakes the engine when a page leaves it
            wait = take_proxy(runtime.proxies, request)
            if wait > 0:
                runtime.wake_in(wait)
                return None
            self._buffer.popleft()
            window.enter(lease.key, page)
            if len(self._buffer) <= self.prefetch // 2:
                self._pump()
            self.stats.inc_value("scheduler/dequeued/redis")
            return request
        self._pump()
        return None

    # --- the pump ------------------------------------------------------------------------

    @property
    def prefetch(self) -> int:
        return self.runtime.window.size

    def _queued(self):
        """This worker's own requests reached the shared queue: take them now, not at the next idle poll."""
        self._idle_poll = 0
        if self._pump_call is not None and self._pump_call.active():
            self._pump()

    def _pump(self):
        room = self.prefetch - len(self._buffer)
        if self._popping or self._closing or room <= 0:
            return
        if self._pump_call is not None and self._pump_call.active():
            self._pump_call.cancel()
        self._pump_call = None
        self._popping = True
        queue, pace = self.work.queue, self.runtime.pace
        # the pop carries the site's pace (written back if Redis lost it) and its call id (made again
        # after a lost reply, it answers the requests it took: none is stranded in the in-flight set)
        d = self.work.link.run(queue.pop_many, room, pace.interval, pace.penalty, queue.new_call())
        d.addCallback(self._popped)
        d.addErrback(self.work._failed, "taking requests from the shared queue")
        d.addBoth(self._pumped)

    def _pumped(self, _):
        self._popping = False

    def _popped(self, result):
        wait, taken = result
        runtime = self.runtime
        self.stats.inc_value("farm/shared/pops")
        self.stats.inc_value("farm/shared/taken", len(taken))
        for item in taken:
            request = item.request
            if isinstance(request, BadPayload):
                self.stats.inc_value("farm/shared/bad_payload")
                logger.error("farm: refused a queued payload that is not a farm request (id %s): %s", item.id, request)
                self.work.ack(item.id)
                continue
            lease, page = request.meta["farm_lease"], request.meta["farm_page"]
            if (lease.key, page) in self.work.taken:
                # a second copy of a page this worker holds (queued again by a rebuild after
                # Redis lost everything): the first settles the page; this one is done with now
                self.stats.inc_value("farm/shared/duplicate")
                self.work.ack(item.id)
                continue
            # another worker's keyword, if not held here: handled here page by page
            run = runtime.registry.add(lease, shared=True, owned=False)
            run.taken(page)
            self.work.taken[(lease.key, page)] = item.id
            self._buffer.append(request)
        if taken:
            self._idle_poll = 0
            runtime.wake()
            if len(self._buffer) <= self.prefetch // 2:  # else next_request pumps when it is
                self._later(0)  # (topping up at once made pops of one or two requests, each a round trip)
        elif wait > 0:
            self._later(wait)
        else:
            self._later(IDLE_POLLS[min(self._idle_poll, len(IDLE_POLLS) - 1)])
            self._idle_poll += 1

    def _later(self, seconds):
        if self._closing:
            return
        if self._pump_call is not None and self._pump_call.active():
            return
        self._pump_call = reactor.callLater(seconds, self._pump_now)

    def _pump_now(self):
        self._pump_call = None
        self._pump()
