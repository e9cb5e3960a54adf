"""The crawl's headless Chromium: opens a wall's page, waits for the cookies it grants, hands them over.

One browser process per crawl, launched the first time a wall needs it (a crawl that meets no wall never
starts one), from the machine's Chromium (FARM_BROWSER_EXECUTABLE, else the first of chromium,
chromium-browser, google-chrome on the PATH): Playwright drives it and never downloads a browser of its own.
At most FARM_BROWSER_PAGES pages are open at once, each in a context of its own (cookies of one session only,
the identity's user agent and proxy) that is closed as soon as its cookies are taken: the browser's memory is
bounded by that, and measured (``resident_bytes``: the proportional set size of its processes, summed).
"""

import asyncio
import logging
import os
import shutil
import time
from pathlib import Path
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
POLL = 0.1  # seconds between looks at the page while it earns its cookies


def find_chromium(configured: str = "") -> str | None:
    """The browser to drive: the configured path or name, else the first Chromium on the PATH."""
    for name in (configured,) if configured else CANDIDATES:
        found = shutil.which(name)
        if found:
            return found
    return None


class Browser:
    def __init__(self, executable: str, pages: int, timeout: float):
        self.executable = executable  # FARM_BROWSER_EXECUTABLE as given ("": look on the PATH)
        self.timeout = timeout
        self._slots = asyncio.Semaphore(pages)
        self._playwright = None
        self._browser = None
        self._starting: asyncio.Lock | None = None
        self.pages_opened = 0
        self.rss_max = 0  # the most the browser's processes held at once, in bytes (PSS)

    async def earn(self, wall: Wall, identity: ClientIdentity, proxy: str) -> dict[str, str]:
        """The cookies ``wall``'s page grants this identity through ``proxy`` ("" for none)."""
        async with self._slots:
            browser = await self._launched(wall, identity)
            options = context_options(identity)
            if proxy:
                options["proxy"] = _proxy_option(proxy)
            context = await browser.new_context(**options)
            await context.route("**/*", _only_the_wall(wall))
            watch = WallWatch(wall)
            try:
                page = await context.new_page()
                await dress(context, page, identity, wall.name)
                page.on("request", lambda request: watch.request(request.url, request.is_navigation_request()))
                self.pages_opened += 1
                return await self._cookies_of(page, context, wall, watch)
            finally:
                self.rss_max = max(self.rss_max, self.resident_bytes())
                await context.close()

    async def _cookies_of(self, page, context, wall: Wall, watch: WallWatch) -> dict[str, str]:
        from playwright.async_api import Error as PlaywrightError

        deadline = time.monotonic() + self.timeout
        try:
            answer = await page.goto(wall.url, wait_until="commit", timeout=self.timeout * 1000)
        except PlaywrightError as exc:
            raise WallNotPassed(wall.name, "browser", f"cannot open {_shown(wall.url)}: {_first_line(exc)}") from None
        if answer is not None and not wall.opens(answer.status):  # no wall there to pass: the site answered an error
            raise WallNotPassed(wall.name, "browser", f"{_shown(wall.url)} answered HTTP {answer.status}")
        if answer is not None and not wall.known:
            watch.answered(await answer.header_values("set-cookie"))
        host = urlsplit(wall.url).hostname or ""
        html = ""  # the page as last looked at
        while True:
            cookies = {c["name"]: c["value"] for c in await context.cookies() if _same_site(c["domain"], host)}
            if watch.passed(cookies, page.url, html):
                return cookies
            try:
                html = await page.content()
            except PlaywrightError:  # navigating: the next look sees the new page
                html = ""
            marker = next((m for m in wall.sliders if m in page.url or m in html), None)
            if marker is not None:
                raise WallNotPassed(
                    wall.name, "slider", f"the page shows a slider ({marker}), which farm does not solve"
                )
            if time.monotonic() >= deadline or watch.given_up():
                waited = f"{self.timeout:g} s" if time.monotonic() >= deadline else f"{QUIET:g} s of a page unchanged"
                raise WallNotPassed(wall.name, "timeout", f"no {wall.awaited()} within {waited}")
            await asyncio.sleep(POLL)

    async def _launched(self, wall: Wall, identity: ClientIdentity):
        if self._browser is not None:
            return self._browser
        if self._starting is None:
            self._starting = asyncio.Lock()
        async with self._starting:
            if self._browser is None:
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

                self._playwright = await async_playwright().start()
                try:
                    self._browser = await self._playwright.chromium.launch(
                        executable_path=path, headless=True, args=launch_args(identity)
                    )
                except PlaywrightError as exc:
                    await self._playwright.stop()
                    self._playwright = None
                    raise WallNotPassed(wall.name, "browser", f"{path} did not start: {_first_line(exc)}") from None
                logger.info("farm: headless Chromium started (%s, version %s)", path, self._browser.version)
        return self._browser

    async def close(self) -> None:
        if self._browser is not None:
            await self._browser.close()
            self._browser = None
        if self._playwright is not None:
            await self._playwright.stop()
            self._playwright = None

    def resident_bytes(self) -> int:
        """The memory the browser holds: every Chromium process below this one and Playwright's driver (PSS)."""
        return sum(_pss(pid) for pid in _descendants(os.getpid()) if _comm(pid).startswith(BROWSER_PROCESSES))


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
