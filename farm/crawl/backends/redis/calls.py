"""The shared queue's Lua scripts, registered, and the call ids that let a call be made again.

A script that must not run twice (a send, a pop, a heartbeat, an adoption, a back-off) takes a call
id: when its reply is lost (Redis stalled past the socket timeout, a reset, a failover), the link
makes the same call again, and the script answers what it answered the first time
(scripts/once.lua), keeping the replies it could not find again. A call made for the first time does
not look for its reply.
"""

import itertools
import random
from importlib.resources import files
from typing import TYPE_CHECKING

from redis.commands.core import Script

if TYPE_CHECKING:  # not at run time: the link imports the reactor
    from farm.crawl.backends.redis.link import BytesRedis


SCRIPTS = (
    "send",
    "pop",
    "heartbeat",
    "requeue_dead",
    "pace",
    "leave",
    "inbox",
    "rebuild_lock",
    "new_epoch",
    "write_back",
    "busy",
)
ONCE = (
    "requeue_dead",
    "pace",
    "inbox",
    "write_back",
)  # wrapped in scripts/once.lua (pop and send do it themselves)
OPEN_COUNT = ("pop", "write_back")  # headed by scripts/open.lua: they keep the keywords' open counts
NEW_IDS = ("send", "write_back")  # headed by scripts/ids.lua: they make request ids
CALLS_KEPT = 256  # a worker's calls whose replies are kept: the last ones, made again should a reply be lost
CALLS_FORGOTTEN = 64  # the old calls are forgotten this many at a time (one HDEL), the last 192 always kept
CALLS_KEPT_MS = 3600 * 1000  # and for how long after its last call (well past FARM_OUTAGE_GRACE)


def script_text(name: str) -> str:
    """scripts/<name>.lua, read from the package (a scrapyd egg's zip too)."""
    return (files("farm.crawl.backends.redis") / "scripts" / f"{name}.lua").read_text()


def register_scripts(server: "BytesRedis") -> dict[str, Script]:
    """SCRIPTS and the beat, registered on ``server`` by name: ONCE's wrapped in scripts/once.lua,
    OPEN_COUNT's headed by scripts/open.lua, NEW_IDS's by scripts/ids.lua."""
    once, open_count, new_ids = script_text("once"), script_text("open"), script_text("ids")
    scripts = {}
    for name in SCRIPTS:
        text = script_text(name)
        text = open_count + text if name in OPEN_COUNT else text
        text = new_ids + text if name in NEW_IDS else text
        scripts[name] = server.register_script(once.replace("--SCRIPT--", text) if name in ONCE else text)
    beat = script_text("beat")
    for part in ("requeue_dead", "busy"):  # a Redis script cannot call another: the beat holds them
        beat = beat.replace(f"--{part.upper()}--", script_text(part))
    scripts["beat"] = server.register_script(beat)
    return scripts


class CallIds:
    """A worker's call ids, made in order from a random start, and the old ones whose replies it
    forgets: never more than CALLS_KEPT kept."""

    def __init__(self) -> None:
        self._next = itertools.count(random.randrange(1 << 48))
        self._forgotten: int | None = None  # the last id forgotten (None: none yet, the calls' lifetime not set)
        self._made = -1  # the highest id made so far: a call above it is made for the first time

    def new(self) -> int:
        """An id for a call that must not run twice: made again with it, the call answers as it did."""
        return next(self._next)

    def head(self, call: int | None) -> list[int | str]:
        """What a script's arguments begin with for ``call`` (a new id when None): the id, how long
        the replies are kept, the ids it forgets, whether it is made for the first time."""
        call = self.new() if call is None else call
        return [call, CALLS_KEPT_MS, *self._forget(call), self._first(call)]

    def _forget(self, call: int) -> list[int | str]:
        """The old call ids this call forgets, ['', ''] when none: every CALLS_FORGOTTEN calls, the
        CALLS_KEPT before the last CALLS_KEPT - CALLS_FORGOTTEN (one HDEL; a run a call lost is forgotten
        with the next), the calls' lifetime renewed with it."""
        last = call - (CALLS_KEPT - CALLS_FORGOTTEN)
        if self._forgotten is not None and last - self._forgotten < CALLS_FORGOTTEN:
            return ["", ""]
        self._forgotten = last
        return [last - CALLS_KEPT + 1, last]

    def _first(self, call: int) -> str:
        """'1' when the call is made for the first time ('' when made again, or it may have been): no reply of
        it can be kept, and the script does not look for one. Call ids are made in the order they are
        used (an id made and used later only looks once more)."""
        first = call > self._made
        self._made = max(self._made, call)
        return "1" if first else ""
