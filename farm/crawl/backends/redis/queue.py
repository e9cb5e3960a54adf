"""The shared request queue: scrapy-redis's priority queue, made reliable.

scrapy-redis pops with ZRANGE + ZREMRANGEBYRANK: the request leaves Redis at that
moment, so a worker killed before finishing it loses it for good (its fingerprint
keeps it from ever being queued again: scrapy-redis #177). Here, as in dramatiq's
Redis broker, a taken request moves into its worker's in-flight set and stays
there, under that worker's heartbeat, until its page is recorded (or given up);
any worker's maintenance step puts the in-flight requests of a worker whose
heartbeat stopped back in the queue, with their priority, and adopts its keywords.
A long download is never taken for a dead worker: the heartbeat does not wait for it.

Keys, under ``<FARM_REDIS_PREFIX>:<site>``:

    queue        zset  id -> score (priority, then first in first out)
    ids          hash  gen, n: an id is '<gen>-<n>' (scripts/ids.lua): none of a lost state names one of the next
    req          hash  id -> its keyword's lease (``id:token``) and a newline, then the request as JSON
                       (farm.crawl.backends.redis.codec); the JSON alone for a request without a keyword
    open         hash  lease -> its requests not yet settled (queued or in flight)
    ends         zset  lease -> until when (Redis' clock, ms) it is known to have ended: its queued
                       requests are dropped at the pop; each end kept a day, trimmed by the workers'
                       maintenance (scripts/requeue_dead.lua)
    seen:<lease> set   the lease's page fingerprints, kept a day after its last page was queued
    seen:<day>   set   the day's fingerprints of requests without a keyword (farm.crawl.backends.redis.dupefilter)
    taken:<w>    zset  worker w's in-flight requests, id -> the score they had
    taking:<w>   set   workers whose keywords w is taking on, itself from its first claim to one that
                       finds nothing: the keyword table, not Redis, says which (a claim commits before
                       its leases are listed)
    owner        hash  lease -> the worker that claimed or adopted it (a survivor adopts a stopped one's)
    inbox:<w>    list  ends of w's leases, written by whichever worker ended them ('<lease> <outcome>'), and
                       notes of those another worker left with nothing open ('<lease> look')
    calls:<w>    hash  call id -> reply of worker w's last calls that must not run twice (the last
                       CALLS_KEPT at most; old ones are forgotten a run at a time: .calls)
    live         zset  worker -> last heartbeat (Redis' own clock, ms)
    pace         hash  next_at, interval, penalty (ms): the site's shared pace; every pop carries the
                       interval and this worker's back-off, and writes them back when they are gone
    epoch        str   set once; missing means Redis lost everything (farm rebuilds); made by a worker
                       that joins, it is fresh (FRESH_EPOCH): one that held work under another rebuilds.
                       A push under another epoch than its worker's queues nothing (scripts/send.lua)
    written      set   workers that wrote back what they hold since Redis lost its state (the rebuild
                       waits for them: scripts/write_back.lua)
    server       str   the run_id of the Redis server the state is written on: found on another (Redis
                       restarted from an older snapshot, a replica promoted), the state is of some moment
                       past, and is dropped as a flush would drop it (scripts/went_back.lua)

Every move between keys is one Lua script (farm/crawl/backends/redis/scripts), and each command in a
script takes the whole batch (one ZADD, HSET, HMGET, ZMSCORE... for many requests). A worker makes few
calls: a send (its pushes, acknowledgements, ends, listings and looks, in order: scripts/send.lua), a
pop, a heartbeat (scripts/beat.lua); what they cost, as INFO counts it (inside scripts too), is measured
by bench/redis_commands_bench.py (docs/benchmarks.md). A script that must not run twice takes a call id,
and answers a call made again as it did (farm.crawl.backends.redis.calls). All methods block: call them
off the reactor (the scheduler runs them on its Redis thread).
"""

import random
import re
import uuid
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, cast

from scrapy import Request, Spider
from scrapy_redis.queue import Base

from farm.crawl.backends.redis.calls import CallIds, register_scripts, script_text
from farm.crawl.backends.redis.codec import JsonRequestSerializer, encode
from farm.crawl.backends.redis.dupefilter import LEASE_SECONDS, DayDupeFilter
from farm.crawl.meta import FarmMeta
from farm.errors import BadPayload

if TYPE_CHECKING:  # not at run time: the link imports the reactor
    from farm.crawl.backends.redis.link import BytesRedis, Command

FRESH_EPOCH = "fresh:"  # an epoch made by a worker that joined, not by a rebuild


@dataclass
class Taken:
    id: str
    request: Request | BadPayload  # the request, or the BadPayload that refused it
    lease: str  # "id:token", or "" for a request without a keyword
    payload: bytes = b""  # the request as queued (written back as it was should Redis lose its state)


@dataclass
class Beat:
    """What a heartbeat learns (``SharedQueue.beat``)."""

    epoch: str  # the shared epoch, '' when Redis lost everything
    inbox: list[tuple[str, str]]  # (lease, outcome) of this worker's keywords ended elsewhere, or (lease, 'look')
    requeued: int  # requests of stopped workers put back in the queue
    adopted: list[str]  # their leases, this worker's now
    look_up: list[str]  # workers whose keywords this one takes on from the keyword table
    busy: bool  # whether any work is left (``busy``)


class SharedQueue:
    """scrapy-redis's priority queue shape and request coding, held, not inherited: its ``pop``
    loses a request taken by a worker that dies, and its ``clear`` deletes every worker's work."""

    def __init__(
        self, server: "BytesRedis", spider: Spider | None, key: str, worker: str, dupefilter: DayDupeFilter
    ) -> None:
        self._coding = Base(server, spider, key, serializer=JsonRequestSerializer)  # scrapy-redis's
        self.server, self.spider, self.key = server, spider, self._coding.key
        self.worker, self.dupefilter = worker, dupefilter
        self.scripts = register_scripts(server)
        self.calls = CallIds()
        self._callback_names: dict[object, str] = {}  # farm.crawl.backends.redis.codec.request_dict
        self._went_back = script_text("went_back")  # sent as text: run first on a new server
        self.live_seen: set[str] = set()  # the live workers at the last look (busy): a rebuild waits for them

    def _encode_request(self, request: Request) -> bytes:
        return encode(request, self.spider, self._callback_names)

    def k(self, name: str) -> str:
        return f"{self.key}:{name}"

    def new_call(self) -> int:
        """An id for a call that must not run twice: made again with it, the call answers as it did."""
        return self.calls.new()

    def _once(self, name: str, keys: list[str], args: list[Any], call: int | None) -> Any:
        return self.scripts[name](keys=[self.k("calls:" + self.worker), *keys], args=[*self.calls.head(call), *args])

    # --- requests -----------------------------------------------------------

    def send(self, runs: Sequence[tuple[str, Sequence[Any]]], call: int | None = None, epoch: str = "") -> list[Any]:
        """A worker's sends in one call, in order: runs of (kind, values), a reply for each (scripts/send.lua).

        - ``push`` and ``requeue``: requests; True for each queued. A push is queued only under ``epoch``
          (any when '') and None when Redis holds another (it lost its state since); a rebuild's pushes
          (requeue) under any. Every page request goes through its keyword's fingerprints (its own
          dont_filter only keeps it from a local dupefilter). A page asked for anew carries ``again`` in its
          farm meta: True passes unfiltered (a page lost inside a worker); a text is an occasion, and
          the page is queued once per occasion (two workers finding the same stall queue it once).
        - ``ack``: (id, lease, mine) of requests whose pages are settled (lease '' when not known; mine '1'
          when this worker owns it);
          (lease, its requests still open) for each. A keyword another worker owns, left with nothing
          open, is noted in its owner's inbox (``inbox``: '<lease>', 'look').
        - ``end``: (lease, outcome) of keywords ended: queued requests dropped; each one's owner ('' none), told.
        - ``look``: leases; the requests each has open.
        - ``hold``: the worker this one is done taking on ('' none), then leases this one claimed or adopted.
        - ``seen``: (lease, page) of pages done (a rebuild's): among the lease's fingerprints, queued no more.
        """
        args = [epoch, self.dupefilter.ttl(), LEASE_SECONDS, self.dupefilter.lease_key(""), self.worker, self.key]
        for kind, values in runs:
            args += [kind, len(values)]
            if kind in ("push", "requeue"):
                for request in values:
                    args += self._pushed(request)
            elif kind in ("look", "hold"):
                args += values
            else:
                args += [value for pair in values for value in pair]
        keys = [
            self.k("calls:" + self.worker),
            self.k("queue"),
            self.k("req"),
            self.k("ids"),
            self.dupefilter.key,
            self.k("open"),
            self.k("ends"),
            self.k("epoch"),
            self.k("taken:" + self.worker),
            self.k("owner"),
        ]
        args = [*self.calls.head(call), *args]
        replies = self.scripts["send"](keys=keys, args=args)
        out: list[Any] = []
        for (kind, _), reply in zip(runs, replies):
            if kind in ("push", "requeue"):
                out.append([bool(ok) for ok in reply] if reply else None)
            elif kind == "ack":
                out.append([(reply[i].decode(), int(reply[i + 1])) for i in range(0, len(reply), 2)])
            elif kind == "end":
                out.append([owner.decode() if isinstance(owner, bytes) else owner for owner in reply])
            elif kind == "look":
                out.append([int(n) for n in reply])
            else:
                out.append(None)
        return out

    def _pushed(self, request: Request) -> list[Any]:
        """A request as a push carries it: its fingerprint, its lease, its priority, its payload."""
        farm = FarmMeta.of(request)
        lease, again = farm.lease, farm.again
        filtered = lease is not None or not request.dont_filter
        fingerprint = self.dupefilter.request_fingerprint(request) if filtered and again is not True else ""
        if fingerprint and again:
            fingerprint += f":{again}"  # asked for anew: once per occasion
        return [fingerprint, lease.name if lease is not None else "", request.priority, self._encode_request(request)]

    def push_many(self, requests: Sequence[Request], call: int | None = None, epoch: str = "") -> list[bool] | None:
        """Queue the requests whose page was not queued; True for each queued (``send``'s push)."""
        if not requests:
            return []
        return cast("list[bool] | None", self.send([("push", list(requests))], call, epoch)[0])

    def pop_many(
        self, n: int, interval: float | None = None, penalty: float = 0.0, call: int | None = None
    ) -> tuple[float, list[Taken]]:
        """(seconds to wait for the site's pace, requests taken: at most n, one when paced).

        ``interval`` and ``penalty`` (s): the site's interval and this worker's back-off, written
        back should Redis have lost the pace."""
        keys = [
            self.k("queue"),
            self.k("req"),
            self.k("taken:" + self.worker),
            self.k("pace"),
            self.k("ends"),
            self.k("open"),
            self.k("calls:" + self.worker),
        ]
        pace = [int(interval * 1000) if interval is not None else "", int(penalty * 1000)]
        args = [n, random.random(), *pace, *self.calls.head(call)]
        out = self.scripts["pop"](keys=keys, args=args)
        if out[0]:
            return out[0] / 1000, []
        taken = []
        for i in range(1, len(out), 2):
            rid, payload, lease = out[i].decode(), out[i + 1], ""
            try:
                request = self._coding._decode_request(payload)
                lease = FarmMeta.of(request).lease_page()[0].name  # every farm request has one (the codec)
            except BadPayload as exc:
                request = exc
            taken.append(Taken(rid, request, lease, payload))
        return 0.0, taken

    def write_back(self, held: list[tuple[str, str, int, int, bytes]], call: int | None = None) -> list[str]:
        """Redis lost its state: the requests this worker holds, (id, lease, page, priority, payload)
        each, written back into its in-flight set; their ids in the state now, in order (a new one for
        each not taken since the loss)."""
        keys = [self.k("taken:" + self.worker), self.k("req"), self.k("ids"), self.k("open"), self.k("written")]
        args = [self.dupefilter.lease_key(""), LEASE_SECONDS, self.worker]
        for rid, lease, page, priority, payload in held:
            args += [rid, lease, str(page), priority, payload]  # a page's fingerprint is its number (.dupefilter)
        return [
            rid.decode() if isinstance(rid, bytes) else str(rid) for rid in self._once("write_back", keys, args, call)
        ]

    def not_written_back(self, workers: set[str]) -> set[str]:
        """Of these workers and the live ones, those other than this one that did not write back what they
        hold since Redis lost its state."""
        live = {w.decode() for w in self.server.zrange(self.k("live"), 0, -1)}
        written = {w.decode() for w in self.server.smembers(self.k("written"))}
        return (set(workers) | live) - written - {self.worker}

    def ack(self, ids: Sequence[str], call: int | None = None) -> list[tuple[str, int]]:
        """These requests' pages are settled; (lease, its requests still open) for each (``send``'s ack)."""
        if not ids:
            return []
        return cast("list[tuple[str, int]]", self.send([("ack", [(rid, "", "") for rid in ids])], call)[0])

    def open_requests(self, lease: str) -> int:
        return int(self.server.hget(self.k("open"), lease) or 0)

    def __len__(self) -> int:
        return self.server.zcard(self.k("queue"))

    def busy(self) -> bool:
        """Whether the queue or any live worker's in-flight set holds requests, or another live worker
        is taking keywords on (claiming, or adopting a stopped worker's)."""
        busy, live = self.scripts["busy"](keys=[self.k("live"), self.k("queue")], args=[self.worker, self.key])
        self.live_seen = {w.decode() for w in live}
        return bool(busy)

    def beat(self, timeout: float | None, look: bool = True, most: int = 100, call: int | None = None) -> Beat:
        """The heartbeat in one call: this worker is alive, and what it learns (``Beat``). With ``timeout``
        (s), a maintenance beat: workers silent that long are ``requeue_dead``'s. ``look``: whether any
        work is left is looked at (else ``busy`` says True)."""
        keys = [self.k("calls:" + self.worker), self.k("live"), self.k("epoch"), self.k("inbox:" + self.worker)]
        maintain = "1" if timeout is not None else ""
        args = [self.worker, maintain, int((timeout or 0) * 1000), self.key, most, "1" if look else ""]
        args = [*self.calls.head(call), *args]
        _, epoch, inbox, requeued, adopted, look_up, busy, live = self.scripts["beat"](
            keys=[*keys, self.k("queue")], args=args
        )
        self.live_seen = {w.decode() for w in live}
        return Beat(
            epoch.decode() if isinstance(epoch, bytes) else epoch,
            [tuple(item.decode().split(" ", 1)) for item in inbox],
            int(requeued),
            [lease.decode() for lease in adopted],
            [w.decode() for w in look_up],
            bool(busy),
        )

    # --- workers and keywords ------------------------------------------------

    def went_back(self, command: "Command | None" = None) -> bool:
        """Whether Redis went back in time (another server holds the state: restarted from an older
        snapshot, a replica promoted), its state then dropped as by a flush; ``command``: a new
        connection's (farm.crawl.backends.redis.link), checked before any other call is made on it."""
        pattern = re.sub(r"([\\*?\[\]])", r"\\\1", self.key) + ":*"  # the key's glob characters taken as they are
        args = [self.k("server"), pattern, self.k("pace"), self.k("proxies:")]
        if command is None:
            return bool(self.server.eval(self._went_back, 1, *args))
        return bool(command("EVAL", self._went_back, 1, *args))

    def heartbeat(self) -> tuple[int, str]:
        """(Redis' time in ms, the shared epoch, '' when Redis lost everything)."""
        now, epoch = self.scripts["heartbeat"](keys=[self.k("live"), self.k("epoch")], args=[self.worker])
        return int(now), epoch.decode() if isinstance(epoch, bytes) else epoch

    def start_epoch(self) -> str:
        """The shared epoch, made now if there is none: a fresh one (FRESH_EPOCH), which says nothing
        was rebuilt (a worker that held work under another epoch finds Redis lost everything)."""
        self.server.set(self.k("epoch"), FRESH_EPOCH + uuid.uuid4().hex, nx=True)
        return cast(bytes, self.server.get(self.k("epoch"))).decode()  # set above, unless Redis lost it since

    def take_rebuild_lock(self, lifetime: float) -> bool:
        """After Redis lost everything: whether this worker is to rebuild the queue (it holds the lock,
        for ``lifetime`` s; False when another worker rebuilt it already or holds the lock)."""
        keys = [self.k("epoch"), self.k("rebuild")]
        return bool(self.scripts["rebuild_lock"](keys=keys, args=[self.worker, int(lifetime), FRESH_EPOCH]))

    def new_epoch(self, epoch: str, holders: dict[str, list[str]]) -> str:
        """End a rebuild: each worker's leases (``holders``) listed again, ``epoch`` set, the lock released."""
        args = [epoch]
        for holder, leases in holders.items():
            for lease in leases:
                args += [lease, holder]
        keys = [self.k("epoch"), self.k("rebuild"), self.k("owner"), self.k("written")]
        self.scripts["new_epoch"](keys=keys, args=args)
        return epoch

    def requeue_dead(self, timeout: float, call: int | None = None) -> tuple[int, list[str], list[str]]:
        """Put back the in-flight requests of workers silent for ``timeout`` s; (how many, leases
        adopted, workers whose keywords this one now takes on from the keyword table)."""
        requeued, adopted, look_up = self._once(
            "requeue_dead", [self.k("live"), self.k("queue")], [int(timeout * 1000), self.worker, self.key], call
        )
        return int(requeued), [lease.decode() for lease in adopted], [w.decode() for w in look_up]

    def claiming(self) -> None:
        """This worker is about to claim: live, and taking keywords on, before the claim commits (a
        survivor looks its keywords up in the keyword table should it stop before it lists them)."""
        self.heartbeat()
        self.server.sadd(self.k("taking:" + self.worker), self.worker)

    def taking(self) -> set[str]:
        """The workers whose keywords this one is taking on."""
        return {w.decode() for w in self.server.smembers(self.k("taking:" + self.worker))}

    def hold(self, leases: list[str], taken_from: str | None = None) -> None:
        """This worker claimed (or adopted) these leases: a survivor adopts them if it dies. With
        ``taken_from``, they are all the keyword table listed for that worker (or for this one's claim)."""
        if leases or taken_from is not None:
            self.send([("hold", [taken_from or "", *leases])])

    def ended(self, lease: str, outcome: str) -> str:
        """The lease's keyword ended: its queued requests are dropped, its owner told. Returns the owner."""
        return cast(str, self.send([("end", [(lease, outcome)])])[0][0])

    def adopted_by_others(self) -> set[tuple[int, int]]:
        """(keyword id, token) of the leases another worker owns (claimed, or adopted from a worker
        that stopped): a restarted worker does not take those back."""
        out = set()
        for name, owner in self.server.hgetall(self.k("owner")).items():
            if owner.decode() != self.worker:
                kid, _, token = name.decode().partition(":")
                out.add((int(kid), int(token)))
        return out

    def own_leases(self) -> set[str]:
        """The leases Redis lists as this worker's."""
        owners = self.server.hgetall(self.k("owner")).items()
        return {name.decode() for name, owner in owners if owner.decode() == self.worker}

    def inbox(self, most: int = 100, call: int | None = None) -> list[tuple[str, str]]:
        """(lease, outcome) of this worker's leases that other workers ended."""
        items = self._once("inbox", [self.k("inbox:" + self.worker)], [most], call)
        return [tuple(item.decode().split(" ", 1)) for item in items]

    def leave(self) -> int:
        """A clean close: what this worker took and did not settle goes back in the queue, and it is no
        longer live. Nothing shared is deleted. Returns how many requests went back."""
        keys = [
            self.k("live"),
            self.k("queue"),
            self.k("taken:" + self.worker),
            self.k("inbox:" + self.worker),
            self.k("taking:" + self.worker),
            self.k("calls:" + self.worker),
        ]
        return int(self.scripts["leave"](keys=keys, args=[self.worker]))

    # --- the site's pace -------------------------------------------------------

    def set_rate(self, rate: float) -> None:
        self.server.hset(self.k("pace"), "interval", int(1000 / rate) if rate > 0 else 0)

    def back_off(self, base: float, most: float, retry_after: float | None = None, call: int | None = None) -> int:
        args = ["back_off", int(base * 1000), int(most * 1000), int((retry_after or 0) * 1000)]
        return int(self._once("pace", [self.k("pace")], args, call))

    def ease(self, base: float, most: float, call: int | None = None) -> int:
        return int(self._once("pace", [self.k("pace")], ["ease", int(base * 1000), int(most * 1000), 0], call))
