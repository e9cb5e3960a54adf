"""Out, in order: the requests a worker queues, the acknowledgements of the pages it settled, the ends.

They leave in the order the crawl made them (a page's follow-ups before its acknowledgement), in
batches, on the Redis link's thread, one send at a time: what the crawl makes while one is on its
way goes in the next. A send is one call to Redis (scripts/send.lua), however many runs of pushes,
acknowledgements, ends and looks it holds. An acknowledgement that leaves a keyword with nothing open
anywhere starts the stall look (farm.crawl.backends.redis.adoption).

A part of farm.crawl.backends.redis.membership.SharedWork, which holds the state it uses.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any, TypeVar

if TYPE_CHECKING:
    from collections.abc import Callable, Mapping

    from scrapy import Request
    from scrapy.statscollectors import StatsCollector
    from twisted.internet.defer import Deferred
    from twisted.internet.interfaces import IDelayedCall
    from twisted.python.failure import Failure

    from farm.crawl.backends.base import LeaseKey
    from farm.crawl.backends.redis.link import RedisLink
    from farm.crawl.backends.redis.queue import SharedQueue
    from farm.state.lease import Lease

_T = TypeVar("_T")
# (kind, value): ("push" or "requeue", a request), ("ack", its id), ("end", (lease, outcome)),
# ("hold", [the worker taken on, lease, ...]), ("look", a lease), ("seen", (lease, page)): a page done
Op = tuple[str, Any]
Batch = tuple[str, list[Any]]  # a run of ops of one kind: (kind, their values, in order)

# Runs (of pushes, acknowledgements, ends or looks) in one send at most: a send is one script, and Redis
# does nothing else while it runs; the rest goes in the next send.
SEND_BATCHES = 64

logger = logging.getLogger(__name__)


class Sends:
    """Pushes, acknowledgements, ends and looks, sent in order (on SharedWork: ``_ops``, ``_flush_call``,
    ``_sending``, ``_acked``)."""

    if TYPE_CHECKING:  # SharedWork's, used here
        link: RedisLink
        queue: SharedQueue
        stats: StatsCollector
        runs: Mapping[LeaseKey, Any]
        taken: dict[tuple[LeaseKey, int], str]
        held: dict[tuple[LeaseKey, int], tuple[str, int, bytes]]
        epoch: str | None
        on_queued: Callable[[], None]
        _ops: list[Op]
        _acked: dict[str, tuple[str, str]]
        _flush_call: IDelayedCall | None
        _sending: Deferred[Any] | None

        def check_stall(self, lease_name: str, lease: Lease | None = None) -> None: ...

        def _failed(self, failure: Failure, what: str) -> None: ...

    def push(self, request: Request) -> None:
        self._ops.append(("push", request))
        self._soon()

    def ack(self, request_id: str, lease: str = "", mine: bool = False) -> None:
        """Acknowledge a request taken; ``lease``: its lease's name, '' when not known (read from Redis);
        ``mine``: this worker owns the lease (another's is told, should nothing be left open)."""
        if lease:
            self._acked[request_id] = (lease, "1" if mine else "")
        self._ops.append(("ack", request_id))
        self._soon()

    def settled(self, lease_key: LeaseKey, page: int) -> None:
        """The page taken from the shared queue is recorded, or given up: acknowledge it."""
        self.held.pop((lease_key, page), None)
        request_id = self.taken.pop((lease_key, page), None)
        if request_id is not None:
            logger.debug("farm: settled page %s of %s:%s (id %s)", page, *lease_key, request_id)
            run = self.runs.get(lease_key)
            self.ack(request_id, f"{lease_key[0]}:{lease_key[1]}", run is not None and run.owned)

    def _soon(self) -> None:
        # one send at a time: what comes meanwhile goes in the next (each send is a round trip on the
        # link's thread, under the crawl's GIL; one a reactor turn made sends of one or two acks)
        if self._flush_call is None and self._sending is None:
            from twisted.internet import reactor

            self._flush_call = reactor.callLater(0, self.flush)

    def _send_done(self, result: _T, sending: Deferred[Any]) -> _T:
        if self._sending is sending:
            self._sending = None
            if self._ops:
                self._soon()
        return result

    def flush(self) -> Deferred[Any]:
        """Send what is waiting; a Deferred that fires once it is in Redis."""
        if self._flush_call is not None and self._flush_call.active():
            self._flush_call.cancel()  # called before its turn (leaving): nothing is left for it
        self._flush_call = None
        ops, self._ops = self._ops, []
        if not ops:
            return self.link.run(lambda: None)
        batches: list[Batch] = []
        kind = ops[0][0]
        batch: list[Any] = []
        for i, (op, value) in enumerate(ops):
            if (op != kind or op == "hold") and batch:  # each listing its own run: it names whom it ends
                batches.append((kind, batch))
                batch = []
                if len(batches) == SEND_BATCHES:  # the rest in the next send
                    self._ops[:0] = ops[i:]
                    break
            kind = op
            batch.append(value)
        else:
            batches.append((kind, batch))
        self.stats.inc_value("farm/shared/sends")
        # the send has its call id before it leaves: made again after a lost reply, it answers as it
        # did and queues or settles nothing twice
        done = self._sending = self.link.run(self._send, batches, self.queue.new_call())
        done.addCallback(self._sent, batches)
        done.addErrback(self._failed, "sending requests and acknowledgements")
        done.addBoth(self._send_done, done)
        return done

    def _send(self, batches: list[Batch], call: int) -> tuple[int, list[str], int]:
        runs: list[tuple[str, Any]] = []
        for kind, batch in batches:
            if kind == "push":
                # a rebuild's pushes ("requeue") go in before the new epoch is set; the others only under
                # this worker's epoch: until the rebuild, a page another worker holds may not be written back
                runs.append(("push", batch))
            elif kind == "ack":  # with the lease of each, as the worker knows it
                runs.append(("ack", [(rid, *self._acked.get(rid, ("", ""))) for rid in batch]))
            elif kind == "hold":
                runs.append(("hold", batch[0]))
            else:
                runs.append((kind, batch))
        replies = self.queue.send(runs, call, self.epoch or "")
        queued = 0  # how many requests went in the queue
        empty: list[str] = []  # leases with no request open anywhere
        refused = 0  # requests pushed under an epoch Redis no longer holds
        for (kind, batch), reply in zip(batches, replies):
            if kind in ("push", "requeue"):
                if reply is None:
                    refused += len(batch)
                    continue
                queued += sum(reply)
                self.stats.inc_value("farm/shared/queued", sum(reply))
                self.stats.inc_value("farm/shared/seen", len(reply) - sum(reply))
            elif kind == "ack":
                empty += [lease for lease, left in reply if left <= 0]
            elif kind == "look":  # after everything this worker queued before it
                empty += [lease for lease, left in zip(batch, reply) if left <= 0]
        return queued, empty, refused

    def _sent(self, result: tuple[int, list[str], int], batches: list[Batch]) -> None:
        for kind, batch in batches:
            if kind == "ack":
                for request_id in batch:
                    self._acked.pop(request_id, None)
        queued, empty, refused = result
        if refused:
            # not pushed again: its page may be done by now (a push whose reply was lost, made again on the
            # new state), which the new fingerprints do not know. The rebuild, after it the stall look,
            # read the keyword table
            self.stats.inc_value("farm/shared/refused", refused)
        if queued:
            self.on_queued()
        for lease in dict.fromkeys(empty):
            self.check_stall(lease)

    def look(self, lease_name: str) -> None:
        """Check, after what this worker queued so far, whether anything is open for the lease."""
        self._ops.append(("look", lease_name))
        self._soon()
