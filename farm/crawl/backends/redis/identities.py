"""The identities' paces every worker shares (FARM_REDIS_URL): no two workers drive one proxy at twice its pace.

Each identity's turns are handed out by Redis (``<FARM_REDIS_PREFIX>:<site>:identities:turns``, a hash of
identity id -> when its next turn begins, scripts/identity_turn.lua): a worker with a request to send
asks for an identity's next turn on the Redis link's thread, and Redis spaces the turns of every worker
by the identity's gap (jittered as one worker's would be). The worker sends through the identity once
its turn has come, and asks again for the next request; a turn not used within a quarter of the gap
is let go, so that a late one never lands just before another worker's. Until the answer comes the
identity waits, and the engine is woken when it does. An identity with no pace (a rate of 0, no
back-off) asks Redis nothing.

The learned paces are shared too (``identities:learned``: identity -> thousandths of a request a second):
a worker writes its own as they change, reads them all when it starts, and each answer to a turn carries
the identity's as the workers left it last, so that one worker's lesson slows every worker at its next
turn. The quarantines are the proxy pool's
(farm.crawl.backends.redis.proxies).
"""

from __future__ import annotations

import logging
import random
from collections.abc import Callable
from importlib.resources import files
from typing import TYPE_CHECKING, Any, cast

from farm.crawl.identities import Identities, Identity, IdentityPace

if TYPE_CHECKING:
    from twisted.internet.defer import Deferred
    from twisted.python.failure import Failure

    from farm.crawl.backends.redis.link import RedisLink
    from farm.crawl.proxies import ProxyPool

logger = logging.getLogger(__name__)

# Seconds an identity waiting for Redis' answer is looked at again, should the answer's wake be lost.
ASKING = 1.0
# The share of its gap within which a turn must be used, else it is let go.
SLACK = 0.25


class SharedIdentityPace(IdentityPace):
    """One identity's pace, its turns handed out by Redis."""

    def __init__(
        self,
        rate: float,
        base_delay: float,
        max_delay: float,
        learned: float | None,
        *,
        identity: str,
        link: RedisLink,
        key: str,
        learned_key: str,
        wake: Callable[[], None],
        **kwargs: Any,
    ) -> None:
        super().__init__(rate, base_delay, max_delay, learned, **kwargs)
        self.identity = identity  # its name in Redis: the proxy's id, or direct:<host name>
        self.link = link
        self.key = key  # identities:turns
        self.learned_key = learned_key  # identities:learned
        self.wake = wake
        self.turn: float | None = None  # when (clock) the turn this worker holds begins
        self._asking = False
        source = files("farm.crawl.backends.redis") / "scripts"
        self._script = link.server.register_script((source / "identity_turn.lua").read_text())

    def wait(self) -> float:
        backed_off = super().wait()  # the identity's back-off, at this worker
        gap = self.gap
        if backed_off > 0 or not gap:
            return backed_off
        now = self.clock()
        if self.turn is not None and now > self.turn + gap * SLACK:
            self.turn = None  # let go: it would land too close to the next worker's
        if self.turn is None:
            self._ask(gap)
            return ASKING
        return max(0.0, self.turn - now)

    def taken(self) -> None:
        self.turn = None  # the next request asks for the next turn

    def _ask(self, gap: float) -> None:
        if self._asking:
            return
        self._asking = True
        d = self.link.run(
            self._script, keys=[self.key, self.learned_key], args=[self.identity, int(gap * 1000), random.random()]
        )
        d.addCallback(self._given)
        d.addErrback(self._failed)
        d.addBoth(self._answered)

    def _given(self, reply: list[Any]) -> None:
        ms, learned = reply
        self.turn = self.clock() + int(ms) / 1000
        if learned:  # the pace the workers learned last, this one's or another's
            self.learn(int(learned) / 1000)
        self.wake()

    def share(self) -> Deferred[None]:
        """Write this worker's learned pace for every worker (on the link's thread)."""
        return self.link.run(self._write_learned, round(self.learned * 1000))

    def _write_learned(self, thousandths: int) -> None:
        self.link.server.hset(self.learned_key, self.identity, thousandths)

    def _answered(self, _: object) -> None:
        self._asking = False

    def _failed(self, failure: Failure) -> None:
        # the link rides out an outage for FARM_OUTAGE_GRACE, and the shared work then closes the crawl
        logger.warning("farm: asking Redis for an identity's turn failed: %s", failure.getErrorMessage())


class SharedIdentities(Identities):
    """The identities of one site, their turns and learned paces shared through Redis."""

    def __init__(
        self,
        pool: ProxyPool | None,
        make_pace: Callable[[str], SharedIdentityPace],
        link: RedisLink,
        key: str,
        **kwargs: Any,
    ) -> None:
        super().__init__(pool, make_pace, **kwargs)
        self.link = link
        self.key = key  # identities:learned
        learned = self.read_learned()  # before the first request: the other workers' lessons
        for identity in self.identities:
            pace = cast(SharedIdentityPace, identity.pace)
            if pace.identity in learned:
                pace.learn(learned[pace.identity])

    def read_learned(self) -> dict[str, float]:
        """Redis' name of each identity -> its learned pace, as the workers left them. Blocking: at start."""
        raw = self.link.server.hgetall(self.key)
        return {name.decode(): int(value) / 1000 for name, value in raw.items()}

    def learned(self, identity: Identity) -> None:
        d = cast(SharedIdentityPace, identity.pace).share()
        d.addErrback(
            lambda failure: logger.warning("farm: sharing a learned pace failed: %s", failure.getErrorMessage())
        )
