"""One worker's part in work shared through Redis: what it sends, what it learns, whom it replaces.

- **Out, in order.** Requests to queue and acknowledgements of settled pages leave in
  the order the crawl made them (a page's follow-ups before its acknowledgement), in
  batches, on the Redis link's thread, one batch at a time: what the crawl makes while
  one is on its way goes in the next.
- **Stalls.** An acknowledgement that leaves a keyword with no request open anywhere
  (queued or in any worker's hands) makes this worker look at the keyword table: the
  pages still missing are queued again, or the keyword is completed. The owner of a
  keyword looks too, now and then: a keyword is never left crawling with nothing on
  its way, whichever worker held what.
- **Heartbeat.** Every few seconds: this worker is alive; keywords it owns that other
  workers ended (its inbox); workers silent for FARM_WORKER_TIMEOUT have their
  in-flight requests put back and their keywords adopted by this one, at once,
  without waiting for FARM_LEASE_TIMEOUT.
- **Claims.** A claim commits in the keyword table before its leases are listed in
  Redis; a worker killed between the two would leave keywords no survivor knows of.
  So a worker marks itself as taking keywords on before it claims, and whoever
  finds it stopped takes over what the keyword table says it holds. While a worker
  is taking keywords on, the others do not end.
- **Redis is a cache.** A missing epoch means Redis lost everything (FLUSHALL, a
  restart without persistence): one worker, under a lock, queues again the missing
  pages of every keyword being crawled, from the keyword table; the others wait for
  the new epoch. A rebuild is work in progress: the crawl does not close before it
  ends, and a worker already closing leaves it to the others.
"""

import logging
import uuid

from sqlalchemy.exc import DBAPIError
from twisted.internet.defer import DeferredList
from twisted.internet.task import LoopingCall

from farm.crawl.backends.redis.link import RedisUnreachable
from farm.crawl.backends.redis.queue import FRESH_EPOCH
from farm.crawl.keywordrun import Outcome

logger = logging.getLogger(__name__)

REBUILD_LOCK_SECONDS = 120
_OUTCOMES = {"completed": "completed", "failed": "failed", "partial": "released"}
OWNER_CHECK_TICKS = 5  # heartbeats between the owner's look at its keywords' open requests
# Batches (runs of pushes or of acknowledgements) in one send at most: each is a call Redis keeps the
# reply of, and a send made again after a lost reply needs all of its own (CALLS_KEPT, farm.crawl.backends.redis.queue)
SEND_BATCHES = 64


class SharedWork:
    def __init__(
        self,
        crawler,
        link,
        queue,
        store,
        registry,
        worker_timeout: float,
        *,
        run_db,
        on_lost,
        on_queued,
        resuming=None,
    ):
        self.crawler = crawler
        self.link = link
        self.queue = queue
        self.store = store
        self.run_db = run_db  # the crawl's database thread
        self.registry = registry  # farm.crawl.registry.KeywordRegistry: the keywords this crawl holds
        self.runs = registry.runs
        self.worker_timeout = worker_timeout
        self.stats = crawler.stats
        self.on_lost = on_lost  # Redis lost for longer than FARM_OUTAGE_GRACE: closes the crawl
        self.busy = True  # whether the shared queue or any worker's in-flight set holds requests (last look)
        self._adoptions = set()  # Deferreds of keywords being adopted (looked up in the keyword table)
        self._closing = False  # the crawl is closing: it adopts nothing more
        self._keep_listed = False  # it closes with keywords it could not release (keep_listed)
        self.epoch = None
        self.taken: dict[tuple[tuple[int, int], int], str] = {}  # (lease key, page) -> its id in the shared queue
        self._ops: list[tuple[str, object]] = []  # ("push", request) | ("ack", id), in order
        self._flush_call = None
        self._sending = None  # the send on its way to Redis, if any
        self.on_queued = on_queued  # requests of this worker's are in the shared queue (the backend's pump)
        self._beat = LoopingCall(self._heartbeat)
        self._beating = None
        self._ticks = 0
        self._rebuilding = False
        # JOBDIR: the leases (id, token) of the checkpoint this worker resumes from under the id it had
        # (set before start), else None; once started, the leases other workers own, which the lease
        # middleware must not take back
        self.resuming: set[tuple[int, int]] | None = resuming
        self.others: set[tuple[int, int]] = set()

    # --- out, in order -----------------------------------------------------------------

    def push(self, request) -> None:
        self._ops.append(("push", request))
        self._soon()

    def ack(self, request_id: str) -> None:
        self._ops.append(("ack", request_id))
        self._soon()

    def settled(self, lease_key, page) -> None:
        """The page taken from the shared queue is recorded, or given up: acknowledge it."""
        request_id = self.taken.pop((lease_key, page), None)
        if request_id is not None:
            self.ack(request_id)

    def _soon(self):
        # one send at a time: what comes meanwhile goes in the next (each send is a round trip on the
        # link's thread, under the crawl's GIL; one a reactor turn made sends of one or two acks)
        if self._flush_call is None and self._sending is None:
            from twisted.internet import reactor

            self._flush_call = reactor.callLater(0, self.flush)

    def _send_done(self, result, sending):
        if self._sending is sending:
            self._sending = None
            if self._ops:
                self._soon()
        return result

    def flush(self):
        """Send what is waiting; a Deferred that fires once it is in Redis."""
        self._flush_call = None
        ops, self._ops = self._ops, []
        if not ops:
            return self.link.run(lambda: None)
        batches, kind, batch = [], None, []
        for i, (op, value) in enumerate(ops):
            if op != kind and batch:
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
        # each push and acknowledgement has its call id before it leaves: made again after a lost
        # reply, it answers as it did and queues or settles nothing twice
        calls = [self.queue.new_call() for _ in batches]
        done = self._sending = self.link.run(self._send, batches, calls)
        done.addCallback(self._sent)
        done.addErrback(self._failed, "sending requests and acknowledgements")
        done.addBoth(self._send_done, done)
        return done

    def _send(self, batches, calls):
        queued, empty = 0, []  # how many requests went in the queue; leases with no request open anywhere
        for (kind, batch), call in zip(batches, calls):
            if kind == "push":
                pushed = self.queue.push_many(batch, call)
                queued += sum(pushed)
                self.stats.inc_value("farm/shared/queued", sum(pushed))
                self.stats.inc_value("farm/shared/seen", len(pushed) - sum(pushed))
            elif kind == "ack":
                empty += [lease for lease, left in self.queue.ack(batch, call) if left <= 0]
            else:  # "look": after everything this worker queued before it
                empty += [lease for lease in batch if self.queue.open_requests(lease) <= 0]
        return queued, empty

    def _sent(self, result):
        queued, empty = result
        if queued:
            self.on_queued()
        for lease in dict.fromkeys(empty):
            self.check_stall(lease)

    def look(self, lease_name: str) -> None:
        """Check, after what this worker queued so far, whether anything is open for the lease."""
        self._ops.append(("look", lease_name))
        self._soon()

    # --- stalls --------------------------------------------------------------------------

    def check_stall(self, lease_name: str, lease=None) -> None:
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

    def _stalled(self, progress, lease):
        if progress is None or progress.status != "crawling":
            # it ended (written by whichever worker), or was claimed again: if this worker owns it and
            # was not told (the owner map went with a flush), it learns here
            run = self.runs.get(lease.key)
            if run is not None and run.owned and not run.over and run.live:
                outcome = "lost" if progress is None else _OUTCOMES.get(progress.status, "released")
                self.registry.end(lease, Outcome(outcome, elsewhere=True))
            return
        missing = progress.missing()
        spider = self.crawler.spider
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
                request.meta["farm_again"] = f"stall{progress.watermark}"
                self.push(request)
            return
        self.stats.inc_value("farm/keyword/exhausted")
        self.registry.end(lease, Outcome("completed", "no page left to fetch"))

    def _run_named(self, lease_name):
        keyword_id, _, token = lease_name.partition(":")
        return self.runs.get((int(keyword_id), int(token)))

    # --- ends ------------------------------------------------------------------------------

    def ended(self, lease, outcome: str) -> None:
        """The lease's keyword ended here: drop its queued requests, tell its owner."""
        d = self.link.run(self.queue.ended, lease.name, outcome)
        d.addErrback(self._failed, "sharing a keyword's end")

    def claiming(self):
        """Before a claim: a Deferred that fires once Redis says this worker is taking keywords on."""
        return self.link.run(self.queue.claiming)

    def hold(self, leases, claimed: bool = False) -> None:
        """List these leases as this worker's; ``claimed``: all its claim took (the claim is over)."""
        taken_from = self.queue.worker if claimed else None
        d = self.link.run(self.queue.hold, [lease.name for lease in leases], taken_from)
        d.addErrback(self._failed, "sharing the keywords claimed")

    # --- heartbeat ---------------------------------------------------------------------------

    def start(self):
        self.epoch = None
        d = self.link.run(self._join)
        d.addCallback(self._started)
        d.addErrback(self._failed, "joining the shared work")
        return d

    def _join(self):
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

    def _started(self, result):
        epoch, self.others, inherited = result
        self.epoch = epoch
        self._beat.start(max(0.2, self.worker_timeout / 6), now=True)
        if self.resuming is None:  # without its checkpoint, it adopts its keywords as a survivor would
            self.take_over(self.queue.worker)
        for stopped in inherited:
            self.take_over(stopped)

    def stop(self):
        if self._beat.running:
            self._beat.stop()

    def _heartbeat(self):
        if self._beating is not None:
            return
        self._ticks += 1
        maintain = self._ticks % 3 == 1 and not self._closing
        calls = (self.queue.new_call(), self.queue.new_call())  # the inbox read and the adoptions: once each
        self._beating = self.link.run(self._beat_once, maintain, calls)
        self._beating.addCallback(self._beaten)
        self._beating.addErrback(self._failed, "the heartbeat")
        self._beating.addBoth(self._beat_done)

    def _beat_done(self, result):
        self._beating = None
        return result

    def _beat_once(self, maintain: bool, calls):
        _, epoch = self.queue.heartbeat()
        inbox = self.queue.inbox(call=calls[0])
        requeued, adopted, look_up = self.queue.requeue_dead(self.worker_timeout, calls[1]) if maintain else (0, [], [])
        busy = self.queue.busy()
        return epoch, inbox, requeued, adopted, look_up, busy

    def _beaten(self, result):
        epoch, inbox, requeued, adopted, look_up, busy = result
        self.busy = busy
        if epoch != self.epoch:
            self._lost_everything(epoch)
            return
        for lease_name, outcome in inbox:
            run = self._run_named(lease_name)
            if run is not None and run.owned and not run.over:
                self.registry.end(run.lease, Outcome(outcome, elsewhere=True))
        if requeued or adopted or look_up:  # look_up names every worker found stopped
            self.stats.inc_value("farm/shared/requeued", requeued)
            logger.warning(
                "farm: a worker stopped (%s): %d of its requests back in the queue, %d keyword(s) "
                "adopted; the keyword table says what else it held",
                ", ".join(look_up),
                requeued,
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

    def _adopt(self, lease_name):
        keyword_id, _, token = lease_name.partition(":")
        d = self.run_db(self.store.lease, self.crawler.spider.name, int(keyword_id), int(token))
        d.addCallback(self._adopted)
        d.addErrback(self._failed, "adopting a keyword")
        self._track(d)

    def take_over(self, stopped: str) -> None:
        """Adopt the keywords the keyword table says the stopped worker holds (its claim may have
        committed without its leases listed in Redis)."""
        spider = self.crawler.spider.name
        d = self.run_db(self.store.adopt_held, spider, stopped, self.queue.worker)
        d.addCallback(self._taken_over, stopped)
        d.addErrback(self._failed, "adopting a stopped worker's keywords")
        self._track(d)

    def _taken_over(self, leases, stopped):
        if leases:
            logger.info("farm: %d keyword(s) held by %s in the keyword table, adopted", len(leases), stopped)
        for lease in leases:
            self._adopted(lease)
        return self.link.run(self.queue.hold, [lease.name for lease in leases], stopped)

    def _track(self, d):
        self._adoptions.add(d)
        d.addBoth(lambda result: self._adoptions.discard(d) or result)

    @property
    def adopting(self) -> bool:
        """Keywords are being adopted (runs this worker is about to hold), or the queue rebuilt."""
        return bool(self._adoptions)

    def closing(self):
        """The crawl closes: nothing more is adopted; a Deferred that fires once the adoptions under
        way have made their runs (which the crawl then releases with its own)."""
        self._closing = True
        return DeferredList(list(self._adoptions), consumeErrors=True)

    def _adopted(self, lease):
        if lease is None:
            return  # ended meanwhile
        handled_here = lease.key in self.runs
        self.registry.add(lease, shared=True, owned=True)
        if handled_here:  # its pages were being handled here: now its keyword is this worker's too
            return
        self.stats.inc_value("farm/shared/adopted")
        logger.info("farm: adopted %s/%s (#%s) from a stopped worker", lease.city, lease.job, lease.id)
        self.look(lease.name)  # its requests may be back in the queue: only if none is open anywhere

    # --- Redis lost everything ----------------------------------------------------------------

    def _lost_everything(self, epoch):
        if self._rebuilding or self._closing:
            # closing, it leaves the rebuild to the others: its link closes with the crawl, and a
            # rebuild cut short there would hold the lock, every other worker waiting on it
            return
        self._rebuilding = True
        self.stats.inc_value("farm/shared/epoch_lost")
        logger.warning(
            "farm: the shared state in Redis is gone (flushed or restarted): rebuilding the queue "
            "from the keyword table"
        )
        d = self.link.run(self.queue.take_rebuild_lock, REBUILD_LOCK_SECONDS)
        d.addCallback(self._rebuild)
        d.addErrback(self._failed, "rebuilding the shared queue")
        # until it is rebuilt, an empty Redis says nothing of the work left: the crawl does not close
        # (its link and database would close under the rebuild), and closing waits for it
        self._track(d)

    def _rebuild(self, locked):
        if not locked:
            d = self.link.run(self.queue.server.get, self.queue.k("epoch"))
            d.addCallback(self._rebuilt_elsewhere)
            return d
        d = self.run_db(self.store.held_leases, self.crawler.spider.name)
        d.addCallback(self._requeue_held)
        return d

    def _rebuilt_elsewhere(self, epoch):
        self._rebuilding = False
        epoch = epoch.decode() if epoch else ""
        if epoch and not epoch.startswith(
            FRESH_EPOCH
        ):  # else: the rebuilder is at work; the next heartbeat looks again
            self.epoch = epoch
            self.hold([run.lease for run in self.runs.values() if run.owned and not run.over])

    def _requeue_held(self, held):
        spider = self.crawler.spider
        by_holder = {}
        for lease, holder, progress in held:
            by_holder.setdefault(holder, []).append(lease.name)
            for page in progress.missing():
                request = spider.page_request(lease, page)
                request.meta["farm_again"] = True  # whatever fingerprints survived
                self.push(request)
        self.stats.inc_value("farm/shared/rebuilt_keywords", len(held))
        done = self.flush()
        epoch = uuid.uuid4().hex  # chosen here: written again after a lost reply, it is the same epoch
        done.addCallback(lambda _: self.link.run(self.queue.new_epoch, epoch, by_holder))
        done.addCallback(self._rebuilt)
        return done

    def _rebuilt(self, epoch):
        self._rebuilding = False
        self.epoch = epoch
        logger.info("farm: shared queue rebuilt from the keyword table")

    # --- ending -----------------------------------------------------------------------------

    def keep_listed(self) -> None:
        """The crawl closes with keywords it could not release (the database is gone): at ``leave``,
        this worker stays in the live set, taking keywords on, so that a worker that finds it silent
        for FARM_WORKER_TIMEOUT takes them over from the keyword table."""
        self._keep_listed = True

    def leave(self):
        """A clean close: flush, then put back what this worker took and did not settle."""
        self.stop()
        d = self.flush()
        d.addCallback(lambda _: self.link.run(self._leave))
        return d

    def _leave(self):
        back = self.queue.leave()
        if self._keep_listed:
            self.queue.claiming()  # live once more, its heartbeat stopped: a survivor looks it up
        return back

    def _failed(self, failure, what):
        self.stats.inc_value("farm/shared/error")
        if failure.check(RedisUnreachable):
            logger.error("farm: %s failed: %s", what, failure.getErrorMessage())
        elif failure.check(DBAPIError):  # the database lost past the outage grace: not a bug either
            error = failure.value.orig or failure.value
            logger.error(
                "farm: %s failed: the database: %s",
                what,
                (str(error).strip().splitlines() or [type(error).__name__])[0],
            )
        else:  # a bug, not Redis: say where
            logger.error("farm: %s failed", what, exc_info=(failure.type, failure.value, failure.getTracebackObject()))
        if self.on_lost is not None:
            self.on_lost(failure.getErrorMessage())
