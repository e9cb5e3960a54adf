"""One worker's part in work shared through Redis: it joins, beats, ends and leaves.

- **Heartbeat.** Every few seconds, one call (scripts/beat.lua): this worker is alive;
  keywords it owns that other workers ended, or left with nothing open (its inbox);
  workers silent for FARM_WORKER_TIMEOUT have their in-flight requests put back and
  their keywords adopted by this one.
- **Claims.** A claim commits in the keyword table before its leases are listed in
  Redis; a worker killed between the two would leave keywords no survivor knows of.
  So a worker marks itself as taking keywords on before it claims, and whoever
  finds it stopped takes over what the keyword table says it holds. While a worker
  is taking keywords on, the others do not end. The mark stays from one claim to the
  next (a claim is one round trip to Redis: listing what it took) and goes when a claim
  finds nothing: a worker still claiming keeps the others waiting, one done does not.

Its other jobs each have a module: what it sends, in order (farm.crawl.backends.redis.sends);
the stall look and adopting a stopped worker's keywords (.adoption); the rebuild after Redis
lost everything (.rebuild).
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any, TypeVar

from sqlalchemy.exc import DBAPIError
from twisted.internet.defer import Deferred, succeed
from twisted.internet.task import LoopingCall

from farm.crawl.backends.base import Outcome, PageSpider, page_spider
from farm.crawl.backends.redis.adoption import Adoption
from farm.crawl.backends.redis.rebuild import Rebuild
from farm.crawl.backends.redis.sends import Sends
from farm.errors import RedisUnreachable

if TYPE_CHECKING:
    from scrapy.crawler import Crawler
    from scrapy.statscollectors import StatsCollector
    from twisted.internet.interfaces import IDelayedCall
    from twisted.python.failure import Failure

    from farm.crawl.backends.base import KeywordBook, LeaseKey
    from farm.crawl.backends.redis.link import RedisLink
    from farm.crawl.backends.redis.queue import Beat, SharedQueue
    from farm.crawl.backends.redis.sends import Op
    from farm.state.lease import Lease
    from farm.state.store import KeywordStore

logger = logging.getLogger(__name__)

_T = TypeVar("_T")

OWNER_CHECK_TICKS = 5  # heartbeats between the owner's look at its keywords' open requests
LOOK = "look"  # an inbox note: a keyword of this worker's was left with nothing open elsewhere (scripts/send.lua)


class SharedWork(Sends, Adoption, Rebuild):
    """This worker's membership in the shared work: its state, its heartbeat, its claims and ends."""

    def __init__(
        self,
        crawler: Crawler,
        link: RedisLink,
        queue: SharedQueue,
        store: KeywordStore,
        registry: KeywordBook,
        worker_timeout: float,
        *,
        run_db: Callable[..., Deferred[Any]],
        on_lost: Callable[[str], object] | None,
        on_queued: Callable[[], None],
        resuming: set[tuple[int, int]] | None = None,
    ) -> None:
        self.crawler = crawler
        self.link = link
        self.queue = queue
        self.store = store
        self.run_db = run_db  # the crawl's database thread
        self.registry = registry  # farm.crawl.registry.KeywordRegistry: the keywords this crawl holds
        self.runs: Mapping[LeaseKey, Any] = registry.runs
        self.worker_timeout = worker_timeout
        self.stats: StatsCollector = crawler.stats
        self.on_lost = on_lost  # Redis lost for longer than FARM_OUTAGE_GRACE: closes the crawl
        self.busy = True  # whether the shared queue or any worker's in-flight set holds requests (last look)
        self._adoptions: set[Deferred[Any]] = (
            set()
        )  # Deferreds of keywords being adopted (looked up in the keyword table)
        self._closing = False  # the crawl is closing: it adopts nothing more
        self._keep_listed = False  # it closes with keywords it could not release (keep_listed)
        self.epoch: str | None = None
        self.taken: dict[tuple[tuple[int, int], int], str] = {}  # (lease key, page) -> its id in the shared queue
        # (lease key, page) -> (lease, priority, payload) of each taken: written back should Redis lose its state
        self.held: dict[tuple[tuple[int, int], int], tuple[str, int, bytes]] = {}
        self._written_back = False  # what it holds is written back since Redis lost its state (.rebuild)
        self._live_before: set[str] = set()  # the live workers at the last heartbeat under this epoch
        self._ops: list[Op] = []  # ("push", request) | ("ack", id) | ("end", ...) ..., in order
        self._acked: dict[str, tuple[str, str]] = {}  # id -> (its lease, '1' when owned here): acks on their way
        self._flush_call: IDelayedCall | None = None
        self._sending: Deferred[Any] | None = None  # the send on its way to Redis, if any
        self.on_queued = on_queued  # requests of this worker's are in the shared queue (the backend's pump)
        self._beat = LoopingCall(self._heartbeat)
        self.beat_interval = max(0.2, worker_timeout / 6)
        self._beating: Deferred[Any] | None = None
        self._ticks = 0
        self._rebuilding = False
        self._marked = False  # Redis marks this worker as taking keywords on (claiming, and between claims)
        # JOBDIR: the leases (id, token) of the checkpoint this worker resumes from under the id it had
        # (set before start), else None; once started, the leases other workers own, which the lease
        # middleware must not take back
        self.resuming: set[tuple[int, int]] | None = resuming
        self.others: set[tuple[int, int]] = set()
        link.on_connect(self._connected)  # each new connection: did Redis go back in time? (.rebuild)

    @property
    def spider(self) -> PageSpider:
        """The crawl's spider: a LeaseSpider (the backend serves farm's only), open before the work starts."""
        return page_spider(self.crawler)

    # --- ends ------------------------------------------------------------------------------

    def ended(self, lease: Lease, outcome: str) -> None:
        """The lease's keyword ended here: drop its queued requests, tell its owner (sent in order, after
        the acknowledgements of its pages)."""
        self._ops.append(("end", (lease.name, outcome)))
        self._soon()

    def claiming(self) -> Deferred[None]:
        """Before a claim: a Deferred that fires once Redis says this worker is taking keywords on (at once
        when it says so already, since an earlier claim)."""
        if self._marked:
            return succeed(None)
        self._marked = True
        return self.link.run(self.queue.claiming)

    def hold(self, leases: list[Lease], claimed: bool = False) -> None:
        """List these leases as this worker's; ``claimed``: all its claim took. A claim that took nothing
        ends this worker's taking keywords on (a claim that took some is followed by another)."""
        taken_from = None
        if claimed and not leases:
            taken_from, self._marked = self.queue.worker, False
        self.list_held([lease.name for lease in leases], taken_from)

    def list_held(self, names: list[str], taken_from: str | None = None) -> None:
        """List these leases as this worker's, before the requests queued after (sent in order);
        ``taken_from``: the worker this one is done taking on."""
        if names or taken_from is not None:
            self._ops.append(("hold", [taken_from or "", *names]))
            self._soon()

    # --- heartbeat ---------------------------------------------------------------------------

    def start(self) -> Deferred[None]:
        self.epoch = None
        self._marked = True  # the join marks it: it takes its own keywords back (see _join)
        d = self.link.run(self._join).addCallback(self._started)
        d.addErrback(self._failed, "joining the shared work")
        return d

    def _join(self) -> tuple[str, set[tuple[int, int]], set[str]]:
        if self.queue.went_back():  # the link's first connection was made before it was listened to
            self._went_back()
        # a worker restarted under the same id (FARM_CRAWLER_ID), before it pops: what it had taken
        # and not settled goes back in the queue (no survivor would ever put it back: this worker's
        # heartbeat goes on, and its in-flight set would keep every worker from ending)
        self.queue.leave()
        self.queue.claiming()  # it takes its keywords back: the lease middleware (JOBDIR), or take_over
        others = set()
        if self.resuming is not None:
            # the leases it held end, so that their requests are dropped at the pop, not fetched to
            # be fenced; the lease middleware takes the keywords back under new tokens
            others = self.queue.adopted_by_others()
            for name in self.queue.own_leases() | {f"{kid}:{token}" for kid, token in self.resuming - others}:
                self.queue.ended(name, "lost")
        inherited = self.queue.taking() - {self.queue.worker}  # stopped workers it was taking on
        return self.queue.start_epoch(), others, inherited

    def _started(self, result: tuple[str, set[tuple[int, int]], set[str]]) -> None:
        epoch, self.others, inherited = result
        self.epoch = epoch
        self._beat.start(self.beat_interval, now=True)
        if self.resuming is None:  # without its checkpoint, it adopts its keywords as a survivor would
            self.take_over(self.queue.worker)
        for stopped in inherited:
            self.take_over(stopped)

    def stop(self) -> None:
        """Stop beating; what waits to be sent (ends among it) goes to Redis before the link closes."""
        if self._beat.running:
            self._beat.stop()
        if self._ops:
            self.flush()

    def _heartbeat(self) -> None:
        if self._beating is not None:
            return
        self._ticks += 1
        maintain = self._ticks % 3 == 1 and not self._closing
        # one call (its id made here: made again after a lost reply, it reads the inbox and adopts once)
        timeout = self.worker_timeout if maintain else None
        # whether work is left matters only to a worker that holds no keyword (one that does, does not end)
        look = not self.runs
        self._beating = self.link.run(self._beat_once, timeout, look, self.queue.new_call())
        self._beating.addCallback(self._beaten)
        self._beating.addErrback(self._failed, "the heartbeat")
        self._beating.addBoth(self._beat_done)

    def _beat_done(self, result: _T) -> _T:
        self._beating = None
        return result

    def _beat_once(self, timeout: float | None, look: bool, call: int) -> tuple[Beat, set[str]]:
        beat = self.queue.beat(timeout, look, call=call)
        return beat, self.queue.live_seen

    def _beaten(self, result: tuple[Beat, set[str]]) -> None:
        beat, live = result
        self.busy = beat.busy
        if beat.epoch != self.epoch:
            self._lost_everything(beat.epoch)
            return
        self._live_before = live
        for lease_name, outcome in beat.inbox:
            run = self._run_named(lease_name)
            if run is None or not run.owned or run.over:
                continue
            if outcome == LOOK:  # another worker left it with nothing open: is it done, or stalled?
                self.look(lease_name)
            else:
                self.registry.end(run.lease, Outcome(outcome, elsewhere=True))
        adopted, look_up = beat.adopted, beat.look_up
        if beat.requeued or adopted or look_up:  # look_up names every worker found stopped
            self.stats.inc_value("farm/shared/requeued", beat.requeued)
            logger.warning(
                "farm: a worker stopped (%s): %d of its requests back in the queue, %d keyword(s) "
                "adopted; the keyword table says what else it held",
                ", ".join(look_up),
                beat.requeued,
                len(adopted),
            )
        if self._closing:
            # taken over as the crawl closes: this worker stays listed as taking them on (see leave),
            # and a survivor that finds it silent takes them on in turn
            return
        for lease_name in adopted:
            self._adopt(lease_name)
        for stopped in look_up:
            self.take_over(stopped)
        if self._ticks % OWNER_CHECK_TICKS == 0:
            for run in list(self.runs.values()):
                if run.owned and run.live:
                    self.look(run.lease.name)

    # --- ending -----------------------------------------------------------------------------

    def keep_listed(self) -> None:
        """The crawl closes with keywords it could not release (the database is gone): at ``leave``,
        this worker stays in the live set, taking keywords on, so that a worker that finds it silent
        for FARM_WORKER_TIMEOUT takes them over from the keyword table."""
        self._keep_listed = True

    def leave(self) -> Deferred[Any]:
        """A clean close: flush, then put back what this worker took and did not settle."""
        self.stop()
        d = self.flush()
        d.addCallback(lambda _: self.link.run(self._leave))
        return d

    def _leave(self) -> int:
        back = self.queue.leave()
        if self._keep_listed:
            self.queue.claiming()  # live once more, its heartbeat stopped: a survivor looks it up
        return back

    def _failed(self, failure: Failure, what: str) -> None:
        self.stats.inc_value("farm/shared/error")
        if isinstance(failure.value, RedisUnreachable):
            logger.error("farm: %s failed: %s", what, failure.getErrorMessage())
        elif isinstance(failure.value, DBAPIError):  # the database lost past the outage grace: not a bug either
            error = failure.value.orig or failure.value
            logger.error(
                "farm: %s failed: the database: %s",
                what,
                (str(error).strip().splitlines() or [type(error).__name__])[0],
            )
        else:  # a bug, not Redis: say where
            assert failure.type is not None and failure.value is not None  # a Failure holds its exception
            traceback = failure.getTracebackObject()  # type: ignore[no-untyped-call]  # Twisted leaves it untyped
            logger.error("farm: %s failed", what, exc_info=(failure.type, failure.value, traceback))
        if self.on_lost is not None:
            self.on_lost(failure.getErrorMessage())
