"""Tab: a browser context kept for one identity and proxy, its one page reused pass after pass.

A context and its page cost the browser a new renderer process and as much CPU again as the wall's own
script: a crawl that earns a session every few seconds spends most of its browser's time making them. A tab
is made once for an identity and proxy (the context carries the proxy, the identity's user agent, screen and
time zone; the page is dressed once, farm.sessions.disguise) and passes that identity's walls one after
another. Each pass starts from an empty cookie jar, so a session is only the cookies its own pass earned,
and never through another proxy: a tab serves the proxy it was made for alone.

Within a pass, any request for the data is aborted, and so is the wall's script going back once it has passed
(a reload of the page opened for the wall, a known wall's callback once its cookie is in the jar): the page
behind the wall never loads in the browser, so the browser spends no use of the session it earns, and its
script never asks for a page farm fetches.

Between two passes nothing of the first may reach the second: once a pass has its cookies (or has failed),
every request the page still makes is aborted (the wall's script reloading, the page behind it asking for
its data), the page is taken to about:blank (the wall's document gone, no script of it left to run), and the
tab is handed to the next pass only when no request of the first is in flight (one that had left before
could still set a cookie). A tab that does not settle within ``SETTLE`` seconds is closed instead.
"""

import asyncio
from typing import Any
from urllib.parse import urlsplit

from farm.sessions.identity import ClientIdentity
from farm.sessions.wall import Wall

SETTLE = 2.0  # seconds a tab may take to have no request in flight after a pass, before it is closed instead
SKIPPED_TYPES = {"image", "media", "font"}  # nothing a wall's script needs; memory and time saved
BLANK = "about:blank"


class Tab:
    def __init__(self, identity: ClientIdentity, proxy: str, context: Any, page: Any):
        self.identity = identity
        self.proxy = proxy
        self.context = context
        self.page = page
        self.passes = 0  # passes begun in it
        self.in_flight = 0  # the page's requests not yet finished or failed
        self._wall: Wall | None = None  # the wall being passed; None between passes: every request aborted
        self._opened = False  # the pass's first navigation (page.goto(wall.url)) has gone out
        self._stirred = asyncio.Event()  # the page made a request, answered one or navigated since the last look
        page.on("request", self._request_out)
        page.on("requestfinished", self._request_done)
        page.on("requestfailed", self._request_done)
        page.on("framenavigated", self._stir)
        page.on("load", self._stir)

    def serves(self, identity: ClientIdentity, proxy: str) -> bool:
        return self.identity == identity and self.proxy == proxy

    def begin(self, wall: Wall) -> None:
        """A pass of ``wall`` starts: its page and scripts may load (farm.sessions.browser clears the cookies)."""
        self._wall, self._opened = wall, False
        self._stirred.clear()  # what the page did before this pass is no sign of it
        self.passes += 1

    def end(self) -> None:
        """The pass is over: from now on every request the page makes is aborted."""
        self._wall = None

    def settled(self) -> bool:
        """Whether the pass that ended left nothing behind: the page blank, none of its requests in flight."""
        return self._wall is None and self.in_flight <= 0 and self.page.url == BLANK

    async def route(self, route) -> None:
        """The context's route handler: the wall's page and its scripts load; images, media, fonts do not, nor
        farm's data once the wall's own URL has been opened (a search page behind a wall is where a browser
        meets it), nor anything between two passes."""
        request = route.request
        wall = self._wall
        if wall is None:
            await route.abort()
            return
        navigation = request.is_navigation_request()
        first = not self._opened and navigation  # page.goto(wall.url), however spelled
        self._opened = self._opened or first
        if request.resource_type in SKIPPED_TYPES or (not first and wall.asks_data(request.url)):
            await route.abort()
        elif navigation and not first and (_same_page(request.url, wall.url) or await self.has_cookie(wall)):
            # the wall's script going back (a reload, a callback) once it has passed: the page behind the wall
            # would spend a use of the session, and its own script would ask for the data. An empty page in
            # its place ends the navigation as the site's would (an aborted one leaves the wall's page behind)
            await route.fulfill(status=200, content_type="text/html", body="")
        else:
            await route.continue_()

    async def has_cookie(self, wall: Wall) -> bool:
        """Whether a cookie that passes ``wall`` (a known wall's) is in the jar."""
        if not wall.known:
            return False
        try:
            jar = await self.context.cookies()
        except Exception:  # the context closing: nothing more of its page is wanted
            return True
        return any(cookie["name"] in wall.cookies for cookie in jar)

    async def stirred(self, within: float) -> None:
        """Returns once the page has done something since the last call (a wall's script sets its cookie and
        then reloads or asks for data: the request is the sign to look at the jar), or after ``within``
        seconds (a cookie set with nothing after it)."""
        try:
            await asyncio.wait_for(self._stirred.wait(), within)
        except TimeoutError:
            pass
        self._stirred.clear()

    def _stir(self, *_: Any) -> None:
        self._stirred.set()

    def _request_out(self, request) -> None:
        self.in_flight += 1
        self._stirred.set()

    def _request_done(self, request) -> None:
        self.in_flight -= 1
        self._stirred.set()


def _same_page(url: str, other: str) -> bool:
    """Whether two URLs name the same page: scheme, host, path and query alike (a fragment aside)."""
    a, b = urlsplit(url), urlsplit(other)
    return (a.scheme, a.netloc, a.path, a.query) == (b.scheme, b.netloc, b.path, b.query)
