"""The crawl's outbox: postings, page progress and keyword ends, in order, to the state writer.

Postings come from the pipeline; a page done comes from the progress extension,
always after every posting of that page; a keyword's end comes after every page
its keyword fetched. A frame carries postings and the pages and ends queued
after postings all in it or in an earlier frame; the writer commits each frame
in one transaction (postings, then pages, then ends), in order: so a page is
never recorded done while its postings could still be lost, an end never fences
a page fetched before it, and a kill at any moment loses neither.

Up to two frames are in flight, so that the writer has the next one at hand
while it commits one; what arrives meanwhile goes in the frame after (group
commit). A frame goes out when there is room if it has a page to record or
FARM_SQL_BATCH_SIZE postings, else FARM_SQL_FLUSH_INTERVAL seconds after its
first posting. An end goes out at once, as a page does.

The crawl's keyword claims go the same way, in the next frame out whatever it
carries (a claim waits for nothing the crawl wrote), and are made after its
writes: the state writer makes them, off the crawl's GIL (farm.writer).
"""

import logging
from collections.abc import Callable, Iterable
from typing import Any

from scrapy.statscollectors import StatsCollector
from twisted.internet import reactor
from twisted.internet.defer import Deferred, fail, succeed
from twisted.internet.interfaces import IDelayedCall
from twisted.python.failure import Failure

from farm.errors import WriteLost
from farm.state.lease import BatchResult, Lease, Outlook, PageWrite
from farm.writer.process import StateWriter

logger = logging.getLogger(__name__)

# Frames sent ahead of the writer's answers: while it commits one, the next is
# already in its pipe. More would only make each page wait behind more postings.
FRAMES_IN_FLIGHT = 2

PAGE, END, CLAIM = "page", "end", "claim"  # what an op asks of the writer


class Outbox:
    def __init__(
        self,
        writer: StateWriter | None,
        stats: StatsCollector,
        batch_size: int,
        flush_interval: float,
        on_lost: Callable[[str], None],
    ):
        self.writer = writer
        self.stats = stats
        self.batch_size = batch_size
        self.flush_interval = flush_interval
        self.on_lost = on_lost
        self.postings: list[bytes] = []
        # pages done, keyword ends and claims: (postings queued before it, PAGE, END or CLAIM,
        # its arguments, its reply)
        self.ops: list[tuple[int, str, tuple[Any, ...], Deferred[Any]]] = []
        self.lost: str | None = None
        self._in_flight = 0  # frames sent, not yet answered
        self._timer: IDelayedCall | None = None
        self._idle_waiters: list[Deferred[None]] = []

    def connect(self, writer: StateWriter) -> None:
        """The writer to send to, once spawned (nothing is sent before)."""
        self.writer = writer

    def add_posting(self, row: bytes) -> None:
        """A posting, encoded as a JSON object."""
        if self.lost is not None:
            return  # the crawl is closing: its pages are fetched again next time
        self.postings.append(row)
        if len(self.postings) >= self.batch_size:
            self._send()
        elif self._timer is None and not self._in_flight:
            self._timer = reactor.callLater(self.flush_interval, self._send, True)

    def page_done(
        self, lease: Lease, page: int, jobs: int, total_pages: int | None, site_total: int | None = None
    ) -> Deferred[PageWrite]:
        """Record the page done once its postings are committed; fires with its PageWrite.
        ``site_total``: the postings the site says the keyword holds, when told (farm.state.pagewrites)."""
        return self._queue(PAGE, (lease, page, jobs, total_pages, site_total))

    def end(self, lease: Lease, kind: str, message: str | None = None) -> Deferred[str | None]:
        """End the keyword (one of farm.state.lease.ENDS) after everything queued before;
        fires with the status written, or None when the lease was no longer current."""
        return self._queue(END, (lease, kind, message))

    def claim(
        self, source: str, crawler_id: str, n: int, skip_partial: frozenset[int], held: frozenset[tuple[int, int]]
    ) -> Deferred[tuple[list[Lease], Outlook | None]]:
        """KeywordStore.claim in the next frame; fires with (leases, None), or with ([], its
        Outlook) when it took none."""
        return self._queue(CLAIM, (source, crawler_id, n, skip_partial, held), after_postings=False)

    def _queue(self, kind: str, args: tuple[Any, ...], after_postings: bool = True) -> Deferred[Any]:
        if self.lost is not None:
            return fail(WriteLost(self.lost))
        reply: Deferred[Any] = Deferred()
        self.ops.append((len(self.postings) if after_postings else 0, kind, args, reply))
        self._send()
        return reply

    def drain(self) -> Deferred[None]:
        """Fires once everything queued so far is committed (or lost)."""
        self._send(now=True)
        if not self._in_flight:
            return succeed(None)
        done: Deferred[None] = Deferred()
        self._idle_waiters.append(done)
        return done

    def close(self) -> None:
        """The crawl is over (drained first): nothing more goes out."""
        if self._timer is not None and self._timer.active():
            self._timer.cancel()
        self._timer = None

    @property
    def queued(self) -> int:
        return len(self.postings) + len(self.ops)

    @property
    def in_flight(self) -> int:
        """Frames sent, not yet answered."""
        return self._in_flight

    def _send(self, now: bool = False) -> None:
        if self._timer is not None:
            if self._timer.active():
                self._timer.cancel()
            self._timer = None
        while self.lost is None and self._in_flight < FRAMES_IN_FLIGHT:
            if not self.ops and not (self.postings and (now or len(self.postings) >= self.batch_size)):
                if self.postings and not self._in_flight:
                    self._timer = reactor.callLater(self.flush_interval, self._send, True)
                return
            postings, self.postings = self.postings[: self.batch_size], self.postings[self.batch_size :]
            sent = len(postings)
            ops = [op for op in self.ops if op[0] <= sent]
            self.ops = [(before - sent, of, args, reply) for before, of, args, reply in self.ops if before > sent]
            pages, ends, claims = (
                [(args, reply) for _, of, args, reply in ops if of == kind] for kind in (PAGE, END, CLAIM)
            )
            self._in_flight += 1
            assert self.writer is not None, "nothing is queued before the parts connect the writer"
            written = self.writer.write(postings, *([args for args, _ in each] for each in (pages, ends, claims)))
            written.addBoth(self._written, sent, *([reply for _, reply in each] for each in (pages, ends, claims)))

    def _written(
        self,
        result: BatchResult | Failure,
        sent: int,
        page_replies: list[Deferred[Any]],
        end_replies: list[Deferred[Any]],
        claim_replies: list[Deferred[Any]],
    ) -> None:
        self._in_flight -= 1
        replies = page_replies + end_replies + claim_replies
        if isinstance(result, Failure):
            if self.lost is None:
                self._lose(result, sent, replies)
            else:  # a frame sent behind the one that was lost
                for reply in replies:
                    reply.errback(WriteLost(self.lost))
        else:
            self.stats.inc_value("farm/sql/batches")
            self.stats.inc_value("farm/sql/upserted", result.postings)
            self._rejected(result.rejected)
            self._normalised(result.normalised)
            for reply, page_write in zip(page_replies, result.pages):
                reply.callback(page_write)
            for reply, status in zip(end_replies, result.ends):
                reply.callback(status)
            for reply, claimed in zip(claim_replies, result.claims):
                reply.callback(claimed)
            self._send(now=bool(self._idle_waiters))  # a drain is waiting: no delay
        if not self._in_flight and (self.lost is not None or not self.queued):
            waiters, self._idle_waiters = self._idle_waiters, []
            for waiter in waiters:
                waiter.callback(None)

    def _rejected(self, rejected: Iterable[tuple[str, str, str]]) -> None:
        # the database refused these rows; the rest of their pages were stored
        for source, job_id, reason in rejected:
            self.stats.inc_value("farm/posting/rejected")
            logger.warning("farm: the database refused posting %s %s: %s", source, job_id, reason)

    def _normalised(self, normalised: dict[str, int]) -> None:
        # fields the writer changed to fit their columns (cut, NUL removed, an impossible time)
        # and texts counted under a stat of their own (farm/salary/unparsed)
        for name, count in normalised.items():
            self.stats.inc_value(name if name.startswith("farm/") else f"farm/posting/normalised/{name}", count)

    def _lose(self, failure: Failure, sent: int, replies: list[Deferred[Any]]) -> None:
        self.lost = failure.getErrorMessage()
        self.stats.inc_value("farm/sql/error")
        unsent = len(self.postings) + sent
        logger.error(
            "farm: a write to the state database failed, %d posting(s) and %d page(s) or end(s) not stored: %s",
            unsent,
            len(replies) + len(self.ops),
            self.lost,
        )
        self.postings = []
        lost = WriteLost(self.lost)
        for reply in replies + [op[3] for op in self.ops]:
            reply.errback(lost)
        self.ops = []
        self.on_lost(self.lost)
