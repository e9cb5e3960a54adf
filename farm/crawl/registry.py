"""The keywords this crawl holds: the one place a keyword's run is added, changed and ended.

Every ``KeywordRun`` (farm.crawl.keywordrun) enters here (``add``, ``hold``, ``take_back``) and leaves
here. Ending has one verb, ``end(lease, outcome)``, and one signal, ``farm.signals.keyword_ended``, sent once
per keyword when its end is settled; the ``Outcome`` says how it ended:

- an end decided by the crawl (failed, blocked, released, completed with nothing left to fetch) is
  decided once (the first wins) and goes to the outbox only when no page the keyword took from the queue
  is still on its way there, so it is committed after their progress;
- an end the keyword table holds already (``written``: its last page's write completed it, or the store
  fenced the lease) or that another worker wrote and shared (``elsewhere``) is settled at once.

A settled keyword leaves the page window, the checkpoint and the runs; shared through Redis, its queued
requests are dropped and its owner told. A keyword given up for a block or an outage is not claimed again by
this crawl (``given_up``). Take-back from a JOBDIR checkpoint and the release of what is held when the crawl
closes are here too. Readers get ``runs``, a read-only view.
"""

import logging
from collections.abc import Iterable
from types import MappingProxyType
from typing import Any

from scrapy import Request
from scrapy.crawler import Crawler
from scrapy.utils.defer import maybe_deferred_to_future
from twisted.internet.defer import Deferred, DeferredList
from twisted.python.failure import Failure

from farm import signals
from farm.crawl.backends.base import LeaseKey
from farm.crawl.backends.checkpoint import Saved
from farm.crawl.giveback import Once, first_line, within
from farm.crawl.keywordrun import KeywordRun, Outcome
from farm.crawl.meta import asked_anew
from farm.crawl.needs import RegistryParts, page_spider
from farm.state.lease import Lease

logger = logging.getLogger(__name__)

# The outcome a written end reports, by the status the store wrote.
_WRITTEN = {"completed": "completed", "failed": "failed"}
# Times a keyword's pages may be found lost inside the crawl (see collect_orphans) before it fails.
ORPHAN_ROUNDS = 3
# The whole give-back at close waits this many FARM_DB_TIMEOUTs at most (a connection, the one
# transaction, and one more try); past it the keywords are left to their lease's expiry.
GIVE_BACK_TIMEOUTS = 3


class KeywordRegistry:
    """Built with the crawl's parts (farm.crawl.parts), whose window, outbox, checkpoint, shared work
    and store it tells of each keyword's pages and end."""

    def __init__(self, crawler: Crawler, parts: RegistryParts):
        self.crawler = crawler
        self.parts = parts
        self.stats = crawler.stats
        self._runs: dict[LeaseKey, KeywordRun] = {}
        self.runs = MappingProxyType(self._runs)  # by lease key; read-only
        self._given_up: set[int] = set()
        # the give-back at close met its deadline unanswered: the database thread may still be in it
        self.database_silent = False
        # the close is done with the keywords (released, lost or never reached): the run table waits for it
        self.given_back = Once()

    @property
    def given_up(self) -> frozenset[int]:
        """Keywords given up for a block or an outage: no later claim of this crawl takes them."""
        return frozenset(self._given_up)

    # --- in -------------------------------------------------------------------------------

    def add(self, lease: Lease, *, owned: bool = True) -> KeywordRun:
        """The keyword's run, made now if the crawl had none; ``owned`` makes it this worker's."""
        run = self._runs.get(lease.key)
        if run is None:
            pending_from_ask = self.parts.backend.fetches_what_it_enqueues()
            run = self._runs[lease.key] = KeywordRun(lease, pending_from_ask=pending_from_ask, owned=owned)
        elif owned:
            run.owned = True
        return run

    def hold(self, leases: list[Lease]) -> list[Lease]:
        """A claim's leases become this crawl's runs; those it did not hold already are returned."""
        parts = self.parts
        parts.backend.peers.hold(leases)  # before their first requests are queued
        new = [lease for lease in leases if lease.key not in self._runs]
        for lease in leases:
            self.add(lease)
        if parts.checkpoint is not None:
            for lease in new:
                parts.checkpoint.hold(lease.key)
        return new

    def take_back(self) -> Deferred[list[Request]] | None:
        """With JOBDIR, the keywords the checkpoint held, taken back at once: a Deferred of their
        first requests; None when there is nothing to take back."""
        parts = self.parts
        checkpoint = parts.checkpoint
        if checkpoint is None or checkpoint.saved is None:
            return None
        saved = checkpoint.saved
        others = parts.backend.peers.adopted_elsewhere()  # not those another worker adopted meanwhile
        spider = page_spider(self.crawler)
        d = parts.run(parts.store.take_back, spider.name, parts.crawler_id, saved.leases, others)
        d.addCallback(self._taken_back, saved)
        return d

    def _taken_back(self, leases: list[Lease], saved: Saved) -> list[Request]:
        """Ours again under new tokens: their pages asked for again (those the checkpoint had
        pending, and those the keyword table says are missing; pages it records done are not)."""
        checkpoint, backend, spider = self.parts.checkpoint, self.parts.backend, page_spider(self.crawler)
        assert checkpoint is not None  # take_back() took these back from it
        checkpoint.saved = None
        for old in saved.leases:  # the old tokens are gone; what was not taken back is dropped
            checkpoint.release(old)
        self.stats.inc_value("farm/checkpoint/taken_back", len(leases))
        dropped = len({kid for kid, _ in saved.leases} - {lease.id for lease in leases})
        if dropped:
            self.stats.inc_value("farm/checkpoint/dropped_leases", dropped)
        logger.info(
            "farm: resuming from JOBDIR: took back %d keyword(s) at once (%d held by others or ended "
            "meanwhile, dropped)",
            len(leases),
            dropped,
        )
        requests: list[Request] = []
        for lease in leases:
            checkpoint.hold(lease.key)
            run = self.add(lease)
            requests += self.parts.paging.first_requests(lease)
            pending: set[int] = set().union(*(pages for (kid, _), pages in saved.pages.items() if kid == lease.id))
            if run.live and run.pending_from_ask:  # else the backend finds the pages missing
                requests += [spider.page_request(lease, page) for page in run.ask(sorted(pending))]
        backend.peers.hold(leases)  # the old tokens ended when the backend was joined
        return requests

    # --- pages ----------------------------------------------------------------------------

    def tell_last(self, run: KeywordRun, last: int | None) -> None:
        """A page told the keyword's last page (None: it told none)."""
        run.tell_last(last)

    def tell_site_total(self, run: KeywordRun, count: int | None) -> None:
        """A page told the postings the site holds for the keyword (None: it told none)."""
        run.tell_site_total(count)

    def ask(self, run: KeywordRun, pages: Iterable[int]) -> list[int]:
        """Of ``pages``, those neither asked for nor done, now asked for (none once an end is decided)."""
        return run.ask(pages)

    def taken(self, lease_key: LeaseKey, page: int) -> None:
        """The page's request left the scheduler for the downloader."""
        self._runs[lease_key].taken(page)

    def sent_to_writer(self, run: KeywordRun, page: int) -> None:
        """The page's progress is queued in the outbox, after its postings."""
        run.sent_to_writer(page)

    def mark_handled(self, run: KeywordRun, page: int, recorded: bool) -> None:
        """The page is recorded, or given up: it leaves the window (and, shared, the worker's hands)."""
        parts = self.parts
        parts.window.leave(run.key, page)
        run.handled(page, recorded)
        if parts.checkpoint is not None:
            parts.checkpoint.settled(run.key, page)
        parts.backend.mark_handled(run.key, page)
        if not run.owned and run.idle and self._runs.get(run.key) is run:
            del self._runs[run.key]  # another worker's keyword: nothing of it left here

    def give_up(self, lease: Lease, page: int) -> None:
        """A page request was dropped before it was fetched (its keyword ended)."""
        run = self._runs.get(lease.key)
        if run is None:
            self.mark_orphan_handled(lease.key, page)
            return
        self.parts.progress.forget(run.key, page)
        self.mark_handled(run, page, recorded=False)
        self._send_when_due(run)

    def mark_orphan_handled(self, lease_key: LeaseKey, page: int) -> None:
        """A page whose keyword this crawl no longer follows is done with: whatever it held goes
        (its place in the window; shared, the worker's hold on it, which else would keep every
        worker waiting for it)."""
        parts = self.parts
        parts.progress.forget(lease_key, page)
        parts.window.leave(lease_key, page)
        if parts.checkpoint is not None:
            parts.checkpoint.settled(lease_key, page)
        parts.backend.mark_handled(lease_key, page)

    def ask_again(self, run: KeywordRun, pages: Iterable[int]) -> None:
        """Ask again for pages that were asked for once and lost on the way."""
        spider, engine = page_spider(self.crawler), self.crawler.engine
        for page in pages:
            run.requested.add(page)
            if run.pending_from_ask:
                run.pending.add(page)
            # shared: past the day's fingerprints, which have seen it
            engine.crawl(asked_anew(spider.page_request(run.lease, page)))

    def collect_orphans(self) -> None:
        """Nothing is queued, downloading or being parsed: every page a keyword still waits
        for must be with the state writer. Any other was lost on the way (an earlier
        pipeline that replaced an item, a request dropped elsewhere): ask for it again,
        a bounded number of times, so that a keyword never waits for ever."""
        # taken from the backend for a keyword no longer followed here: let it go
        for lease_key, page in [key for key in self.parts.backend.peers.held_pages() if key[0] not in self._runs]:
            self.stats.inc_value("farm/keyword/orphan_pages")
            self.mark_orphan_handled(lease_key, page)
        for run in list(self._runs.values()):
            orphans = sorted(run.pending - run.writing)
            if not orphans or run.over:
                continue
            self.stats.inc_value("farm/keyword/orphan_pages", len(orphans))
            for page in orphans:
                self.give_up(run.lease, page)
            if not run.live:
                continue
            run.orphan_rounds += 1
            lease = run.lease
            if run.orphan_rounds > ORPHAN_ROUNDS:
                lost = f"pages {orphans} were lost inside the crawl {ORPHAN_ROUNDS} times"
                self.end(lease, Outcome("failed", f"{lost} (does a pipeline before farm's replace items?)"))
            else:
                logger.warning(
                    "farm: pages %s of %s/%s (#%s) were lost inside the crawl; asking again",
                    orphans,
                    lease.city,
                    lease.job,
                    lease.id,
                )
                self.ask_again(run, orphans)

    # --- the end --------------------------------------------------------------------------

    def end(self, lease: Lease, outcome: Outcome) -> None:
        """End the keyword (see the module docstring); ``outcome.page`` is given up with it."""
        if outcome.kind in ("blocked", "released"):
            # noted when decided, before its release is written: no later claim of this crawl takes it
            self._given_up.add(lease.id)
        run = self._runs.get(lease.key)
        if run is None:
            if outcome.page is not None:
                self.mark_orphan_handled(lease.key, outcome.page)
            elif outcome.kind == "completed" and not outcome.written:
                self._complete_unheld(lease)
            return
        if outcome.page is not None:
            self.give_up(lease, outcome.page)
        if outcome.written or outcome.elsewhere:
            if outcome.elsewhere:
                self.stats.inc_value("farm/shared/ended_elsewhere")
            self._settle_end(run, outcome)
            return
        if not run.live:
            return  # the first end decided wins
        run.outcome = outcome
        if outcome.kind != "completed":
            logger.warning("farm: %s %s/%s (#%s): %s", outcome.kind, lease.city, lease.job, lease.id, outcome.reason)
        self._send_when_due(run)

    def send_due(self, run: KeywordRun) -> None:
        """A page of the keyword was handed over: its end, if decided, may be due now."""
        self._send_when_due(run)

    def _send_when_due(self, run: KeywordRun) -> None:
        if not run.end_due:
            return
        run.outcome_sent = True
        outcome = run.outcome
        assert outcome is not None  # end_due: its end is decided
        written = self.parts.outbox.end(run.lease, outcome.kind, outcome.reason)
        written.addCallbacks(self._end_written, self._end_not_written, callbackArgs=(run,), errbackArgs=(run,))

    def _end_written(self, status: str | None, run: KeywordRun) -> None:
        if run.over:
            return  # its last page completed it meanwhile
        outcome = run.outcome
        assert outcome is not None  # its end was sent: decided
        kind = outcome.kind
        if status is None:
            self.stats.inc_value("farm/progress/fenced")
            settled = "lost"
        else:
            settled = _WRITTEN.get(status) or ("blocked" if kind == "blocked" else "released")
            if kind == "blocked" and status == "failed":
                self.stats.inc_value("farm/keyword/blocked_all_day")
                logger.warning(
                    "farm: %s/%s (#%s) was blocked %s times today: failed for the day",
                    run.lease.city,
                    run.lease.job,
                    run.lease.id,
                    self.parts.store.max_blocked_claims,
                )
            self.stats.inc_value(f"farm/keyword/{settled}")
        self._settle_end(run, Outcome(settled, outcome.reason, written=True))

    def _end_not_written(self, failure: Failure, run: KeywordRun) -> None:
        # the crawl closes on the database error; release() writes what is left
        self.stats.inc_value("farm/progress/not_written")
        run.outcome_sent = False

    def _settle_end(self, run: KeywordRun, outcome: Outcome) -> None:
        if run.over:
            return
        run.over = True
        parts = self.parts
        parts.progress.forget(run.key)
        if not outcome.elsewhere:
            parts.backend.mark_ended(run.lease, outcome.kind)  # its queued requests dropped, its owner told
        parts.window.leave_lease(run.key)
        if parts.checkpoint is not None:
            parts.checkpoint.release(run.key)
        if self._runs.get(run.key) is run:
            del self._runs[run.key]
        self.crawler.signals.send_catch_log(
            signals.keyword_ended, lease=run.lease, outcome=outcome, spider=self.crawler.spider
        )

    def _complete_unheld(self, lease: Lease) -> None:
        """Shared: nothing is open for a keyword this worker does not hold, and nothing is missing."""
        backend = self.parts.backend
        written = self.parts.outbox.end(lease, "completed", None)

        def completed(status: str | None) -> None:
            if status:  # else fenced: the keyword is another's now
                backend.mark_ended(lease, "completed")

        written.addCallback(completed)
        written.addErrback(lambda failure: self.stats.inc_value("farm/progress/not_written"))

    # --- the crawl closes -----------------------------------------------------------------

    async def release(self, reason: str) -> None:
        """Write the end of every keyword still held: the end decided, else ``released`` (partial),
        so the next claimer resumes at the next unfinished page. Call it once the progress of every
        page fetched is written."""
        # this worker's keywords, and the ends it decided for others' (their pages go back to the queue)
        runs = [run for run in self._runs.values() if not run.over and (run.owned or run.outcome)]
        if not runs:
            self._runs.clear()
            return
        logger.info("farm: releasing %d keyword(s) as partial (crawl closed: %s)", len(runs), reason)
        self.stats.inc_value("farm/lease/released", len(runs))
        why = f"crawl closed before the keyword was done ({reason})"
        parts = self.parts
        ends: list[tuple[Lease, str, str | None]] = []
        for run in runs:
            kind: str
            message: str | None
            kind, message = ("released", why)
            if run.outcome is not None and not run.outcome_sent:
                kind, message = run.outcome.kind, run.outcome.reason
            ends.append((run.lease, kind, message))
        written: Deferred[Any]
        if parts.outbox.lost is None:
            written = DeferredList([parts.outbox.end(*end) for end in ends], consumeErrors=True)
        else:  # the state writer is gone: the database thread may still reach the database, in one transaction
            written = parts.run(parts.store.write_batch, [], [], parts.store.clock(), ends)
            written.addCallbacks(
                lambda batch: [(True, status) for status in batch.ends], lambda f: [(False, f)] * len(ends)
            )
        # one deadline for the whole give-back, however many keywords: a silent database costs it once
        deadline = GIVE_BACK_TIMEOUTS * self.crawler.settings.getfloat("FARM_DB_TIMEOUT")
        results = await maybe_deferred_to_future(within(written, deadline))
        if results is None:
            self.database_silent = True
            results = [(False, f"no answer within {deadline:g}s")] * len(runs)
        for run, (ok, status) in zip(runs, results):
            run.over = True
            if ok:
                parts.backend.mark_ended(run.lease, "released" if status == "partial" else status or "lost")
        self._runs.clear()
        lost = [(run.lease, status) for run, (ok, status) in zip(runs, results) if not ok]
        if lost:
            self._release_lost([lease for lease, _ in lost], lost[0][1])

    def _release_lost(self, leases: list[Lease], failure: object) -> None:
        """The database did not take the releases: the keywords stay ``crawling`` under this crawler.
        Say so, and who takes them back: the backend may keep this worker findable (with Redis, a
        worker that finds it silent adopts them from the keyword table)."""
        self.stats.inc_value("farm/lease/release_lost", len(leases))
        settings = self.crawler.settings
        lease_timeout = f"FARM_LEASE_TIMEOUT ({settings.getint('FARM_LEASE_TIMEOUT')}s) frees them"
        listed = self.parts.backend.peers.keep_listed()
        if listed is not None:
            who = f"{listed}; failing that, {lease_timeout}"
        elif self.parts.checkpoint is not None:
            who = f"the next crawl on this JOBDIR takes them back at once; failing that, {lease_timeout}"
        else:
            who = lease_timeout
        logger.error(
            "farm: %d keyword(s) could not be released at close (the database: %s): they stay crawling "
            "under crawler id %s; %s",
            len(leases),
            first_line(failure),
            self.parts.crawler_id,
            who,
        )
