"""WallWatch: when the browser has passed a wall, from what it sees of the page between two looks.

A wall a spider knows is passed when its cookie arrives. A wall farm has never seen names no cookie, so the
watch reads the page the way a person would, and takes a pass to be any of:

- the page asked for the data again (the wall's script returned to where it was met, by a reload, a
  redirect or a form's answer: the browser does not fetch it, farm does);
- the wall's markers (its title, its first script, as farm met them) were on the page and are gone;
- cookies the wall's answer did not set (by its Set-Cookie headers) arrived, and nothing has changed since for
  ``STILL`` seconds (a script that sets a cookie and stays).

Then the session is every cookie the browser holds for the site, and the request farm sends again with it
proves it (farm.sessions.middleware): a session that does not get data is retired and the wall counted as not
passed. A page that shows nothing new for ``QUIET`` seconds (no cookie, no navigation, no change) is given up:
it is no wall a browser passes by waiting.
"""

import time
from collections.abc import Callable

from farm.sessions.wall import Wall

STILL = 1.0  # seconds a page with new cookies stays unchanged before the wall counts as passed
QUIET = 10.0  # seconds a page may stay unchanged, with nothing new, before an unknown wall is given up


class WallWatch:
    def __init__(self, wall: Wall, clock: Callable[[], float] = time.monotonic):
        self.wall = wall
        self.clock = clock
        self.opened = False  # the first navigation (to the wall's url) has gone out
        self.data_asked = False
        self._set: set[str] = set()  # the cookies the wall's answer set (Set-Cookie): not the pass
        self._first: dict[str, str] | None = None  # those cookies when the page first showed
        self._seen_markers = False
        self._last: tuple | None = None
        self._changed = clock()

    def request(self, url: str, navigation: bool) -> None:
        """A request the page made (redirects included): after the first navigation, one for the data means
        the wall's script went back to it."""
        if not self.opened and navigation:
            self.opened = True
        elif self.opened and self.wall.asks_data(url):
            self.data_asked = True

    def answered(self, set_cookies: list[str]) -> None:
        """The Set-Cookie headers of the wall's answer: cookies the site sets to challenge, not for a pass."""
        lines = [line for header in set_cookies for line in header.splitlines()]  # Chromium joins them with \n
        self._set.update(line.split("=", 1)[0].strip() for line in lines if "=" in line)

    def passed(self, cookies: dict[str, str], url: str, html: str) -> bool:
        """Whether the wall is passed, by the page's cookies for the site, its address and its HTML ("" while
        it cannot be read)."""
        if self.wall.known:
            return any(name in cookies for name in self.wall.cookies)
        if self.data_asked:
            return True
        now = self.clock()
        look = (url, len(html), hash(html), tuple(sorted(cookies.items())))
        if look != self._last:
            self._last, self._changed = look, now
        if self._first is None:  # the answer's own cookies as the page commits: a change to them counts too
            self._first = {name: value for name, value in cookies.items() if name in self._set}
        if not html:
            return False
        shows = any(marker in html for marker in self.wall.markers)
        if shows:
            self._seen_markers = True
        elif self._seen_markers:
            return True
        gained = any(self._first.get(name) != value for name, value in cookies.items())
        return gained and now - self._changed >= STILL

    def given_up(self) -> bool:
        """Whether an unknown wall's page has shown nothing new for QUIET seconds."""
        return not self.wall.known and self._last is not None and self.clock() - self._changed >= QUIET
