"""FarmMeta: what farm keeps in a request's meta, typed, and the one code that reads and writes it.

Scrapy carries a request's own data in ``request.meta``, copied to every retry, redirect and
``Request.replace`` and seen again as ``response.meta``. farm keeps there, under keys that begin
``farm_``:

- the page: its keyword's lease and its page number (set by the spider; a request without a
  lease is not a page of farm's, and every farm component lets it pass);
- ``again``: a page asked for anew, past the fingerprints that have seen it (True), or once per
  occasion (a text, the occasion: two workers that both ask on one occasion queue it once);
- the way out: the identity (``identity``: a proxy's id, or this machine's) and the proxy
  (``proxy``: its id; Scrapy's ``meta["proxy"]`` holds its URL) it went through;
- the lanes: ``signed``, a copy signed as it went out, and ``session_fresh``, sent again with a
  session just earned, both of which go out at once (farm.crawl.scheduler);
- the walls: the session it carried (``session``, its serial), the fresh sessions it was sent
  with in this attempt (``session_sends``), those it was sent with after one ran out
  (``session_turns``), the wall page it met after a session that served nothing (``unserved``), a
  wall's redirect it may follow next time (``wall_redirect``), and the wall the browser could not
  pass (``wall_refused``, for farm.middlewares.blocks to name).

The keys keep their names, and their values plain JSON data but the lease: a request in a shared
queue is stored with its meta as JSON (farm.crawl.backends.redis.codec, through ``stored`` and
``read_stored``), and one queued by a worker started earlier reads the same. The JOBDIR checkpoint
keeps a page's lease key and number, never its meta. Tuples come back from JSON as lists: the
readers here make them tuples again.
"""

from __future__ import annotations

from collections.abc import Collection
from typing import Any

from scrapy import Request

from farm.state.lease import Lease

LEASE = "farm_lease"
PAGE = "farm_page"
AGAIN = "farm_again"
IDENTITY = "farm_identity"
PROXY = "farm_proxy"
SIGNED = "farm_signed"
SESSION = "farm_session"
SESSION_FRESH = "farm_session_fresh"
SESSION_SENDS = "farm_session_sends"
SESSION_TURNS = "farm_session_turns"
UNSERVED = "farm_unserved"
WALL_REDIRECT = "farm_wall_redirect"
WALL_REFUSED = "farm_wall_refused"
# every key farm keeps in a request's meta (tests/unit/test_meta_owner.py holds the rest of farm to them)
KEYS = (
    LEASE,
    PAGE,
    AGAIN,
    IDENTITY,
    PROXY,
    SIGNED,
    SESSION,
    SESSION_FRESH,
    SESSION_SENDS,
    SESSION_TURNS,
    UNSERVED,
    WALL_REDIRECT,
    WALL_REFUSED,
)


class FarmMeta:
    """The farm part of one request's meta (``FarmMeta.of(request)`` or of its response): typed
    attributes over the meta dict itself, so a write shows in the request at once."""

    __slots__ = ("meta",)

    def __init__(self, meta: dict[str, Any]) -> None:
        self.meta = meta

    @classmethod
    def of(cls, message: Any) -> FarmMeta:
        """The farm meta of a request, or of a response (its request's)."""
        return cls(message.meta)

    # --- the page ------------------------------------------------------------------------------

    def set_page(self, lease: Lease, page: int) -> None:
        """Make the request page ``page`` of ``lease``'s keyword."""
        self.meta[LEASE] = lease
        self.meta[PAGE] = page

    @property
    def lease(self) -> Lease | None:
        """The lease of the keyword the request is a page of; None: not a page of farm's."""
        return self.meta.get(LEASE)

    def lease_page(self) -> tuple[Lease, int]:
        """(lease, page) of a request known to be a page of farm's; KeyError for any other."""
        return (self.meta[LEASE], self.meta[PAGE])

    @property
    def page(self) -> int:
        """The page number (1 for a request that is not a page of farm's)."""
        page: int = self.meta.get(PAGE, 1)
        return page

    @property
    def again(self) -> bool | str | None:
        """Asked for anew: True past every fingerprint, a text once per that occasion; None: not."""
        return self.meta.get(AGAIN)

    @again.setter
    def again(self, value: bool | str) -> None:
        self.meta[AGAIN] = value

    # --- the way out ---------------------------------------------------------------------------

    @property
    def identity(self) -> str | None:
        """The id of the identity the request went through (farm.crawl.identities)."""
        return self.meta.get(IDENTITY)

    @identity.setter
    def identity(self, value: str) -> None:
        self.meta[IDENTITY] = value

    @property
    def proxy(self) -> str | None:
        """The id of the proxy the request went through (farm.crawl.proxies)."""
        return self.meta.get(PROXY)

    @proxy.setter
    def proxy(self, value: str) -> None:
        self.meta[PROXY] = value

    # --- the lanes that go at once ---------------------------------------------------------------

    @property
    def goes_at_once(self) -> bool:
        """A copy just signed, or sent again with a session just earned: it waits for nothing."""
        return SIGNED in self.meta or SESSION_FRESH in self.meta

    def mark_signed(self) -> None:
        self.meta[SIGNED] = True

    def take_signed(self) -> bool:
        """Whether the request is a copy just signed; the mark is gone after."""
        return bool(self.meta.pop(SIGNED, False))

    def mark_session_fresh(self) -> None:
        self.meta[SESSION_FRESH] = True

    def take_session_fresh(self) -> bool:
        """Whether the request goes with a session just earned; the mark is gone after."""
        return bool(self.meta.pop(SESSION_FRESH, False))

    # --- the walls -------------------------------------------------------------------------------

    @property
    def session(self) -> int | None:
        """The serial of the session the request carried (its cookies stay in this process)."""
        return self.meta.get(SESSION)

    @session.setter
    def session(self, serial: int | None) -> None:
        self.meta[SESSION] = serial

    @property
    def session_sends(self) -> tuple[int, int]:
        """(attempt, sends with a fresh session in that attempt)."""
        attempt, sends = self.meta.get(SESSION_SENDS, (0, 0))
        return (attempt, sends)

    @session_sends.setter
    def session_sends(self, value: tuple[int, int]) -> None:
        self.meta[SESSION_SENDS] = value

    @property
    def session_turns(self) -> int:
        """Sends with a fresh session after the one before ran out."""
        turns: int = self.meta.get(SESSION_TURNS, 0)
        return turns

    @session_turns.setter
    def session_turns(self, value: int) -> None:
        self.meta[SESSION_TURNS] = value

    @property
    def unserved(self) -> tuple[int, str] | None:
        """(attempt, the wall page it met) after a session that served nothing; else None."""
        value = self.meta.get(UNSERVED)
        return None if value is None else (value[0], value[1])

    @unserved.setter
    def unserved(self, value: tuple[int, str] | None) -> None:
        self.meta[UNSERVED] = value

    def mark_wall_redirect(self) -> None:
        """The request met a wall's redirect: not followed now, and followed by the next attempt."""
        self.meta[WALL_REDIRECT] = True

    def take_wall_redirect(self) -> bool:
        """Whether the attempt before met a wall's redirect; the mark is gone after."""
        return bool(self.meta.pop(WALL_REDIRECT, False))

    @property
    def wall_refused(self) -> str | None:
        """The wall the browser met on this page and could not pass, as ``<wall>_<kind>``."""
        return self.meta.get(WALL_REFUSED)

    @wall_refused.setter
    def wall_refused(self, value: str) -> None:
        self.meta[WALL_REFUSED] = value


def asked_anew(request: Request) -> Request:
    """``request``, marked asked for anew past every fingerprint (``FarmMeta.again``)."""
    FarmMeta.of(request).again = True
    return request


def stored(meta: dict[str, Any], leave_out: Collection[str] = ()) -> dict[str, Any]:
    """A copy of ``meta`` as a shared queue stores it: the lease as plain data, the proxy's id left out
    (whichever worker sends the request chooses its proxy anew), and the keys ``leave_out`` names."""
    out = {name: value for name, value in meta.items() if name not in leave_out and name != PROXY}
    lease = out.get(LEASE)
    if lease is not None:
        out[LEASE] = lease.to_json()
    return out


def read_stored(meta: dict[str, Any]) -> None:
    """A page request's stored meta made whole again, in place: its lease parsed, its page checked
    (KeyError, TypeError or ValueError for a meta no page request of farm's holds)."""
    meta[LEASE] = Lease.from_json(meta[LEASE])
    page = meta[PAGE]
    if not isinstance(page, int) or page < 1:
        raise ValueError(f"page {page!r}")
