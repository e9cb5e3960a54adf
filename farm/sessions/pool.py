"""Sessions by site and proxy: one current session each, earned once however many requests meet the wall.

A session is retired when the site refuses it (a wall answered to a request that carried it), when it is
older than FARM_SESSION_MAX_AGE or has been sent FARM_SESSION_MAX_USES times; the next request then goes
without it, meets the wall and earns a new one. Requests that meet the wall while a session is being earned
for the same key wait for that one (single flight): a wall costs one browser page, not one per request.
A pass that fails (a slider, a timeout) is remembered for FARM_BROWSER_COOLDOWN seconds, so that a site that
refuses the browser does not get a browser page for every request meanwhile.

A session the site answers with its wall after it has served pages has run out (of age or of uses, by the
site's own count): how long it lived and how many pages it served are learned, and the next session is
earned in the background once the current one has lived RENEW_AHEAD of that (or of FARM_SESSION_MAX_AGE,
FARM_SESSION_MAX_USES), or sooner when what is left would not outlast twice the latest pass, so that
requests find a new one ready instead of waiting on the browser. A session earned ahead waits, ready, until
the current one is retired or has served as many pages, or lived as long, as the shortest learned life;
then it takes over; while none is ready, a request due after the current one's learned end waits for the
one under way rather than meet the wall (``due``). When the crawl uses sessions up faster than the browser
earns one (more than one session's pages go by in a pass), as many more are earned at once as are used up in
a pass, at most FARM_SESSIONS_AHEAD under way or ready for one site and proxy: each through that proxy, for
it alone. A request the site answers with its wall on a session that served nothing, and then again on the
next one, earned on that request's own wall page, is the site's refusal of the client, not a session run out
(farm.sessions.middleware): the refusal is remembered for FARM_BROWSER_COOLDOWN seconds like a failed pass
(``refused_at_first_use``).
"""

import asyncio
import itertools
import time
from collections import deque
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field

from farm.errors import WallNotPassed
from farm.sessions.identity import ClientIdentity
from farm.sessions.wall import Wall

SessionKey = tuple[str, str]  # (site, proxy URL or "")
RENEW_AHEAD = 0.6  # of a session's known life (age or uses) after which the next one is earned in the background
LIVES_KEPT = 5  # sessions whose life is learned from: the latest ones that ran out
SHORTEST_AGE_LIMIT = 10.0  # seconds: a session that ran out sooner ran out by its uses, not its age


@dataclass(frozen=True)
class SessionLife:
    """A session that ran out: the pages it served, the seconds from its pass to its end, and those it was
    in use (a session earned ahead waits before it is used)."""

    answers: int
    seconds: float
    in_use: float


@dataclass(eq=False)
class SiteSession:
    key: SessionKey
    identity: ClientIdentity
    cookies: dict[str, str]
    wall: str  # the wall whose pass earned it
    earned_at: float
    serial: int
    used_from: float = 0.0  # when it became the current session
    uses: int = 0
    retired: str | None = field(default=None)
    # an unknown wall's session is proven by its first answer getting data (farm.sessions.watch): None until
    # then; a known wall's is not judged (its cookie arrived)
    proven: bool | None = None
    proving: bool = False
    answers: int = 0  # answers to its requests that were not the wall
    passed: Wall | None = None  # the wall whose pass earned it (renewed ahead through the same page)

    def cookie_header(self) -> str:
        return "; ".join(f"{name}={value}" for name, value in self.cookies.items())


Earn = Callable[[Wall, ClientIdentity, str], Awaitable[dict[str, str]]]


class SessionPool:
    def __init__(
        self,
        earn: Earn,
        max_age: float,
        max_uses: int,
        cooldown: float,
        clock: Callable[[], float] = time.monotonic,
        on_earned: Callable[[SiteSession, float], None] | None = None,
        most_ahead: int = 1,
    ):
        self._earn = earn  # (wall, identity, proxy) -> the cookies a browser earned
        self.max_age = max_age
        self.max_uses = max_uses  # 0: no limit
        self.cooldown = cooldown
        self.clock = clock
        self.on_earned = on_earned  # (session, seconds it took): once a session, however many waited
        self.most_ahead = most_ahead  # sessions of one key earned ahead at once, under way or ready (0: none)
        self._current: dict[SessionKey, SiteSession] = {}
        self._ready: dict[SessionKey, deque[SiteSession]] = {}  # earned ahead, waiting to take over
        self._earning: dict[SessionKey, list[asyncio.Future]] = {}  # under way, the earliest first
        self._failed: dict[SessionKey, tuple[float, WallNotPassed]] = {}
        self._serials = itertools.count(1)
        self._lives: deque[SessionLife] = deque(maxlen=LIVES_KEPT)  # the latest sessions that ran out
        self.retired: dict[str, int] = {}  # why -> how many
        self._loop: asyncio.AbstractEventLoop | None = None  # the loop sessions are earned on
        self._earn_seconds = 1.0  # the latest pass's time in the browser
        self.ahead = 0  # sessions earned in the background before the current one ran out

    def current(self, key: SessionKey) -> SiteSession | None:
        """The session to send with the next request of ``key``, counted as used; None: go without."""
        session = self._live(key)
        if session is None:
            return None
        if self._ready.get(key) and self._lived_out(session):
            self.retire(session, "renewed")  # one earned ahead takes over; requests it went out with still count
            session = self._live(key)
            if session is None:
                return None
        session.uses += 1
        self._renew_ahead(session)
        return session

    def due(self, key: SessionKey) -> asyncio.Future | None:
        """The earning to wait for before the next request of ``key`` is sent: its current session has served
        as many pages, or lived as long, as the shortest life learned, none is ready, and the next is under way.
        Sent now, the request would meet the wall (a request the site counts against the client) and be sent
        again once that earning ends; None: send now."""
        session = self._current.get(key)
        under_way = self._earning.get(key)
        if session is None or not under_way or self._ready.get(key) or not self._lived_out(session):
            return None
        return under_way[0]

    def _live(self, key: SessionKey) -> SiteSession | None:
        """The current session of ``key`` within FARM_SESSION_MAX_AGE and FARM_SESSION_MAX_USES, else the
        next one ready (made current), else None."""
        while True:
            session = self._current.get(key)
            if session is None:
                ready = self._ready.get(key)
                if not ready:
                    return None
                session = self._current[key] = ready.popleft()
                session.used_from = self.clock()
            if self.clock() - session.earned_at >= self.max_age:
                self.retire(session, "age")
            elif self.max_uses and session.uses >= self.max_uses:
                self.retire(session, "uses")
            else:
                return session

    def _lived_out(self, session: SiteSession) -> bool:
        """Whether ``session`` has served as many pages, or lived as long, as the shortest life learned. A life
        that ended within SHORTEST_AGE_LIMIT seconds ended by its uses: no site limits its sessions' age so
        tightly, and taking it for one would retire every session earned ahead that waited ready that long."""
        if not self._lives:
            return False
        if session.uses >= min(life.answers for life in self._lives):
            return True
        ages = [life.seconds for life in self._lives if life.seconds >= SHORTEST_AGE_LIMIT]
        return bool(ages) and self.clock() - session.earned_at >= min(ages)

    def answered(self, session: SiteSession) -> None:
        """An answer to a request ``session`` was sent with that was not the wall."""
        session.answers += 1

    def ran_out(self, session: SiteSession) -> bool:
        """Whether ``session``, which the wall answered, had served pages: then it ran out (of age or of uses,
        by the site's count), and how long it lived and how many pages it served are learned."""
        if not session.answers:
            return False
        now = self.clock()
        self._lives.append(
            SessionLife(session.answers, now - session.earned_at, now - (session.used_from or session.earned_at))
        )
        return True

    def refused_at_first_use(self, session: SiteSession, wall: Wall) -> None:
        """The site refuses the client that earned ``session``: it is retired, and the refusal remembered for
        the cooldown (no browser page for its site and proxy meanwhile)."""
        self.retire(session, "refused_at_first_use")
        self._ready.pop(session.key, None)  # earned by the client the site refuses
        refusal = WallNotPassed(
            wall.name, "refused", "the site refused the session the browser earned on its first use"
        )
        self._failed[session.key] = (self.clock(), refusal)

    def _renew_ahead(self, session: SiteSession) -> None:
        """The next session earned in the background once ``session`` nears the end of its known life, and
        more at once while the crawl uses up more than one in a pass (``wanted``)."""
        key = session.key
        if session.passed is None or key in self._failed:
            return
        stock = len(self._earning.get(key, ())) + len(self._ready.get(key, ()))
        if stock >= self.wanted():
            return
        if not stock and not self._nearing_end(session):
            return
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            loop = None
        if loop is None or loop is not self._loop:  # outside the loop sessions are earned on: none in the background
            return
        pending = self._start(key, session.passed, session.identity)
        pending.add_done_callback(_retrieved)
        self.ahead += 1

    def _nearing_end(self, session: SiteSession) -> bool:
        """At RENEW_AHEAD of its life, or earlier when what is left would not outlast twice the latest pass."""
        ages = [self.max_age] + [life.seconds for life in self._lives]
        uses = ([self.max_uses] if self.max_uses else []) + [life.answers for life in self._lives]
        age = self.clock() - session.earned_at
        lead = 2 * self._earn_seconds
        latest = self._lives[-1] if self._lives else None
        rate = latest.answers / max(latest.in_use, 0.001) if latest else 0.0  # uses a second
        age_left = min(ages) - age
        uses_left = max(uses) - session.uses if uses else float("inf")
        return not (
            age < RENEW_AHEAD * min(ages)
            and age_left > lead
            and (not uses or session.uses < RENEW_AHEAD * max(uses))
            and uses_left > rate * lead
        )

    def wanted(self) -> int:
        """Sessions of one key to have under way or ready: one, and one more for each session the crawl used
        up in the time of a pass (by the latest life learned), at most ``most_ahead``."""
        latest = self._lives[-1] if self._lives else None
        if latest is None:
            return min(self.most_ahead, 1)
        used_in_a_pass = self._earn_seconds / max(latest.in_use, 0.001)
        return min(self.most_ahead, 1 + int(used_in_a_pass))

    def sent(self, key: SessionKey, serial: int | None) -> SiteSession | None:
        """The session a request was sent with (its ``serial``), while it is still the current one of ``key``."""
        session = self._current.get(key)
        return session if session is not None and session.serial == serial else None

    def retire(self, session: SiteSession, why: str) -> None:
        if self._current.get(session.key) is session:
            del self._current[session.key]
            session.retired = why
            self.retired[why] = self.retired.get(why, 0) + 1

    def unproven(self, session: SiteSession, detail: str) -> WallNotPassed:
        """``session``'s first answer got no data: it is retired and its wall counted as not passed (the
        browser cools down for the key, as after any wall it cannot pass)."""
        self.retire(session, "unproven")
        failed = WallNotPassed(session.wall, "unproven", detail)
        self._failed[session.key] = (self.clock(), failed)
        return failed

    async def renew(
        self, key: SessionKey, wall: Wall, identity: ClientIdentity, refused: SiteSession | None
    ) -> SiteSession:
        """A session for ``key`` newer than ``refused`` (the one the wall answered, retired here): the one
        being earned, one earned meanwhile, or a new one earned now. WallNotPassed when the browser cannot."""
        self._loop = asyncio.get_running_loop()
        if refused is not None:
            self.retire(refused, "refused")
        newer = self._live(key)  # the current one, or one earned ahead
        if newer is not None:
            return newer
        for _ in range(2):
            failed = self._failed.get(key)
            if failed is not None and self.clock() - failed[0] < self.cooldown:
                raise failed[1]
            under_way = self._earning.get(key)
            pending = under_way[0] if under_way else self._start(key, wall, identity)
            try:
                # shield: a request cancelled while waiting does not cancel the earning others wait for
                earned = await asyncio.shield(pending)
            except WallNotPassed:
                if pending.wall.url == wall.url:
                    raise
                # another request's wall page could not be passed: this request's own page is tried once
                continue
            return self._live(key) or earned
        raise WallNotPassed(wall.name, "browser", "no session earned")

    def _start(self, key: SessionKey, wall: Wall, identity: ClientIdentity) -> asyncio.Future:
        """A session of ``key`` earned from now, through ``wall``'s page."""
        pending = asyncio.ensure_future(self._earn_one(key, wall, identity))
        pending.wall = wall
        self._earning.setdefault(key, []).append(pending)
        return pending

    async def _earn_one(self, key: SessionKey, wall: Wall, identity: ClientIdentity) -> SiteSession:
        started = self.clock()
        try:
            cookies = await self._earn(wall, identity, key[1])
        except WallNotPassed as exc:
            self._failed[key] = (self.clock(), exc)
            raise
        finally:
            under_way = self._earning.get(key, [])
            under_way[:] = [f for f in under_way if not f.done() and f is not asyncio.current_task()]
            if not under_way:
                self._earning.pop(key, None)
        self._failed.pop(key, None)
        self._earn_seconds = self.clock() - started
        now = self.clock()
        session = SiteSession(
            key, identity, cookies, wall.name, now, next(self._serials), proving=not wall.known, passed=wall
        )
        if key in self._current:  # earned ahead: ready to take over from the current one
            self._ready.setdefault(key, deque()).append(session)
        else:
            session.used_from = now
            self._current[key] = session
        if self.on_earned is not None:
            self.on_earned(session, self.clock() - started)
        return session


def _retrieved(future: asyncio.Future) -> None:
    """A session earned in the background: its failure is remembered for the cooldown, not logged by asyncio."""
    if not future.cancelled():
        future.exception()
