"""A site's identities: each proxy of FARM_PROXIES (or this machine's own address when there are
none), each with its own pace, back-off, health and learned pace.

A real site tolerates a pace from each client it sees, an address and the session it earned there,
so the pace belongs to the identity: FARM_<SITE>_RATE is one identity's pace, and the fleet's take
grows with its identities. A page request leaves the farm scheduler through the next identity whose
pace allows it now (round robin among those ready); with none ready it waits parked, and the engine
is woken when the first is. FARM_<SITE>_CEILING, when set, caps the sum: it is the site's own pace
(farm.crawl.pace), kept in front of the identities.

A refusal (a block, a wall the browser could not pass, an answer farm does not understand) is the
identity's that drew it, never the site's:

- its pace backs off (the gap doubles from FARM_BLOCK_BASE_DELAY up to FARM_BLOCK_MAX_DELAY, at least a
  Retry-After) and good answers ease it back by halves, as the site's pace did;
- its learned pace drops by half (a multiplicative decrease, never below a tenth of the setting), and
  each good answer adds back a hundredth of the setting (a slow additive increase, never above it): an
  identity a site holds to a lower pace settles just under that pace, and the others keep theirs;
- a proxy is quarantined (out of the round) for FARM_PROXY_QUARANTINE seconds, doubled for each
  quarantine in a row without a good answer between (at most 16 times): when slowing down is not enough
  the cool-down grows. This machine's own address is never quarantined: there is nothing to send through
  instead, and its back-off does the waiting.

A proxy that cannot be reached is quarantined without slowing anything. Server errors and outages are
the site's trouble: they back off the site's pace (farm.middlewares.blocks).

The learned paces are kept (farm.state.identities: per site and identity, in the database) and the next
run starts from them. An identity is named by its proxy's id (a hash of its URL: no credentials) and
shown by its label, the URL with its password masked (farm.crawl.proxies.Proxy); this machine's own
address is ``direct``.

State, for farm stats and the metrics: ``working``, ``cooling`` (backed off, or paced below the
setting after refusals) or ``quarantined``. The crawl's stats carry each identity's pages, blocks,
learned pace and state under ``farm/identity/<label>/...``, and farm.sessions.middleware adds the
sessions it earned (``sessions``) and the pages those sessions served (``session_pages``); the run's
row takes them every second while the crawl runs (farm.extensions.walls) and whole at its end.
"""

import random
import time
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass

from scrapy import Request
from scrapy.statscollectors import StatsCollector

from farm.crawl.meta import FarmMeta
from farm.crawl.pace import SitePace
from farm.crawl.proxies import MIN_WAIT, Proxy, ProxyPool

DIRECT = "direct"  # the id and label of this machine's own address
DECREASE = 0.5  # the learned pace's share kept after a refusal
INCREASE = 0.01  # the setting's share a good answer adds back to the learned pace
FLOOR = 0.1  # the setting's share the learned pace never goes below
MAX_COOL_DOWN = 16  # a quarantine grows to at most this many times FARM_PROXY_QUARANTINE
STATES = ("working", "cooling", "quarantined")


def label_of(proxy_url: str) -> str:
    """The label of the identity a proxy URL stands for (its password masked); "" is ``direct``."""
    return Proxy.of(proxy_url).label if proxy_url else DIRECT


class IdentityPace(SitePace):
    """One identity's pace: SitePace's jittered gap and back-off, at the pace the identity learned.

    ``rate`` is the setting (0: no limit, nothing to learn); ``learned`` the pace it starts from (a
    past run's, clamped to the floor and the setting), else the setting."""

    def __init__(
        self,
        rate: float,
        base_delay: float,
        max_delay: float,
        learned: float | None = None,
        clock: Callable[[], float] = time.monotonic,
        jitter: Callable[[], float] = random.random,
    ):
        super().__init__(rate, base_delay, max_delay, clock, jitter)
        self.rate = rate
        self.floor = rate * FLOOR
        self.learned = rate
        if learned is not None:
            self.learn(learned)

    def learn(self, rate: float) -> None:
        """Go at ``rate`` (clamped to the floor and the setting); no limit stays no limit."""
        if self.rate > 0:
            self.learned = min(self.rate, max(self.floor, rate))
            self.interval = 1 / self.learned

    def slowed(self) -> None:
        """A refusal at this pace: the multiplicative decrease."""
        self.learn(self.learned * DECREASE)

    def recovered(self) -> None:
        """A good answer: the slow additive increase back towards the setting."""
        if self.rate > 0 and self.learned < self.rate:
            self.learn(self.learned + self.rate * INCREASE)


@dataclass(eq=False)
class Identity:
    """One identity of a site: its proxy (None: this machine's own address) and its pace."""

    proxy: Proxy | None
    pace: IdentityPace
    pages: int = 0  # good answers through it, this run
    blocks: int = 0  # refusals it drew, this run
    strikes: int = 0  # quarantines in a row without a good answer between

    @property
    def id(self) -> str:
        return self.proxy.id if self.proxy is not None else DIRECT

    @property
    def label(self) -> str:
        return self.proxy.label if self.proxy is not None else DIRECT


class Identities:
    """The identities of one site in this process (``pool``: FARM_PROXIES' quarantine, shared between
    workers by farm.crawl.backends.redis.proxies; None without proxies)."""

    def __init__(
        self,
        pool: ProxyPool | None,
        make_pace: Callable[[str], IdentityPace],
        stats: StatsCollector | None = None,
        clock: Callable[[], float] = time.monotonic,
    ):
        self.pool = pool
        self.stats = stats
        self.clock = clock
        proxies: Iterable[Proxy | None] = pool.proxies if pool is not None else [None]
        self.identities = [Identity(proxy, make_pace(proxy.id if proxy is not None else DIRECT)) for proxy in proxies]
        self.by_id = {identity.id: identity for identity in self.identities}
        self._next = 0

    def __len__(self) -> int:
        return len(self.identities)

    def __iter__(self) -> Iterator[Identity]:
        return iter(self.identities)

    # --- sending ------------------------------------------------------------------------------

    def take(self, request: Request) -> float:
        """Send ``request`` through the next identity ready now: 0. None ready: the seconds until one is."""
        now = self.clock()
        count = len(self.identities)
        soonest = float("inf")
        for step in range(count):
            index = (self._next + step) % count
            identity = self.identities[index]
            wait = max(self.quarantined_for(identity, now), identity.pace.wait())
            if wait <= 0:
                self._next = index + 1
                self._send(identity, request)
                return 0.0
            soonest = min(soonest, wait)
        if self.pool is not None and all(self.quarantined_for(i, now) > 0 for i in self.identities):
            self.pool.none_free(soonest)
        return max(MIN_WAIT, soonest)

    def _send(self, identity: Identity, request: Request) -> None:
        identity.pace.taken()
        FarmMeta.of(request).identity = identity.id
        if identity.proxy is not None and self.pool is not None:
            self.pool.send_through(identity.proxy, request)

    def quarantined_for(self, identity: Identity, now: float) -> float:
        """Seconds the identity's quarantine has left (0: none)."""
        if self.pool is None or identity.proxy is None:
            return 0.0
        return max(0.0, self.pool.until.get(identity.id, 0.0) - now)

    def of(self, request: Request) -> Identity | None:
        """The identity ``request`` went through (None: not one of this site's)."""
        farm = FarmMeta.of(request)
        return self.by_id.get(farm.identity or farm.proxy or "")

    # --- what came back -----------------------------------------------------------------------

    def answered(self, request: Request) -> None:
        """A good answer: the identity's back-off eases, its learned pace creeps back up."""
        identity = self.of(request)
        if identity is None:
            return
        identity.pages += 1
        identity.strikes = 0
        identity.pace.eased()
        was = identity.pace.learned
        identity.pace.recovered()
        if identity.pace.learned != was:
            self.learned(identity)
        self._inc(f"farm/identity/{identity.label}/pages")

    def refused(self, request: Request, why: str, retry_after: float | None = None) -> Identity | None:
        """A refusal the identity drew: it backs off, slows down and (a proxy) is quarantined."""
        identity = self.of(request)
        if identity is None:
            return None
        identity.blocks += 1
        identity.pace.back_off(retry_after)
        identity.pace.slowed()
        self.learned(identity)
        self._inc(f"farm/identity/{identity.label}/blocks")
        self._quarantine(identity, why)
        return identity

    def unreachable(self, request: Request, why: str) -> bool:
        """The request's proxy could not be reached: quarantined, nothing slowed. False: no proxy."""
        identity = self.of(request)
        if identity is None or identity.proxy is None:
            return False
        return self._quarantine(identity, why)

    def _quarantine(self, identity: Identity, why: str) -> bool:
        if self.pool is None or identity.proxy is None:
            return False
        seconds = self.pool.quarantine_seconds * min(MAX_COOL_DOWN, 2**identity.strikes)
        identity.strikes += 1
        return self.pool.quarantine(identity.id, why, seconds)

    def learned(self, identity: Identity) -> None:
        """The identity's learned pace changed (farm.crawl.backends.redis shares it)."""

    # --- what is seen -------------------------------------------------------------------------

    def state(self, identity: Identity) -> str:
        if self.quarantined_for(identity, self.clock()) > 0:
            return "quarantined"
        pace = identity.pace
        if pace.penalty > pace.interval or pace.learned < pace.rate:
            return "cooling"
        return "working"

    def learned_paces(self) -> dict[str, float]:
        """id -> learned pace of each identity paced below its setting (what the next run starts from)."""
        return {i.id: i.pace.learned for i in self.identities if i.pace.rate > 0}

    def seen(self) -> list[dict[str, object]]:
        """Each identity as farm stats and the metrics show it: label, pages, blocks, learned pace, state."""
        return [
            {
                "identity": i.label,
                "pages": i.pages,
                "blocks": i.blocks,
                "pace": round(i.pace.learned, 4),
                "rate": i.pace.rate,
                "state": self.state(i),
            }
            for i in self.identities
        ]

    def note_stats(self) -> None:
        """Each identity's learned pace and state into the crawl's stats (at its end)."""
        if self.stats is None:
            return
        for row in self.seen():
            label = row["identity"]
            self.stats.set_value(f"farm/identity/{label}/pace", row["pace"])
            self.stats.set_value(f"farm/identity/{label}/state", row["state"])

    def _inc(self, key: str) -> None:
        if self.stats is not None:
            self.stats.inc_value(key)
