"""Sessions by site and proxy: one current session each, earned once however many requests meet the wall.

A session is retired when the site refuses it (a wall answered to a request that carried it), when it is
older than FARM_SESSION_MAX_AGE or has been sent FARM_SESSION_MAX_USES times; the next request then goes
without it, meets the wall and earns a new one. Requests that meet the wall while a session is being earned
for the same key wait for that one (single flight): a wall costs one browser page, not one per request.
A pass that fails (a slider, a timeout) is remembered for FARM_BROWSER_COOLDOWN seconds, so that a site that
refuses the browser does not get a browser page for every request meanwhile.
"""

import asyncio
import itertools
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field

from farm.errors import WallNotPassed
from farm.sessions.identity import ClientIdentity
from farm.sessions.wall import Wall

SessionKey = tuple[str, str]  # (site, proxy URL or "")


@dataclass(eq=False)
class SiteSession:
    key: SessionKey
    identity: ClientIdentity
    cookies: dict[str, str]
    wall: str  # the wall whose pass earned it
    earned_at: float
    serial: int
    uses: int = 0
    retired: str | None = field(default=None)
    # an unknown wall's session is proven by its first answer getting data (farm.sessions.watch): None until
    # then; a known wall's is not judged (its cookie arrived)
    proven: bool | None = None
    proving: bool = False

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
    ):
        self._earn = earn  # (wall, identity, proxy) -> the cookies a browser earned
        self.max_age = max_age
        self.max_uses = max_uses  # 0: no limit
        self.cooldown = cooldown
        self.clock = clock
        self.on_earned = on_earned  # (session, seconds it took): once a session, however many waited
        self._current: dict[SessionKey, SiteSession] = {}
        self._earning: dict[SessionKey, asyncio.Future] = {}
        self._failed: dict[SessionKey, tuple[float, WallNotPassed]] = {}
        self._serials = itertools.count(1)
        self.retired: dict[str, int] = {}  # why -> how many

    def current(self, key: SessionKey) -> SiteSession | None:
        """The session to send with the next request of ``key``, counted as used; None: go without."""
        session = self._current.get(key)
        if session is None:
            return None
        if self.clock() - session.earned_at >= self.max_age:
            self.retire(session, "age")
            return None
        if self.max_uses and session.uses >= self.max_uses:
            self.retire(session, "uses")
            return None
        session.uses += 1
        return session

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
        if refused is not None:
            self.retire(refused, "refused")
        newer = self._current.get(key)
        if newer is not None:
            return newer
        for _ in range(2):
            failed = self._failed.get(key)
            if failed is not None and self.clock() - failed[0] < self.cooldown:
                raise failed[1]
            pending = self._earning.get(key)
            if pending is None:
                pending = self._earning[key] = asyncio.ensure_future(self._earn_one(key, wall, identity))
                pending.wall = wall
            try:
                # shield: a request cancelled while waiting does not cancel the earning others wait for
                return await asyncio.shield(pending)
            except WallNotPassed:
                if pending.wall.url == wall.url:
                    raise
                # another request's wall page could not be passed: this request's own page is tried once
        raise WallNotPassed(wall.name, "browser", "no session earned")

    async def _earn_one(self, key: SessionKey, wall: Wall, identity: ClientIdentity) -> SiteSession:
        started = self.clock()
        try:
            cookies = await self._earn(wall, identity, key[1])
        except WallNotPassed as exc:
            self._failed[key] = (self.clock(), exc)
            raise
        finally:
            self._earning.pop(key, None)
        self._failed.pop(key, None)
        session = SiteSession(
            key, identity, cookies, wall.name, self.clock(), next(self._serials), proving=not wall.known
        )
        self._current[key] = session
        if self.on_earned is not None:
            self.on_earned(session, self.clock() - started)
        return session
