"""`farm doctor`'s browser check: does the machine's browser, dressed as a crawl dresses it, pass as a person?

It serves a local page (127.0.0.1, a free port) that runs BotD (FingerprintJS's open-source bot detector, the
bundle vendored in farm/sandbox/vendor/botd), opens it in the Chromium a crawl drives with the crawl's identity
(farm.sessions.disguise), and reports BotD's verdict with any tell it finds itself: ``navigator.webdriver``,
HeadlessChrome in the User-Agent, a platform, client hints, languages, locale or time zone other than the
identity's. Nothing leaves the machine. A browser judged a bot is a warning: the sites' walls would refuse its
sessions.
"""

import asyncio
import threading
from collections.abc import Iterator

from farm.display import without_secrets

OK, WARN, FAIL = "ok", "warn", "fail"  # as farm.cli.doctor's
NAME = "browser passes as a person"
PAGE = """<!doctype html><html><head><meta charset="utf-8"><title>farm doctor</title></head><body><script type="module">
import {load} from '/botd.esm.js';
const d = navigator.userAgentData;
const seen = {agent: navigator.userAgent, webdriver: navigator.webdriver, platform: navigator.platform,
  languages: navigator.languages, brands: d ? d.brands.map(b => [b.brand, b.version]) : null,
  hintsPlatform: d ? d.platform : null, timezone: Intl.DateTimeFormat().resolvedOptions().timeZone,
  locale: Intl.DateTimeFormat().resolvedOptions().locale};
try { seen.botd = (await load()).detect(); } catch (e) { seen.botd = {error: String(e)}; }
window.__farm = seen;
</script></body></html>"""


def check_person(config) -> Iterator[tuple[str, str, str]]:
    """One check (status, name, message): BotD's verdict on the crawl's browser, or why it could not be had."""
    from farm.sessions.browser import find_chromium
    from farm.sessions.disguise import crawl_identity

    if config is None:
        yield (WARN, NAME, "not checked: fix the settings first")
        return
    if not config.browser_pages:
        yield (OK, NAME, "not checked: FARM_BROWSER_PAGES is 0 (no browser: a wall is a block)")
        return
    path = find_chromium(config.browser_executable)
    if path is None:
        yield (WARN, NAME, "no browser found (apt-get install chromium, or set FARM_BROWSER_EXECUTABLE)")
        return
    identity = crawl_identity(config.impersonate, path)
    try:
        seen = _in_a_thread(_visit(path, identity, max(config.browser_timeout, 20.0)))
    except Exception as exc:  # a browser that does not start or answer: what it said, on one line
        text = str(exc).strip().splitlines()
        yield (FAIL, NAME, f"{path} could not run the check: {without_secrets(text[0] if text else repr(exc))}")
        return
    tells = tells_of(seen, identity)
    verdict = seen.get("botd") or {}
    who = f"Chromium at {path} as Chrome {identity.full_version} on {identity.platform}, {','.join(identity.languages)}"
    if "error" in verdict:
        yield (WARN, NAME, f"BotD could not judge ({verdict['error']}); {who}; tells: {', '.join(tells) or 'none'}")
    elif verdict.get("bot") or tells:
        kind = f"a bot ({verdict.get('botKind') or 'unnamed'})" if verdict.get("bot") else "not a bot"
        yield (WARN, NAME, f"BotD says {kind}; tells: {', '.join(tells) or 'none'}; {who}")
    else:
        yield (OK, NAME, f"BotD says not a bot, no tell found; {who}")


def tells_of(seen: dict, identity) -> list[str]:
    """What in the page's view gives the browser away, or contradicts the identity."""
    tells = []
    if seen.get("webdriver"):
        tells.append("navigator.webdriver is true")
    if "Headless" in seen.get("agent", ""):
        tells.append("HeadlessChrome in the User-Agent")
    elif seen.get("agent") != identity.user_agent:
        tells.append(f"User-Agent {seen.get('agent')!r} is not the identity's")
    if seen.get("platform") != identity.navigator_platform:
        tells.append(f"navigator.platform {seen.get('platform')!r}, the identity says {identity.navigator_platform!r}")
    if seen.get("hintsPlatform") != identity.platform:
        tells.append(f"client hints' platform {seen.get('hintsPlatform')!r}, the identity says {identity.platform!r}")
    if seen.get("brands") != [list(b) for b in identity.brands]:
        tells.append(f"brands {seen.get('brands')} are not Chrome {identity.major}'s")
    if len(seen.get("languages") or []) < 2:
        tells.append(f"languages {seen.get('languages')}: a zh-CN Chrome has more than one")
    if seen.get("locale") != identity.languages[0]:
        tells.append(f"Intl's locale {seen.get('locale')!r}, the identity says {identity.languages[0]!r}")
    if seen.get("timezone") != identity.timezone:
        tells.append(f"time zone {seen.get('timezone')}, the identity says {identity.timezone}")
    return tells


def _in_a_thread(coroutine):
    """The coroutine run to its end on a loop of its own thread (the caller may have a loop running)."""
    result: list = []
    failed: list = []

    def run():
        try:
            result.append(asyncio.run(coroutine))
        except Exception as exc:
            failed.append(exc)

    thread = threading.Thread(target=run, name="farm-doctor-browser", daemon=True)
    thread.start()
    thread.join()
    if failed:
        raise failed[0]
    return result[0]


async def _visit(path: str, identity, timeout: float) -> dict:
    from aiohttp import web
    from playwright.async_api import async_playwright

    from farm.sandbox.botcheck import BUNDLE
    from farm.sessions.disguise import context_options, dress, launch_args

    bundle = BUNDLE.read_bytes()
    app = web.Application()
    app.router.add_get("/", lambda request: _respond(web, PAGE.encode(), "text/html; charset=utf-8"))
    app.router.add_get("/botd.esm.js", lambda request: _respond(web, bundle, "text/javascript; charset=utf-8"))
    runner = web.AppRunner(app, access_log=None, handle_signals=False)
    await runner.setup()
    try:
        site = web.TCPSite(runner, "127.0.0.1", 0)
        await site.start()
        port = runner.addresses[0][1]
        async with async_playwright() as playwright:
            browser = await playwright.chromium.launch(
                executable_path=path, headless=True, args=launch_args(identity), timeout=timeout * 1000
            )
            try:
                context = await browser.new_context(**context_options(identity))
                page = await context.new_page()
                await dress(context, page, identity, "doctor")
                await page.goto(f"http://127.0.0.1:{port}/", timeout=timeout * 1000)
                await page.wait_for_function("window.__farm !== undefined", timeout=timeout * 1000)
                return await page.evaluate("window.__farm")
            finally:
                await browser.close()
    finally:
        await runner.cleanup()


async def _respond(web, body: bytes, content_type: str):
    return web.Response(body=body, headers={"Content-Type": content_type})
