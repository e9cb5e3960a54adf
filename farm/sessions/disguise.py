"""The browser dressed as the crawl's client identity, with no automation tells.

What a page's script and the browser's own requests show is set in the engine, not patched over in
JavaScript (a patched property is itself a tell a detector looks for):

- launch: ``--disable-blink-features=AutomationControlled`` (``navigator.webdriver`` false, as in a browser
  a person opened) and the identity's language (``--lang``);
- each context: the identity's User-Agent (no ``HeadlessChrome``), time zone, viewport and screen (not
  Playwright's locale, which sends an Accept-Language of its own on a page's requests);
- each page, before it loads: DevTools' ``Emulation.setUserAgentOverride`` with the identity's client hints
  (the brands Chromium derives, the full version list, platform, mobile), its ``navigator.platform`` and its
  languages, and ``Emulation.setLocaleOverride`` (Intl's locale), so that ``navigator.userAgentData``,
  ``navigator.languages`` and the headers the browser sends (sec-ch-ua, Accept-Language) are those the plain
  requests send.

The identity is the browser's own: ``crawl_identity`` reads the version of the Chromium farm drives, and
``dress`` refuses a browser whose version (``browser.version``, read at launch) is not the identity's.
`farm doctor` (farm.cli.botcheck) runs a bot detector against a browser dressed here.
"""

from urllib.parse import urlsplit

from farm.errors import WallNotPassed
from farm.sessions.identity import ClientIdentity, engine_version

LAUNCH_ARGS = ("--no-sandbox", "--disable-dev-shm-usage", "--disable-blink-features=AutomationControlled")


def crawl_identity(target: str, browser: str | None) -> ClientIdentity:
    """The identity a crawl presents: the Chromium it drives (``browser``: its path, as
    farm.sessions.browser.find_chromium finds it), at that browser's version; with no browser
    (FARM_BROWSER_PAGES=0, none installed) the target's own."""
    return ClientIdentity.of(target, engine_version(browser) if browser else None)


def launch_args(identity: ClientIdentity) -> list[str]:
    return [*LAUNCH_ARGS, f"--lang={identity.languages[0]}", f"--accept-lang={','.join(identity.languages)}"]


def context_options(identity: ClientIdentity, proxy: str = "") -> dict:
    """Playwright's new_context options for the identity, through ``proxy`` ("" for none)."""
    width, height = identity.viewport
    screen_width, screen_height = identity.screen
    options: dict = {
        "user_agent": identity.user_agent,
        # no "locale": Playwright would send its Accept-Language on a page's requests; --lang and the DevTools
        # override give the languages everywhere
        "timezone_id": identity.timezone,
        "viewport": {"width": width, "height": height},
        "screen": {"width": screen_width, "height": screen_height},
        "is_mobile": identity.mobile,
        "extra_http_headers": {},
    }
    if proxy:
        parts = urlsplit(proxy)
        options["proxy"] = {"server": f"{parts.scheme}://{parts.hostname}:{parts.port}"}
        if parts.username:
            options["proxy"].update(username=parts.username, password=parts.password or "")
    return options


async def dress(context, page, identity: ClientIdentity, wall: str) -> None:
    """Set the identity's client hints, platform and languages on ``page`` before it loads anything.
    WallNotPassed ("browser") when the browser is not the Chrome the identity claims."""
    version = context.browser.version if context.browser is not None else ""
    if version and version.split(".", 1)[0] != str(identity.major):
        raise WallNotPassed(
            wall,
            "browser",
            f"the browser is Chromium {version}, the crawl presents Chrome {identity.full_version}: "
            "restart the crawl after a browser upgrade",
        )
    session = await context.new_cdp_session(page)
    await session.send(
        "Emulation.setUserAgentOverride",
        {
            "userAgent": identity.user_agent,
            "acceptLanguage": ",".join(identity.languages),  # Chromium adds the q-values itself
            "platform": identity.navigator_platform,
            "userAgentMetadata": identity.ua_metadata(),
        },
    )
    await session.send("Emulation.setLocaleOverride", {"locale": identity.languages[0]})  # Intl's
