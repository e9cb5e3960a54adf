"""The crawl's headless Chromium: opens a wall's page, waits for the cookies it grants, hands them over.

One browser process per crawl, launched the first time a wall needs it (a crawl that meets no wall never
starts one), from the machine's Chromium (FARM_BROWSER_EXECUTABLE, else the first of chromium,
chromium-browser, google-chrome on the PATH): Playwright drives it and never downloads a browser of its own.
At most FARM_BROWSER_PAGES pages are open at once, each in a context of its own (cookies of one session only,
the identity's user agent and proxy) that is closed as soon as its cookies are taken: the browser's memory is
bounded by that, and measured (``resident_bytes``: the proportional set size of its processes, summed).

Nothing the browser does may fail a keyword or hold the crawl: every await on it is bounded by
FARM_BROWSER_TIMEOUT for the whole pass and given up as soon as the crawl closes (a page whose script never
yields answers no call that runs in it); Chromium that dies is started again, and the pass tried once more,
at most RESTARTS times a crawl; whatever goes wrong is WallNotPassed, which the crawl takes for a block named
after the wall (kind "timeout", "browser"), or "closing" while the crawl closes.
"""

import asyncio
import logging
import os
import shutil
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any, TypeVar
from urllib.parse import urlsplit

from farm.display import without_secrets
from farm.errors import WallNotPassed
from farm.sessions.disguise import context_options, dress, launch_args
from farm.sessions.identity import ClientIdentity
from farm.sessions.wall import Wall
from farm.sessions.watch import QUIET, WallWatch

logger = logging.getLogger(__name__)

CANDIDATES = ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable")
BROWSER_PROCESSES = ("chrom", "headless", "node")  # their /proc/PID/comm: Chromium's processes, Playwright's driver
POLL = 0.1  # seconds between looks at the page while it earns its cookies, and at the crawl while it waits
RESTARTS = 3  # times Chromium is started again after it dies, in one crawl; after that a wall is a block
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
        self._playwright: Any = None
        self._browser: Any = None
        self._starting: asyncio.Lock | None = None
        self._closed = False
        self.pages_opened = 0
        self.restarts = 0  # times Chromium was started again after it died
        self.rss_max = 0  # the most the browser's processes held at once, in bytes (PSS)

    async def earn(self, wall: Wall, identity: ClientIdentity, proxy: str) -> dict[str, str]:
        """The cookies ``wall``'s page grants this identity through ``proxy`` ("" for none); WallNotPassed
        whatever goes wrong: the browser never fails a keyword, and never waits beyond its timeout."""
        async with self._slots:
            deadline = time.monotonic() + self.timeout
            for attempt in (1, 2):  # Chromium that dies during a pass is started again, and the pass tried once more
                browser = await self._launched(wall, identity, deadline)
                try:
                    return await self._pass(browser, wall, identity, proxy, deadline)
                except WallNotPassed:
                    raise
                except Exception as exc:  # Playwright's errors, and whatever a dying browser raises
                    if self._closed or self.closing():
                        raise WallNotPassed(wall.name, "closing", "the crawl is closing") from None
                    if attempt == 2 or browser.is_connected():
                        raise WallNotPassed(wall.name, "browser", f"the browser failed: {_first_line(exc)}") from None
                    logger.warning("farm: headless Chromium died while passing %s: %s", wall.name, _first_line(exc))
            raise AssertionError("unreachable")

    async def _pass(self, browser, wall: Wall, identity: ClientIdentity, proxy: str, deadline: float) -> dict[str, str]:
        options: dict[str, Any] = context_options(identity)
        if proxy:
            options["proxy"] = _proxy_option(proxy)
        context = await self._bounded(browser.new_context(**options), wall, deadline)
        try:
            await self._bounded(context.route("**/*", _only_the_wall(wall)), wall, deadline)
            page = await self._bounded(context.new_page(), wall, deadline)
            await self._bounded(dress(context, page, identity, wall.name), wall, deadline)
            watch = WallWatch(wall)
            page.on("request", lambda request: watch.request(request.url, request.is_navigation_request()))
            self.pages_opened += 1
            return await self._cookies_of(page, context, wall, watch, deadline)
        finally:
            self.rss_max = max(self.rss_max, self.resident_bytes())
            await self._close_context(context)

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

    async def _cookies_of(self, page, context, wall: Wall, watch: WallWatch, deadline: float) -> dict[str, str]:
        from playwright.async_api import Error as PlaywrightError

        TargetClosedError = _target_closed()
        try:
            answer = await self._bounded(
                page.goto(wall.url, wait_until="commit", timeout=self.timeout * 1000), wall, deadline
            )
        except TargetClosedError:
            raise
        except PlaywrightError as exc:
            raise WallNotPassed(wall.name, "browser", f"cannot open {_shown(wall.url)}: {_first_line(exc)}") from None
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
            await asyncio.sleep(POLL)

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
        for stopping in (browser.close() if browser is not None else None, playwright.stop() if playwright else None):
            if stopping is None:
                continue
            try:
                await asyncio.wait_for(stopping, self.timeout)
            except Exception as exc:  # a dead browser's close fails in as many ways as it died
                logger.debug("farm: stopping the browser: %s", _first_line(exc))

    def resident_bytes(self) -> int:
        """The memory the browser holds: every Chromium process below this one and Playwright's driver (PSS)."""
        return sum(_pss(pid) for pid in _descendants(os.getpid()) if _comm(pid).startswith(BROWSER_PROCESSES))


def _target_closed() -> type[Exception]:
    """Playwright's error for a page, context or browser that closed under a call (its public class, which
    playwright.async_api does not export)."""
    from playwright._impl._errors import TargetClosedError

    return TargetClosedError


def _retrieved(task: asyncio.Future) -> None:
    """A call given up on: its outcome is read so that asyncio does not log it as never retrieved."""
    if not task.cancelled():
        task.exception()


SKIPPED_TYPES = {"image", "media", "font"}  # nothing a wall's script needs; memory and time saved


def _only_the_wall(wall: Wall):
    """A route handler: the wall's page and its scripts load; images, media, fonts do not, nor farm's data
    once the wall's own URL has been opened (a search page behind a wall is where a browser meets it)."""
    opened = False

    async def route(route) -> None:
        nonlocal opened
        request = route.request
        first = not opened and request.is_navigation_request()  # page.goto(wall.url), however Chromium spells it
        opened = opened or first
        if request.resource_type in SKIPPED_TYPES or (not first and wall.asks_data(request.url)):
            await route.abort()
        else:
            await route.continue_()

    return route


def _same_site(domain: str, host: str) -> bool:
    domain = domain.lstrip(".")
    return host == domain or host.endswith("." + domain)


def _proxy_option(proxy: str) -> dict:
    parts = urlsplit(proxy)
    option = {"server": f"{parts.scheme}://{parts.hostname}:{parts.port}"}
    if parts.username:
        option.update(username=parts.username, password=parts.password or "")
    return option


def _first_line(exc: Exception) -> str:
    return without_secrets(str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__)


def _shown(url: str) -> str:
    return without_secrets(url if len(url) <= 120 else url[:117] + "...")


def _descendants(root: int) -> list[int]:
    children: dict[int, list[int]] = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            ppid = int((entry / "stat").read_text().rsplit(")", 1)[1].split()[1])
        except (OSError, IndexError, ValueError):
            continue
        children.setdefault(ppid, []).append(int(entry.name))
    found, todo = [], list(children.get(root, []))
    while todo:
        pid = todo.pop()
        found.append(pid)
        todo.extend(children.get(pid, []))
    return found


def _comm(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/comm").read_text().strip()
    except OSError:
        return ""


def _pss(pid: int) -> int:
    """A process's proportional set size: its own pages, and its share of those it shares (Chromium's
    processes share most of theirs, so their resident sizes added up would count them many times)."""
    try:
        for line in Path(f"/proc/{pid}/smaps_rollup").read_text().splitlines():
            if line.startswith("Pss:"):
                return int(line.split()[1]) * 1024
    except (OSError, ValueError):
        pass
    return 0
