"""Nothing left behind: the stall look, and adopting a stopped worker's keywords.

- **Stalls.** An acknowledgement that leaves a keyword with no request open anywhere
  (queued or in any worker's hands) makes this worker look at the keyword table: the
  pages still missing are queued again, or the keyword is completed. The owner of a
  keyword looks too, now and then: a keyword is never left crawling with nothing on
  its way, whichever worker held what.
- **Adoption.** Workers the heartbeat finds silent for FARM_WORKER_TIMEOUT have their
  keywords adopted by this one, at once, without waiting for FARM_LEASE_TIMEOUT; the keyword
  table says what else a stopped worker held (its claim may have committed before its
  leases were listed in Redis).

A part of farm.crawl.backends.redis.membership.SharedWork, which holds the state it uses.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any, TypeVar

from twisted.internet.defer import DeferredList

from farm.crawl.backends.base import Outcome
from farm.crawl.meta import FarmMeta

if TYPE_CHECKING:
    from collections.abc import Callable, Mapping

    from scrapy import Request
    from scrapy.statscollectors import StatsCollector
    from twisted.internet.defer import Deferred
    from twisted.python.failure import Failure

    from farm.crawl.backends.base import KeywordBook, LeaseKey, PageSpider
    from farm.crawl.backends.redis.queue import SharedQueue
    from farm.state.lease import Lease
    from farm.state.reads import LeaseProgress
    from farm.state.store import KeywordStore

logger = logging.getLogger(__name__)

_OUTCOMES = {"completed": "completed", "failed": "failed", "partial": "released"}
_T = TypeVar("_T")


class Adoption:
    """The stall look and adoptions (on SharedWork: ``_adoptions``, ``_closing``)."""

    if TYPE_CHECKING:  # SharedWork's, used here
        queue: SharedQueue
        store: KeywordStore
        run_db: Callable[..., Deferred[Any]]
        registry: KeywordBook
        runs: Mapping[LeaseKey, Any]
        stats: StatsCollector
        _adoptions: set[Deferred[Any]]
        _closing: bool

        @property
        def spider(self) -> PageSpider: ...

        def push(self, request: Request) -> None: ...

        def ended(self, lease: Lease, outcome: str) -> None: ...

        def look(self, lease_name: str) -> None: ...

        def flush(self) -> Deferred[Any]: ...

        def list_held(self, names: list[str], taken_from: str | None = None) -> None: ...

        def _failed(self, failure: Failure, what: str) -> None: ...

    # --- stalls --------------------------------------------------------------------------

    def check_stall(self, lease_name: str, lease: Lease | None = None) -> None:
        """Nothing is open for the lease anywhere: queue its missing pages, or complete it."""
        if self._closing:
            # the acks sent as the crawl closes leave keywords with nothing open: their owner, or the
            # worker that adopts them, looks; a read here would outlive the crawl (and, the database
            # gone, fail after it closed)
            return
        run = self._run_named(lease_name)
        lease = lease or (run.lease if run is not None else None)
        if lease is None:
            return  # not known here: its owner looks after it
        d = self.run_db(self.store.lease_progress, lease)
        d.addCallback(self._stalled, lease)
        d.addErrback(self._failed, "reading a keyword's progress")

    def _stalled(self, progress: LeaseProgress | None, lease: Lease) -> None:
        if progress is None or progress.status != "crawling":
            # it ended (written by whichever worker), or was claimed again: if this worker owns it and
            # was not told (the owner map went with a flush), it learns here
            run = self.runs.get(lease.key)
            if run is not None and run.owned and not run.over and run.live:
                outcome = "lost" if progress is None else _OUTCOMES.get(progress.status, "released")
                self.ended(lease, outcome)  # Redis was not told either: it forgets whose it was
                self.registry.end(lease, Outcome(outcome, elsewhere=True))
            return
        missing = progress.missing()
        spider = self.spider
        if missing:
            self.stats.inc_value("farm/shared/pages_requested_again", len(missing))
            logger.info(
                "farm: %s/%s (#%s) had nothing queued anywhere; queueing pages %s",
                lease.city,
                lease.job,
                lease.id,
                missing,
            )
            for page in missing:
                request = spider.page_request(lease, page)
                # asked for anew, once per watermark: two workers that both find it stalled queue it once
                FarmMeta.of(request).again = f"stall{progress.watermark}"
                self.push(request)
            return
        self.stats.inc_value("farm/keyword/exhausted")
        self.registry.end(lease, Outcome("completed", "no page left to fetch"))

    def _run_named(self, lease_name: str) -> Any:
        keyword_id, _, token = lease_name.partition(":")
        return self.runs.get((int(keyword_id), int(token)))

    # --- adoption --------------------------------------------------------------------------

    def _adopt(self, lease_name: str) -> None:
        keyword_id, _, token = lease_name.partition(":")
        d = self.run_db(self.store.lease, self.spider.name, int(keyword_id), int(token))
        d.addCallback(self._adopted)
        d.addErrback(self._failed, "adopting a keyword")
        self._track(d)

    def take_over(self, stopped: str) -> None:
        """Adopt the keywords the keyword table says the stopped worker holds (its claim may have
        committed without its leases listed in Redis)."""
        spider = self.spider.name
        d = self.run_db(self.store.adopt_held, spider, stopped, self.queue.worker)
        d.addCallback(self._taken_over, stopped)
        d.addErrback(self._failed, "adopting a stopped worker's keywords")
        self._track(d)

    def _taken_over(self, leases: list[Lease], stopped: str) -> Deferred[Any]:
        if leases:
            logger.info("farm: %d keyword(s) held by %s in the keyword table, adopted", len(leases), stopped)
        for lease in leases:
            self._adopted(lease)
        # its own keywords taken back at the join: its mark stays until a claim finds nothing (see hold)
        self.list_held([lease.name for lease in leases], None if stopped == self.queue.worker else stopped)
        return self.flush()

    def _track(self, d: Deferred[Any]) -> None:
        self._adoptions.add(d)
        d.addBoth(self._untrack, d)

    def _untrack(self, result: _T, d: Deferred[Any]) -> _T:
        self._adoptions.discard(d)
        return result

    @property
    def adopting(self) -> bool:
        """Keywords are being adopted (runs this worker is about to hold), or the queue rebuilt."""
        return bool(self._adoptions)

    def closing(self) -> Deferred[Any]:
        """The crawl closes: nothing more is adopted; a Deferred that fires once the adoptions under
        way have made their runs (which the crawl then releases with its own)."""
        self._closing = True
        return DeferredList(list(self._adoptions), consumeErrors=True)

    def _adopted(self, lease: Lease | None) -> None:
        if lease is None:
            return  # ended meanwhile
        handled_here = lease.key in self.runs
        self.registry.add(lease, owned=True)
        if handled_here:  # its pages were being handled here: now its keyword is this worker's too
            return
        self.stats.inc_value("farm/shared/adopted")
        logger.info("farm: adopted %s/%s (#%s) from a stopped worker", lease.city, lease.job, lease.id)
        self.look(lease.name)  # its requests may be back in the queue: only if none is open anywhere
