"""The crawl's outbox: postings and page progress, in order, to the state writer.

Postings come from the pipeline; a page done comes from the progress extension,
always after every posting of that page. A frame carries postings and the pages
whose postings are all in it or in an earlier frame, and the writer commits each
frame in one transaction, in order: so a page is never recorded done while its
postings could still be lost, and a kill at any moment loses neither.

Up to two frames are in flight, so that the writer has the next one at hand
while it commits one; what arrives meanwhile goes in the frame after (group
commit). A frame goes out when there is room if it has a page to record or
FARM_SQL_BATCH_SIZE postings, else FARM_SQL_FLUSH_INTERVAL seconds after its
first posting.
"""

import logging
from collections.abc import Callable

from twisted.internet import reactor
from twisted.internet.defer import Deferred, fail, succeed
from twisted.python.failure import Failure

from farm.state.lease import Lease
from farm.writer import StateWriter, WriteLost

logger = logging.getLogger(__name__)

# Frames sent ahead of the writer's answers: while it commits one, the next is
# already in its pipe. More would only make each page wait behind more postings.
FRAMES_IN_FLIGHT = 2


class Outbox:
    def __init__(
        self,
        writer: StateWriter,
        stats,
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
        # (postings queued before it, (lease, page, jobs, total_pages), its reply)
        self.pages: list[tuple[int, tuple, Deferred]] = []
        self.lost: str | None = None
        self._in_flight = 0  # frames sent, not yet answered
        self._timer = None
        self._idle_waiters: list[Deferred] = []

    def add_posting(self, row: bytes) -> None:
        """A posting, encoded as a JSON object."""
        if self.lost is not None:
            return  # the crawl is closing: its pages are fetched again next time
        self.postings.append(row)
        if len(self.postings) >= self.batch_size:
            self._send()
        elif self._timer is None and not self._in_flight:
            self._timer = reactor.callLater(self.flush_interval, self._send, True)

    def page_done(self, lease: Lease, page: int, jobs: int, total_pages: int | None) -> Deferred:
        """Record the page done once its postings are committed; fires with its PageWrite."""
        if self.lost is not None:
            return fail(WriteLost(self.lost))
        reply = Deferred()
        self.pages.append((len(self.postings), (lease, page, jobs, total_pages), reply))
        self._send()
        return reply

    def drain(self) -> Deferred:
        """Fires once everything queued so far is committed (or lost)."""
        self._send(now=True)
        if not self._in_flight:
            return succeed(None)
        done = Deferred()
        self._idle_waiters.append(done)
        return done

    def close(self) -> None:
        """The crawl is over (drained first): nothing more goes out."""
        if self._timer is not None and self._timer.active():
            self._timer.cancel()
        self._timer = None

    @property
    def queued(self) -> int:
        return len(self.postings) + len(self.pages)

    def _send(self, now: bool = False) -> None:
        if self._timer is not None:
            if self._timer.active():
                self._timer.cancel()
            self._timer = None
        while self.lost is None and self._in_flight < FRAMES_IN_FLIGHT:
            if not self.pages and not (self.postings and (now or len(self.postings) >= self.batch_size)):
                if self.postings and not self._in_flight:
                    self._timer = reactor.callLater(self.flush_interval, self._send, True)
                return
            postings, self.postings = self.postings[: self.batch_size], self.postings[self.batch_size :]
            sent = len(postings)
            pages = [entry for entry in self.pages if entry[0] <= sent]
            self.pages = [(before - sent, args, reply) for before, args, reply in self.pages if before > sent]
            self._in_flight += 1
            written = self.writer.write(postings, [args for _, args, _ in pages])
            written.addBoth(self._written, sent, [reply for _, _, reply in pages])

    def _written(self, result, sent: int, replies: list[Deferred]):
        self._in_flight -= 1
        if isinstance(result, Failure):
            if self.lost is None:
                self._lose(result, sent, replies)
            else:  # a frame sent behind the one that was lost
                for reply in replies:
                    reply.errback(WriteLost(self.lost))
        else:
            _, page_writes = result
            self.stats.inc_value("farm/sql/batches")
            self.stats.inc_value("farm/sql/upserted", sent)
            for reply, page_write in zip(replies, page_writes):
                reply.callback(page_write)
            self._send(now=bool(self._idle_waiters))  # a drain is waiting: no delay
        if not self._in_flight and (self.lost is not None or not self.queued):
            waiters, self._idle_waiters = self._idle_waiters, []
            for waiter in waiters:
                waiter.callback(None)

    def _lose(self, failure: Failure, sent: int, replies: list[Deferred]) -> None:
        self.lost = failure.getErrorMessage()
        self.stats.inc_value("farm/sql/error")
        unsent = len(self.postings) + sent
        logger.error(
            "farm: a write to the state database failed, %d posting(s) and %d page(s) not stored: %s",
            unsent, len(replies) + len(self.pages), self.lost,
        )  # fmt: skip
        self.postings = []
        lost = WriteLost(self.lost)
        for reply in replies + [reply for _, _, reply in self.pages]:
            reply.errback(lost)
        self.pages = []
        self.on_lost(self.lost)
