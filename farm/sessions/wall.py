"""A wall a site answers with, as a spider describes it for the browser (LeaseSpider.browser_wall), and the
walls no spider names (``unknown_wall``): farm must not depend on the one shape it was written against.

A wall farm has never seen is any answer where data was due that is an HTML page with scripts (or a refresh),
or a redirect away from the data to one, and that is neither a slider or puzzle (``captcha_in``), nor a login
(``login_in``), nor a page of the site's own (one that links to ``SITE_LINKS`` places); the spider rules out
its known refusals first (LeaseSpider.unknown_wall). Such a wall has no cookie to wait for: its page is opened
where it was met, and farm.sessions.watch decides when it is passed.
See docs/walls.md.
"""

import re
from dataclasses import dataclass
from urllib.parse import urlsplit

# Where a page shows a slider or a puzzle: farm does not solve them (docs/walls.md).
SLIDER_MARKERS = ("verify-slider", "nc_1_n1z", "nc_1_wrapper", "geetest_box", "waf-nc-title", "滑块")
# The same for a page of any shape: the public captcha services' own names (Geetest, Aliyun's no-captcha,
# Tencent's TCaptcha, NetEase's Yidun, Dingxiang, Shumei, hCaptcha, reCAPTCHA, Cloudflare's Turnstile) and
# the words a person is asked to act by (drag, puzzle, captcha, click the pictures).
CAPTCHA_MARKERS = (
    *SLIDER_MARKERS,
    "geetest",
    "gt4.js",
    "nc_wrapper",
    "awsc.js",
    "TencentCaptcha",
    "TCaptcha",
    "tcaptcha",
    "yidun",
    "NECaptcha",
    "dx-captcha",
    "_dx.Captcha",
    "smcaptcha",
    "hcaptcha",
    "g-recaptcha",
    "recaptcha/api",
    "cf-turnstile",
    "拖动",
    "拼图",
    "验证码",
    "点选",
    "请依次点击",
)
# A page that asks for an account: a password field, or an address of the site's sign-in.
LOGIN_INPUT = re.compile(r"""<input\b[^>]*\btype\s*=\s*["']?password""", re.IGNORECASE)
LOGIN_PATHS = re.compile(r"/(?:login|logon|signin|sign-in|passport)\b", re.IGNORECASE)
SCRIPT = re.compile(r"<script\b|<meta\b[^>]*http-equiv\s*=\s*[\"']?refresh", re.IGNORECASE)
TITLE = re.compile(r"<title\b[^>]*>.*?</title>", re.IGNORECASE | re.DOTALL)
LINK = re.compile(r"<a\b[^>]*\bhref\s*=", re.IGNORECASE)
SITE_LINKS = 5  # a page that links to this many places is the site's own (its navigation), not a wall's
INLINE_SCRIPT = re.compile(r"<script\b[^>]*>\s*([^<\s][^<]{15,})", re.IGNORECASE)
# The statuses an unknown wall is met with: a page in place of the data (200 to 299), or a challenge served as
# forbidden or unavailable (403, 503, as several WAFs do). 429 says "too many", which no browser changes.
WALL_STATUSES = frozenset({*range(200, 300), 403, 503})
REDIRECTS = frozenset({301, 302, 303, 307, 308})
UNKNOWN = "unknown_wall"  # an unknown wall's name after its site's: boss_unknown_wall


@dataclass(frozen=True)
class Wall:
    """``name``: the wall (its stat and log name); ``url``: the page a browser opens to pass it, as the site's
    own client would; ``cookies``: the cookies whose arrival means the browser has passed it (none: a wall
    farm does not know, passed as farm.sessions.watch says); ``data``: URL paths (or parts of them) of the data
    farm fetches itself, which the browser does not load (the page behind the wall asks for them as soon as it
    is passed: a page farm would then fetch twice); ``markers``: for an unknown wall, texts of the page farm
    met (its title, its first script), whose going away means the wall is gone."""

    name: str
    url: str
    cookies: tuple[str, ...]
    data: tuple[str, ...] = ()
    sliders: tuple[str, ...] = SLIDER_MARKERS
    markers: tuple[str, ...] = ()

    @property
    def known(self) -> bool:
        """Whether the spider named this wall and the cookie it grants."""
        return bool(self.cookies)

    def opens(self, status: int) -> bool:
        """Whether the browser's answer at ``url`` is one to pass: a known wall's page is never an error; an
        unknown wall may be a challenge served as 403 or 503."""
        return status < 400 or (not self.known and status in WALL_STATUSES)

    def asks_data(self, url: str) -> bool:
        """Whether ``url`` is the data behind the wall (its path names one of ``data``)."""
        path = urlsplit(url).path
        return any(part in path for part in self.data)

    def awaited(self) -> str:
        """What the browser waits for, as a log line says it."""
        if self.known:
            return f"{' or '.join(self.cookies)} cookie"
        return "sign of a pass (the page going back to the data, or new cookies on a page that stopped changing)"


def unknown_wall(site: str, response, text: str) -> Wall | None:
    """The wall ``response`` (``text``: its body) is, in a shape no spider names, or None: an HTML page with
    scripts or a refresh where data was due, or a redirect from the data to another part of a site (its path's
    first part is another), neither a captcha nor a login. The browser opens the page where it was met."""
    request = response.request
    met = (request.meta.get("redirect_urls") or [request.url])[0] if request is not None else response.url
    data = urlsplit(met).path
    name = f"{site}_{UNKNOWN}"
    if response.status in REDIRECTS:
        location = response.headers.get(b"Location", b"").decode("latin-1")
        target = urlsplit(location)
        if not location or LOGIN_PATHS.search(target.path) or captcha_in(location):
            return None
        if _first_part(target.path) == _first_part(data):
            return None  # the same part of a site (another scheme, host or spelling): an ordinary redirect, followed
        return Wall(name, met, (), data=(data,), sliders=CAPTCHA_MARKERS)
    if not in_wall_shape(response, text):
        return None
    if captcha_in(text) or login_in(text) or len(LINK.findall(text)) >= SITE_LINKS:
        return None
    return Wall(name, met, (), data=(data,), sliders=CAPTCHA_MARKERS, markers=markers_of(text))


def in_wall_shape(response, text: str) -> bool:
    """Whether ``response`` may be a wall at all: a redirect, or an HTML page with scripts (or a refresh) served
    with a status walls are served with. A quick look, before the spider parses the answer."""
    if response.status in REDIRECTS:
        return True
    return response.status in WALL_STATUSES and looks_html(response, text) and SCRIPT.search(text) is not None


def text_of(response) -> str:
    """A response's body as text (a bare Response's decoded as UTF-8)."""
    try:
        return response.text
    except AttributeError:
        return response.body.decode("utf-8", "replace")


def looks_html(response, text: str) -> bool:
    content_type = response.headers.get(b"Content-Type", b"").decode("latin-1").lower()
    return "html" in content_type or text.lstrip()[:1] == "<"


def captcha_in(text: str) -> str | None:
    """The first captcha or slider marker in ``text``, or None."""
    return next((marker for marker in CAPTCHA_MARKERS if marker in text), None)


def login_in(text: str) -> bool:
    return LOGIN_INPUT.search(text) is not None


def markers_of(text: str) -> tuple[str, ...]:
    """What tells this page from the next one: its title element and the start of its first inline script."""
    found = [match.group(0) for match in TITLE.finditer(text)][:1]
    script = INLINE_SCRIPT.search(text)
    if script is not None:
        found.append(script.group(1)[:48])
    return tuple(found)


def _first_part(path: str) -> str:
    return path.lstrip("/").split("/", 1)[0]
