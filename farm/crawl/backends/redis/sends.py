"""Out, in order: the requests a worker queues and the acknowledgements of the pages it settled.

They leave in the order the crawl made them (a page's follow-ups before its acknowledgement), in
batches, on the Redis link's thread, one send at a time: what the crawl makes while one is on its
way goes in the next. An acknowledgement that leaves a keyword with nothing open anywhere starts
the stall look (farm.crawl.backends.redis.adoption).

A part of farm.crawl.backends.redis.membership.SharedWork, which holds the state it uses.
"""

# Batches (runs of pushes or of acknowledgements) in one send at most: each is a call Redis keeps the
# reply of, and a send made again after a lost reply needs all of its own (CALLS_KEPT, farm.crawl.backends.redis.queue)
SEND_BATCHES = 64


class Sends:
    """Pushes, acknowledgements and looks, sent in order (on SharedWork: ``_ops``, ``_flush_call``, ``_sending``)."""

    def push(self, request) -> None:
        self._ops.append(("push", request))
        self._soon()

    def ack(self, request_id: str) -> None:
        self._ops.append(("ack", request_id))
        self._soon()

    def settled(self, lease_key, page) -> None:
        """The page taken from the shared queue is recorded, or given up: acknowledge it."""
        self.held.pop((lease_key, page), None)
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
        refused = 0  # requests pushed under an epoch Redis no longer holds
        for (kind, batch), call in zip(batches, calls):
            if kind in ("push", "requeue"):
                # a rebuild's pushes ("requeue") go in before the new epoch is set; the others only under
                # this worker's epoch: until the rebuild, a page another worker holds may not be written back
                pushed = self.queue.push_many(batch, call, (self.epoch or "") if kind == "push" else "")
                if pushed is None:
                    refused += len(batch)
                    continue
                queued += sum(pushed)
                self.stats.inc_value("farm/shared/queued", sum(pushed))
                self.stats.inc_value("farm/shared/seen", len(pushed) - sum(pushed))
            elif kind == "ack":
                empty += [lease for lease, left in self.queue.ack(batch, call) if left <= 0]
            else:  # "look": after everything this worker queued before it
                empty += [lease for lease in batch if self.queue.open_requests(lease) <= 0]
        return queued, empty, refused

    def _sent(self, result):
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
