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

import logging
import uuid

from twisted.internet import reactor

from farm.crawl.backends.redis.queue import FRESH_EPOCH

logger = logging.getLogger(__name__)

REBUILD_LOCK_SECONDS = 120


class Rebuild:
    """The rebuild after Redis lost everything (on SharedWork: ``_rebuilding``, ``epoch``)."""

    def _connected(self, command):
        """A new connection to Redis (the link's thread): did Redis go back in time?"""
        if self.queue.went_back(command):
            self._went_back()

    def _went_back(self):
        logger.warning(
            "farm: Redis went back in time (another server holds the shared state: restarted from an older "
            "snapshot, or a replica promoted): that state is dropped, and the queue rebuilt from the keyword table"
        )
        reactor.callFromThread(self.stats.inc_value, "farm/shared/went_back")

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
