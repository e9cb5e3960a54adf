"""BrowserApart: the crawl's Browser driven from an event loop on a thread of its own.

Playwright's client lives in the loop that drives it: every message of a pass (a request routed, an event, a
look at the cookie jar) waits in that loop's queue. In the crawl's own loop, that queue is the crawl's, and a
crawl at full speed keeps it long: a pass of a quarter of a second alone took over a second there, while the
crawl's requests waited for the session it was earning. On a loop of its own thread, the pass's messages are
answered between the crawl's callbacks (the interpreter switches threads every few milliseconds); the browser's
processes do their work on the machine's other cores as before.
"""

import asyncio
import threading
from typing import Any

from farm.sessions.browser import Browser
from farm.sessions.identity import ClientIdentity
from farm.sessions.wall import Wall

JOIN = 5.0  # seconds the thread is given to end once its loop is stopped


class BrowserApart:
    def __init__(self, browser: Browser):
        self.browser = browser
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        self._lock = threading.Lock()

    def __getattr__(self, name: str) -> Any:  # the Browser's figures (pages_opened, rss_max, restarts, measure)
        return getattr(self.browser, name)

    async def earn(self, wall: Wall, identity: ClientIdentity, proxy: str) -> dict[str, str]:
        """Browser.earn, run on the browser's thread; cancelled with the awaiting task."""
        earning = asyncio.run_coroutine_threadsafe(self.browser.earn(wall, identity, proxy), self._running())
        return await asyncio.wrap_future(earning)

    async def close(self) -> None:
        """The browser closed on its thread, then the thread ended."""
        with self._lock:
            loop, thread = self._loop, self._thread
            self._loop = self._thread = None
        if loop is None or thread is None:
            return
        try:
            await asyncio.wrap_future(asyncio.run_coroutine_threadsafe(self.browser.close(), loop))
        finally:
            loop.call_soon_threadsafe(loop.stop)
            await asyncio.to_thread(thread.join, JOIN)
            if not thread.is_alive():
                loop.close()

    def _running(self) -> asyncio.AbstractEventLoop:
        with self._lock:
            if self._loop is None:
                loop = asyncio.new_event_loop()
                thread = threading.Thread(target=loop.run_forever, name="farm-browser", daemon=True)
                thread.start()
                self._loop, self._thread = loop, thread
            return self._loop
