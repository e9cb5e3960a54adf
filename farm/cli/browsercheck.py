"""`farm doctor`'s browser line: the Chromium a crawl passes walls in, found and started headless.

FARM_BROWSER_EXECUTABLE names it, else the first Chromium on the PATH (farm.sessions.browser); doctor
starts it through Playwright with a crawl's options, within a few seconds, and closes it. A name that
is not found, or a browser that does not start, is a failure naming FARM_BROWSER_EXECUTABLE; with
FARM_BROWSER_PAGES=0 there is no browser to check.
"""

import time

from farm.cli.checkline import FAIL, OK, WARN, Check
from farm.config import FarmConfig
from farm.display import escape

NAME_BROWSER = "browser"
BROWSER_START_MOST = 20.0  # seconds a headless start may take before the browser is called hung


def check_browser(config: FarmConfig | None, timeout: float) -> Check:
    """The browser a crawl passes walls in: found (FARM_BROWSER_EXECUTABLE, else Chromium on the PATH)
    and started headless, through Playwright with a crawl's options, within a few seconds."""
    if config is None:
        return Check(WARN, NAME_BROWSER, "not checked: fix the settings first")
    if config.browser_pages == 0:
        return Check(OK, NAME_BROWSER, "FARM_BROWSER_PAGES=0: no browser; a wall is a block")
    from farm.sessions.browser import CANDIDATES, find_chromium

    given = config.browser_executable
    path = find_chromium(given)
    if path is None:
        if given:
            return Check(
                FAIL,
                NAME_BROWSER,
                f"FARM_BROWSER_EXECUTABLE={escape(given)!r} is not found: walls cannot be passed; set it to "
                "Chromium's path, or unset it to use Chromium on the PATH",
            )
        return Check(
            FAIL,
            NAME_BROWSER,
            f"no Chromium on the PATH ({', '.join(CANDIDATES)}): walls cannot be passed; "
            "apt-get install chromium, or set FARM_BROWSER_EXECUTABLE",
        )
    started, what = _start_browser(path, min(max(timeout, 5.0), BROWSER_START_MOST))
    named = f"FARM_BROWSER_EXECUTABLE={escape(given)!r} ({path})" if given else path
    if not started:
        fix = "set FARM_BROWSER_EXECUTABLE to a Chromium that starts" if given else "set FARM_BROWSER_EXECUTABLE"
        return Check(FAIL, NAME_BROWSER, f"{named} did not start headless: {what}: walls cannot be passed; {fix}")
    return Check(OK, NAME_BROWSER, f"{named} starts headless ({what})")


def _start_browser(path: str, seconds: float) -> tuple[bool, str]:
    """Start ``path`` headless as a crawl does (farm.sessions.browser), then close it: (started, what)."""
    from playwright.sync_api import Error as PlaywrightError
    from playwright.sync_api import sync_playwright

    began = time.monotonic()
    try:
        with sync_playwright() as playwright:
            browser = playwright.chromium.launch(
                executable_path=path,
                headless=True,
                args=["--no-sandbox", "--disable-dev-shm-usage"],
                timeout=seconds * 1000,
            )
            version = browser.version
            browser.close()
    except PlaywrightError as exc:
        lines = [line.strip() for line in str(exc).splitlines() if line.strip()]
        return False, escape(lines[0] if lines else type(exc).__name__)[:200]
    return True, f"version {version}, in {time.monotonic() - began:.1f} s"
