"""The crawl's headless Chromium: opens a wall's page, waits for the cookies it grants, hands them over.

One browser process per crawl, launched the first time a wall needs it (a crawl that meets no wall never
starts one), from the machine's Chromium (FARM_BROWSER_EXECUTABLE, else the first of chromium,
chromium-browser, google-chrome on the PATH): Playwright drives it and never downloads a browser of its own.
At most FARM_BROWSER_PAGES walls are passed at once, each in a tab (farm.sessions.tabs: a context of the
identity's user agent and proxy, and its page) kept for that identity and proxy and reused by its next pass,
from an empty cookie jar: a session is the cookies of its own pass alone. At most as many tabs are open as
passes may run (one of another proxy is closed to make room), so the browser's memory is bounded by
FARM_BROWSER_PAGES, and measured (``resident_bytes``: the proportional set size of its processes, summed).

Nothing the browser does may fail a keyword or hold the crawl: every await on it is bounded by
FARM_BROWSER_TIMEOUT for the whole pass and given up as soon as the crawl closes (a page whose script never
yields answers no call that runs in it). Starting Chromium has a bound of its own (at least START_TIMEOUT):
on a busy machine a start takes seconds, which are not the wall's to answer for. Chromium that dies is
started again, and the pass tried once more, at most RESTARTS times a crawl; whatever goes wrong is
WallNotPassed, which the crawl takes for a block named after the wall (kind "timeout", "browser"), or
"closing" while the crawl closes.
"""

import asyncio
import logging
import shutil
import time
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar
from urllib.parse import urlsplit

from farm.display import without_secrets
from farm.errors import WallNotPassed
from farm.sessions.disguise import context_options, dress, launch_args
from farm.sessions.identity import ClientIdentity
from farm.sessions.memory import MEASURE_EVERY, browser_pss
from farm.sessions.tabs import BLANK, SETTLE, Tab
from farm.sessions.wall import Wall
from farm.sessions.watch import QUIET, WallWatch

logger = logging.getLogger(__name__)

CANDIDATES = ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable")
POLL = 0.1  # seconds between looks at the page while it earns its cookies, and at the crawl while it waits
SETTLE_POLL = 0.01  # seconds between looks at a tab settling after its pass
BLANK_LANDS = 0.5  # seconds an interrupted about:blank is given to land before it is asked for again
INTERRUPTED = "interrupted by another navigation"  # Playwright's words for a goto another navigation replaced
RESTARTS = 3  # times Chromium is started again after it dies, in one crawl; after that a wall is a block
GOTO_TRIES = 3  # times a wall's page is opened when its opening is interrupted (by the tab's own about:blank)
START_TIMEOUT = 30.0  # seconds Chromium may take to start, when FARM_BROWSER_TIMEOUT is shorter
T = TypeVar("T")


def find_chromium(configured: str = "") -> str | None:
    """The browser to drive: the configured path or name, else the first Chromium on the PATH."""
    for name in (configured,) if configured else CANDIDATES:
        found = shutil.which(name)
        if found:
            return found
    return None


class Browser:
    def __init__(
        self,
        executable: str,
        pages: int,
        timeout: float,
        closing: Callable[[], bool] = lambda: False,
        restarts: int = RESTARTS,
    ):
        self.executable = executable  # FARM_BROWSER_EXECUTABLE as given ("": look on the PATH)
        self.timeout = timeout
        self.closing = closing  # whether the crawl is closing: a pass under way is given up at once
        self.most_restarts = restarts
        self._slots = asyncio.Semaphore(pages)
        self._most_tabs = max(pages, 1)
        self._tabs: list[Tab] = []  # open, the least recently used first
        self._busy: set[Tab] = set()
        self._playwright: Any = None
        self._browser: Any = None
        self._starting: asyncio.Lock | None = None
        self._closed = False
        self.pages_opened = 0
        self.restarts = 0  # times Chromium was started again after it died
        self.rss_max = 0  # the most the browser's processes held at once, in bytes (PSS)
        self._measured_at = time.monotonic()  # a browser's memory grows with its passes: its first ones tell little

    def open_tabs(self) -> list[tuple[str, int]]:
        """The tabs open, the least recently used first: each one's proxy and the passes begun in it."""
        return [(tab.proxy, tab.passes) for tab in self._tabs]

    async def earn(self, wall: Wall, identity: ClientIdentity, proxy: str) -> dict[str, str]:
        """The cookies ``wall``'s page grants this identity through ``proxy`` ("" for none); WallNotPassed
        whatever goes wrong: the browser never fails a keyword, and never waits beyond its start's bound and
        its timeout."""
        async with self._slots:
            for attempt in (1, 2):  # Chromium that dies during a pass is started again, and the pass tried once more
                browser = await self._launched(wall, identity, time.monotonic() + max(self.timeout, START_TIMEOUT))
                deadline = time.monotonic() + self.timeout  # the pass's own time, the browser's start apart
                try:
                    return await self._in_tab(browser, wall, identity, proxy, deadline)
                except WallNotPassed:
                    raise
                except Exception as exc:  # Playwright's errors, and whatever a dying browser raises
                    if self._closed or self.closing():
                        raise WallNotPassed(wall.name, "closing", "the crawl is closing") from None
                    if attempt == 2 or browser.is_connected():
                        raise WallNotPassed(wall.name, "browser", f"the browser failed: {_first_line(exc)}") from None
                    logger.warning("farm: headless Chromium died while passing %s: %s", wall.name, _first_line(exc))
            raise AssertionError("unreachable")

    async def _in_tab(
        self, browser, wall: Wall, identity: ClientIdentity, proxy: str, deadline: float
    ) -> dict[str, str]:
        """A pass in the identity's and proxy's tab, kept for the next when it settles, else closed."""
        tab = await self._tab(browser, wall, identity, proxy, deadline)
        self._busy.add(tab)
        kept = False
        try:
            cookies = await self._pass(tab, wall, deadline)
            kept = await self._settle(tab, wall)
            return cookies
        finally:
            self._busy.discard(tab)
            self.measure()
            if not kept:
                await self._close_tab(tab)

    async def _tab(self, browser, wall: Wall, identity: ClientIdentity, proxy: str, deadline: float) -> Tab:
        """The idle tab of ``identity`` and ``proxy`` in ``browser``, or a new one (an idle tab of another
        proxy closed first when as many are open as passes may run)."""
        self._tabs = [tab for tab in self._tabs if tab.context.browser is browser]  # a dead browser's are gone
        for tab in self._tabs:
            if tab not in self._busy and tab.serves(identity, proxy):
                self._tabs.remove(tab)
                self._tabs.append(tab)
                return tab
        while len(self._tabs) >= self._most_tabs:
            idle = next((tab for tab in self._tabs if tab not in self._busy), None)
            if idle is None:
                break
            await self._close_tab(idle)
        options: dict[str, Any] = context_options(identity, proxy)
        context = await self._bounded(browser.new_context(**options), wall, deadline)
        try:
            page = await self._bounded(context.new_page(), wall, deadline)
            await self._bounded(dress(context, page, identity, wall.name), wall, deadline)
            tab = Tab(identity, proxy, context, page)
            await self._bounded(context.route("**/*", tab.route), wall, deadline)
        except BaseException:
            await self._close_context(context)
            raise
        self._tabs.append(tab)
        return tab

    async def _pass(self, tab: Tab, wall: Wall, deadline: float) -> dict[str, str]:
        """``wall``'s cookies, earned in ``tab`` from an empty jar."""
        for _ in range(GOTO_TRIES):
            await self._bounded(tab.context.clear_cookies(), wall, deadline)
            tab.begin(wall)
            watch = WallWatch(wall)

            def seen(request, watch=watch) -> None:
                watch.request(request.url, request.is_navigation_request())

            tab.page.on("request", seen)
            self.pages_opened += 1
            try:
                return await self._cookies_of(tab, wall, watch, deadline)
            except _Interrupted:
                pass  # opened again once the tab has settled, from an empty jar, with a new watch
            finally:
                tab.page.remove_listener("request", seen)
                tab.end()
            if not await self._settle(tab, wall):
                break
        raise WallNotPassed(wall.name, "browser", f"opening {_shown(wall.url)} was interrupted by another navigation")

    async def _settle(self, tab: Tab, wall: Wall) -> bool:
        """Whether ``tab`` is left with nothing of its pass (farm.sessions.tabs) within SETTLE seconds."""
        from playwright.async_api import Error as PlaywrightError

        deadline = time.monotonic() + SETTLE
        asked = -BLANK_LANDS  # when about:blank was last asked for
        try:
            while not tab.settled():
                # about:blank again only once the last one had time to land: one interrupted by the wall page's
                # own navigation may land after it, and a second one would land in the next pass, interrupting it
                if tab.page.url != BLANK and time.monotonic() - asked >= BLANK_LANDS:
                    asked = time.monotonic()
                    try:
                        await self._bounded(tab.page.goto(BLANK, wait_until="commit"), wall, deadline)
                    except PlaywrightError:
                        pass  # interrupted by the wall page's own navigation
                self._check_time(wall, deadline)
                await asyncio.sleep(SETTLE_POLL)
        except WallNotPassed:
            return False
        except Exception as exc:  # a dying browser's errors: the tab is closed
            logger.debug("farm: a tab did not settle after %s: %s", wall.name, _first_line(exc))
            return False
        return True

    async def _close_tab(self, tab: Tab) -> None:
        if tab in self._tabs:
            self._tabs.remove(tab)
        await self._close_context(tab.context)

    async def _close_context(self, context) -> None:
        """Closed within the browser's timeout, or the browser with it: a page whose script never yields
        may hold its context's close, and a context left open holds its memory for the rest of the crawl."""
        from playwright.async_api import Error as PlaywrightError

        try:
            await asyncio.wait_for(context.close(), self.timeout)
        except PlaywrightError:
            pass  # the browser died or closed: nothing left to close
        except TimeoutError:
            logger.warning("farm: a wall page's context did not close within %g s: the browser is closed", self.timeout)
            await self._stop()

    async def _cookies_of(self, tab: Tab, wall: Wall, watch: WallWatch, deadline: float) -> dict[str, str]:
        from playwright.async_api import Error as PlaywrightError

        page, context = tab.page, tab.context
        TargetClosedError = _target_closed()
        try:
            answer = await self._bounded(
                page.goto(wall.url, wait_until="commit", timeout=self.timeout * 1000), wall, deadline
            )
        except TargetClosedError:
            raise
        except PlaywrightError as exc:
            if INTERRUPTED not in str(exc):
                raise WallNotPassed(
                    wall.name, "browser", f"cannot open {_shown(wall.url)}: {_first_line(exc)}"
                ) from None
            # the wall's own script may have set its cookie and gone back before the opening was seen to commit
            if not await self._bounded(tab.has_cookie(wall), wall, deadline):
                raise _Interrupted() from None
            answer = None
        if answer is not None and not wall.opens(answer.status):  # no wall there to pass: the site answered an error
            raise WallNotPassed(wall.name, "browser", f"{_shown(wall.url)} answered HTTP {answer.status}")
        if answer is not None and not wall.known:
            watch.answered(await self._bounded(answer.header_values("set-cookie"), wall, deadline))
        host = urlsplit(wall.url).hostname or ""
        html = ""  # the page as last looked at
        while True:
            jar = await self._bounded(context.cookies(), wall, deadline)
            cookies = {c["name"]: c["value"] for c in jar if _same_site(c["domain"], host)}
            if watch.passed(cookies, page.url, html):
                return cookies
            try:
                html = await self._bounded(page.content(), wall, deadline)
            except TargetClosedError:
                raise
            except PlaywrightError:  # navigating: the next look sees the new page
                html = ""
            marker = next((m for m in wall.sliders if m in page.url or m in html), None)
            if marker is not None:
                raise WallNotPassed(
                    wall.name, "slider", f"the page shows a slider ({marker}), which farm does not solve"
                )
            self._check_time(wall, deadline)
            if watch.given_up():
                raise WallNotPassed(wall.name, "timeout", f"no {wall.awaited()} within {QUIET:g} s of a page unchanged")
            await tab.stirred(POLL)

    async def _bounded(self, awaitable: Awaitable[T], wall: Wall, deadline: float) -> T:
        """``awaitable``'s result, given up (WallNotPassed) at the pass's deadline or as soon as the crawl
        closes: a page whose script never yields answers no call that runs in it (page.content())."""
        task = asyncio.ensure_future(awaitable)
        try:
            while True:
                done, _ = await asyncio.wait({task}, timeout=min(POLL, max(0.0, deadline - time.monotonic())))
                if done:
                    return task.result()
                self._check_time(wall, deadline)
        finally:
            if not task.done():
                task.cancel()
                task.add_done_callback(_retrieved)

    def _check_time(self, wall: Wall, deadline: float) -> None:
        if self._closed or self.closing():
            raise WallNotPassed(wall.name, "closing", "the crawl is closing")
        if time.monotonic() >= deadline:
            raise WallNotPassed(wall.name, "timeout", f"no {wall.awaited()} within {self.timeout:g} s")

    async def _launched(self, wall: Wall, identity: ClientIdentity, deadline: float):
        if self._closed:
            raise WallNotPassed(wall.name, "closing", "the crawl is closing")
        if self._browser is not None and self._browser.is_connected():
            return self._browser
        if self._starting is None:
            self._starting = asyncio.Lock()
        async with self._starting:
            if self._browser is not None and not self._browser.is_connected():
                await self._stop()  # Chromium died (a crash, out of memory): started again, a bounded number of times
                if self.restarts >= self.most_restarts:
                    raise WallNotPassed(
                        wall.name, "browser", f"headless Chromium died {self.restarts + 1} times: not started again"
                    )
                self.restarts += 1
                logger.warning(
                    "farm: headless Chromium died; starting it again (%d of %d)", self.restarts, self.most_restarts
                )
            elif self._browser is not None:
                return self._browser
            self._browser = await self._launch(wall, identity, deadline)
        return self._browser

    async def _launch(self, wall: Wall, identity: ClientIdentity, deadline: float):
        path = find_chromium(self.executable)
        if path is None:
            wanted = self.executable or " or ".join(CANDIDATES)
            raise WallNotPassed(
                wall.name,
                "browser",
                f"no browser: {wanted} not found (apt-get install chromium, or set FARM_BROWSER_EXECUTABLE)",
            )
        from playwright.async_api import Error as PlaywrightError
        from playwright.async_api import async_playwright

        try:
            if self._playwright is None:
                self._playwright = await self._bounded(async_playwright().start(), wall, deadline)
            browser = await self._bounded(
                self._playwright.chromium.launch(executable_path=path, headless=True, args=launch_args(identity)),
                wall,
                deadline,
            )
        except (PlaywrightError, WallNotPassed) as exc:
            await self._stop()
            if isinstance(exc, WallNotPassed) and exc.kind == "closing":
                raise
            raise WallNotPassed(wall.name, "browser", f"{path} did not start: {_first_line(exc)}") from None
        logger.info("farm: headless Chromium started (%s, version %s)", path, browser.version)
        return browser

    async def close(self) -> None:
        """Closes the browser: a pass under way ends at once (WallNotPassed, "closing"), none starts again."""
        self._closed = True
        await self._stop()

    async def _stop(self) -> None:
        """Chromium and Playwright's driver stopped, each within the browser's timeout (then left to die with
        the crawl's process)."""
        browser, self._browser = self._browser, None
        playwright, self._playwright = self._playwright, None
        self._tabs.clear()  # closed with their browser
        for stopping in (browser.close() if browser is not None else None, playwright.stop() if playwright else None):
            if stopping is None:
                continue
            try:
                await asyncio.wait_for(stopping, self.timeout)
            except Exception as exc:  # a dead browser's close fails in as many ways as it died
                logger.debug("farm: stopping the browser: %s", _first_line(exc))

    def measure(self, now: bool = False) -> None:
        """``rss_max`` brought up to date: at most every MEASURE_EVERY seconds, or ``now`` (the crawl's close)."""
        at = time.monotonic()
        if now or at - self._measured_at >= MEASURE_EVERY:
            self._measured_at = at
            self.rss_max = max(self.rss_max, self.resident_bytes())

    def resident_bytes(self) -> int:
        """The memory the browser holds: every Chromium process below this one and Playwright's driver (PSS)."""
        return browser_pss()


class _Interrupted(Exception):
    """The wall's page was not opened: another navigation of the tab interrupted it (Playwright's words)."""


def _target_closed() -> type[Exception]:
    """Playwright's error for a page, context or browser that closed under a call (its public class, which
    playwright.async_api does not export)."""
    from playwright._impl._errors import TargetClosedError

    return TargetClosedError


def _retrieved(task: asyncio.Future) -> None:
    """A call given up on: its outcome is read so that asyncio does not log it as never retrieved."""
    if not task.cancelled():
        task.exception()


def _same_site(domain: str, host: str) -> bool:
    domain = domain.lstrip(".")
    return host == domain or host.endswith("." + domain)


def _first_line(exc: Exception) -> str:
    return without_secrets(str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__)


def _shown(url: str) -> str:
    return without_secrets(url if len(url) <= 120 else url[:117] + "...")
