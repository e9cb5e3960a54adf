"""Redis lost everything, or went back in time: the queue rebuilt from the keyword table.

Redis is a cache. A missing epoch means Redis lost everything (FLUSHALL, a restart without
persistence): one worker, under a lock, queues again the missing pages of every keyword being
crawled, from the keyword table; the others wait for the new epoch. Redis restarted from an older
snapshot (RDB, its default persistence) or a replica promoted in its place holds the state of some
moment past, read as current by every script: the first worker to connect to it drops that state
(farm.crawl.backends.redis.queue.went_back, before any other call on the new connection), and the
rebuild follows as after a flush. A rebuild is work in
progress: the crawl does not close before it ends, and a worker already closing leaves it to
the others.

A part of farm.crawl.backends.redis.membership.SharedWork, which holds the state it uses.
"""

from __future__ import annotations

import logging
import time
import uuid
from typing import TYPE_CHECKING, Any, cast

from twisted.internet import reactor
from twisted.internet.interfaces import IReactorFromThreads
from twisted.internet.task import deferLater

from farm.crawl.backends.redis.queue import FRESH_EPOCH

if TYPE_CHECKING:
    from collections.abc import Callable, Mapping

    from scrapy.statscollectors import StatsCollector
    from twisted.internet.defer import Deferred
    from twisted.python.failure import Failure

    from farm.crawl.backends.base import LeaseKey, PageSpider
    from farm.crawl.backends.redis.link import Command, RedisLink
    from farm.crawl.backends.redis.queue import SharedQueue
    from farm.crawl.backends.redis.sends import Op
    from farm.state.lease import Lease
    from farm.state.reads import LeaseProgress
    from farm.state.store import KeywordStore

logger = logging.getLogger(__name__)

REBUILD_LOCK_SECONDS = 120


class Rebuild:
    """The rebuild after Redis lost everything (on SharedWork: ``_rebuilding``, ``epoch``)."""

    if TYPE_CHECKING:  # SharedWork's, used here
        link: RedisLink
        queue: SharedQueue
        store: KeywordStore
        run_db: Callable[..., Deferred[Any]]
        runs: Mapping[LeaseKey, Any]
        stats: StatsCollector
        worker_timeout: float
        beat_interval: float
        epoch: str | None
        taken: dict[tuple[LeaseKey, int], str]
        held: dict[tuple[LeaseKey, int], tuple[str, int, bytes]]
        _ops: list[Op]
        _live_before: set[str]
        _closing: bool
        _rebuilding: bool
        _written_back: bool
        _marked: bool

        @property
        def spider(self) -> PageSpider: ...

        def ack(self, request_id: str, lease: str = "", mine: bool = False) -> None: ...

        def flush(self) -> Deferred[Any]: ...

        def hold(self, leases: list[Lease], claimed: bool = False) -> None: ...

        def _track(self, d: Deferred[Any]) -> None: ...

        def _failed(self, failure: Failure, what: str) -> None: ...

    def _connected(self, command: Command) -> None:
        """A new connection to Redis (the link's thread): did Redis go back in time?"""
        if self.queue.went_back(command):
            self._went_back()

    def _went_back(self) -> None:
        logger.warning(
            "farm: Redis went back in time (another server holds the shared state: restarted from an older "
            "snapshot, or a replica promoted): that state is dropped, and the queue rebuilt from the keyword table"
        )
        # on the link's thread: the stat is counted on the reactor's (every reactor provides IReactorFromThreads,
        # though twisted.internet types ``reactor`` without it)
        cast(IReactorFromThreads, reactor).callFromThread(self.stats.inc_value, "farm/shared/went_back")

    def _lost_everything(self, epoch: str) -> None:
        if self._closing:
            # closing, it leaves the rebuild to the others: its link closes with the crawl, and a
            # rebuild cut short there would hold the lock, every other worker waiting on it
            return
        if not self._written_back:
            self._written_back = True
            self._write_back()
        if self._rebuilding:
            return
        self._rebuilding = True
        self.stats.inc_value("farm/shared/epoch_lost")
        logger.warning(
            "farm: the shared state in Redis is gone (flushed or restarted): rebuilding the queue "
            "from the keyword table"
        )
        d = self.link.run(self.queue.take_rebuild_lock, REBUILD_LOCK_SECONDS + self.worker_timeout)
        d.addCallback(self._rebuild)
        d.addErrback(self._failed, "rebuilding the shared queue")
        # until it is rebuilt, an empty Redis says nothing of the work left: the crawl does not close
        # (its link and database would close under the rebuild), and closing waits for it
        self._track(d)

    def _rebuild(self, locked: bool) -> Deferred[Any]:
        if not locked:
            d = self.link.run(self.queue.server.get, self.queue.k("epoch"))
            d.addCallback(self._rebuilt_elsewhere)
            return d
        written = self._all_written_back(time.monotonic())
        held = written.addCallback(lambda _: self.run_db(self.store.held_leases, self.spider.name))
        return held.addCallback(self._requeue_held)

    # --- what the workers hold -------------------------------------------------------------

    def _write_back(self) -> None:
        """Before the rebuild: the requests this worker holds (taken, being fetched, fetched and not yet
        recorded) written back into its in-flight set, so that none is queued again while it lives."""
        keys = [key for key in self.taken if key in self.held]
        held = [(self.taken[key], *self.held[key], key[1]) for key in keys]
        rows = [(rid, lease, page, priority, payload) for rid, lease, priority, payload, page in held]
        logger.debug("farm: writing back %s", [(lease, page) for _, lease, page, _, _ in rows])
        d = self.link.run(self.queue.write_back, rows, self.queue.new_call())
        d.addCallback(self._written, keys, [row[0] for row in rows])
        d.addErrback(self._failed, "writing back the requests this worker holds")
        self._track(d)  # the crawl does not close before they are in

    def _written(self, ids: list[str], keys: list[tuple[LeaseKey, int]], before: list[str]) -> None:
        self.stats.inc_value("farm/shared/written_back", len(keys))
        for key, old, new in zip(keys, before, ids):
            if self.taken.get(key) == old:
                self.taken[key] = new
            elif new != old:  # settled while it was written back: under its old id, which Redis lost
                self.ack(new)

    def _all_written_back(self, since: float) -> Deferred[Any]:
        """A Deferred that fires once every worker live before Redis lost its state, or since, wrote back
        what it holds, after two heartbeats at least (a worker that joined just before has beaten by then);
        or after FARM_WORKER_TIMEOUT: a worker silent that long is taken as stopped, as anywhere else."""
        d = self.link.run(self.queue.not_written_back, self._live_before)
        d.addCallback(self._written_back_yet, since)
        return d

    def _written_back_yet(self, missing: set[str], since: float) -> Deferred[Any] | None:
        waited = time.monotonic() - since
        if waited >= self.worker_timeout or (not missing and waited >= 2 * self.beat_interval):
            return None
        return deferLater(reactor, self.beat_interval, self._all_written_back, since)

    def _rebuilt_elsewhere(self, value: bytes | None) -> None:
        self._rebuilding = False
        epoch = value.decode() if value else ""
        if epoch and not epoch.startswith(
            FRESH_EPOCH
        ):  # else: the rebuilder is at work; the next heartbeat looks again
            self._new_epoch(epoch)
            self.hold([run.lease for run in self.runs.values() if run.owned and not run.over])

    def _requeue_held(self, held: list[tuple[Lease, str, LeaseProgress]]) -> Deferred[Any]:
        spider = self.spider
        by_holder: dict[str, list[str]] = {}
        for lease, holder, progress in held:
            by_holder.setdefault(holder, []).append(lease.name)
            logger.debug("farm: rebuilding %s: pages %s", lease.name, progress.missing())
            # the pages done are seen again: a worker that handles a page of another's keyword asks for all
            # its pages, and only the fingerprints keep those done from being fetched again
            for page in progress.done():
                self._ops.append(("seen", (lease.name, str(page))))
            for page in progress.missing():
                # through the fingerprints: a page a worker wrote back, or queued under the new state, is
                # not queued twice
                self._ops.append(("requeue", spider.page_request(lease, page)))
        self.stats.inc_value("farm/shared/rebuilt_keywords", len(held))
        done = self.flush()
        epoch = uuid.uuid4().hex  # chosen here: written again after a lost reply, it is the same epoch
        done.addCallback(lambda _: self.link.run(self.queue.new_epoch, epoch, by_holder))
        done.addCallback(self._rebuilt)
        return done

    def _rebuilt(self, epoch: str) -> None:
        self._rebuilding = False
        self._new_epoch(epoch)
        logger.info("farm: shared queue rebuilt from the keyword table")

    def _new_epoch(self, epoch: str) -> None:
        self.epoch = epoch
        self._written_back = False
        self._marked = False  # Redis lost it: the next claim marks this worker again
