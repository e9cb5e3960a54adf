"""The sites' walls (`farm sandbox --walls`): a session is earned only by running a wall page's script, or by
computing what it computes (walltoken.py), and belongs to the User-Agent that earned it.

    boss     the API answers code 37 with zpData {seed, ts, name}; /web/common/security-check.html loads
             /web/common/security-js/<name>.js, which sets __zp_stoken__ and goes back to callbackUrl
    qcwy     the WAF answers the API and /pc/search with `var arg1=` and a fresh acw_tc cookie; the page sets
             acw_sc__v2 and reloads. A valid pair: acw_sc__v2 == qcwy_token(arg1 issued with that acw_tc, UA)
    zhilian  /sou/… answers 302 to /verify/security?return=…, whose script sets zp_verify and goes back

The protocol is docs/sites.md §4.6. Choices where it is silent, after what the sites do:

- A session's life starts when its challenge was served (code 37, the WAF page, the 安全验证 page), as a
  real token carries the time of its seed; it ends `session_seconds` later, or once it has answered
  `session_requests` requests (every request let through counts, whatever the app answers). The request
  after that meets the wall again, with a fresh seed. An expired token stays refused for good.
- One challenge may be solved by several User-Agents; each gets its own session. A live session's token
  sent with another User-Agent is refused (`other_agent`), and so is any token that does not match its
  challenge for the request's User-Agent (`invalid`).
- Slider keywords (`KW` or `site:KW`) are never let through, with or without a session: boss answers code 37
  and its security page sends the browser to the slider; qcwy answers the slider page; zhilian redirects to
  /verify/security, which serves the slider. `slider_rate` is drawn per boss security-page visit, per qcwy
  challenge, per zhilian /verify/security visit, from the wall seed and a per-site count.
- Boss's /web/geek/job shell is not itself guarded (on the site, its script meets the wall through the API);
  51job's /pc/search is, by the WAF, like the API. The slider pages' scripts never set a cookie.
- A callbackUrl or return that is not a path on this host (not starting with one `/`) is replaced by the
  site's search page (boss) or `/` (zhilian), by the page's script.
- Each token page runs BotD before it sets its cookie (botcheck.py) and posts the verdict: a challenge whose page
  BotD judged a bot grants no session (`bot`), whatever its token.
- Challenges and sessions are kept per site, the newest 65,536 of each.
- `refuse_sessions`: every session is refused on its first use (`refused`), as a site that lets the browser
  through and then judges the client a bot. `hang`: the token pages (boss's security page, qcwy's WAF
  page, zhilian's /verify/security) are a script that never yields (`while(true){}`).
"""

import base64
import hashlib
import time
import urllib.parse
from collections import Counter, OrderedDict
from dataclasses import dataclass, field

from aiohttp import web

from . import botcheck, wallpages
from .data import fraction, stable_hash
from .walltoken import mix

SITES = ("boss", "qcwy", "zhilian")
COOKIES = {"boss": "__zp_stoken__", "qcwy": "acw_sc__v2", "zhilian": "zp_verify"}
LANES = {"boss": 4, "qcwy": 5, "zhilian": 4}
KEEP = 65536  # challenges and sessions kept per site
JSON_TYPE = "application/json;charset=UTF-8"
HTML_TYPE = "text/html; charset=utf-8"
FIELDS = (
    "sites",
    "session_seconds",
    "session_requests",
    "slider_rate",
    "slider_keywords",
    "seed",
    "refuse_sessions",
    "hang",
)
# a wall page whose script never yields: the page's renderer answers nothing more (a browser's wait must be bounded)
HANG_PAGE = (
    "<!doctype html><html><head><title>安全验证</title></head><body><script>while(true){}</script></body></html>"
)


@dataclass(frozen=True)
class WallConfig:
    sites: tuple = SITES
    session_seconds: float = 120.0
    session_requests: int = 60
    slider_rate: float = 0.0
    slider_keywords: tuple = ()  # "KW" (every walled site) or "site:KW"
    seed: int = 0
    refuse_sessions: bool = False  # every session is refused on its first use (the site judges the client a bot)
    hang: bool = False  # the token pages' script never yields

    def __post_init__(self):
        unknown = [s for s in self.sites if s not in SITES]
        if unknown:
            raise ValueError(f"sites: unknown site {unknown[0]!r}; known: {', '.join(SITES)}")
        if not self.session_seconds > 0:
            raise ValueError(f"session_seconds must be above 0, not {self.session_seconds}")
        if self.session_requests < 1:
            raise ValueError(f"session_requests must be at least 1, not {self.session_requests}")
        if not 0.0 <= self.slider_rate <= 1.0:
            raise ValueError(f"slider_rate must be between 0 and 1, not {self.slider_rate}")

    @classmethod
    def from_json(cls, data: object) -> "WallConfig":
        """A config from a control-endpoint body; ValueError names the field that is wrong."""
        if not isinstance(data, dict):
            raise ValueError("the wall config must be a JSON object")
        unknown = sorted(set(data) - set(FIELDS))
        if unknown:
            raise ValueError(f"unknown wall config field {unknown[0]!r}; known: {', '.join(FIELDS)}")
        values = {}
        for name, kind in (("session_seconds", float), ("session_requests", int), ("slider_rate", float)):
            if name in data:
                value = data[name]
                if isinstance(value, bool) or not isinstance(value, int | float) or kind(value) != value:
                    raise ValueError(f"{name} must be a {'whole ' if kind is int else ''}number, not {value!r}")
                values[name] = kind(value)
        for name in ("sites", "slider_keywords"):
            if name in data:
                value = data[name]
                if not isinstance(value, list) or not all(isinstance(v, str) and v for v in value):
                    raise ValueError(f"{name} must be a list of non-empty strings, not {value!r}")
                values[name] = tuple(value)
        for name in ("refuse_sessions", "hang"):
            if name in data:
                if not isinstance(data[name], bool):
                    raise ValueError(f"{name} must be true or false, not {data[name]!r}")
                values[name] = data[name]
        if "seed" in data:
            if isinstance(data["seed"], bool) or not isinstance(data["seed"], int):
                raise ValueError(f"seed must be a whole number, not {data['seed']!r}")
            values["seed"] = data["seed"]
        return cls(**values)

    def to_json(self) -> dict:
        return {
            "sites": list(self.sites),
            "session_seconds": self.session_seconds,
            "session_requests": self.session_requests,
            "slider_rate": self.slider_rate,
            "slider_keywords": list(self.slider_keywords),
            "seed": self.seed,
            "refuse_sessions": self.refuse_sessions,
            "hang": self.hang,
        }

    def slider_keyword(self, site: str, keyword: str) -> bool:
        return keyword in self.slider_keywords or f"{site}:{keyword}" in self.slider_keywords


@dataclass
class Challenge:
    text: str  # what the token hashes before "|User-Agent"
    issued: float  # the clock when it was served


@dataclass
class Session:
    agent: str
    issued: float
    used: int = 0
    expired: bool = False


@dataclass
class WallTally:
    """The counts GET /_sandbox/walls shows."""

    sessions_issued: Counter = field(default_factory=Counter)
    walls_served: dict = field(default_factory=lambda: {site: Counter() for site in SITES})
    expired: Counter = field(default_factory=Counter)
    with_session: Counter = field(default_factory=Counter)
    sliders: Counter = field(default_factory=Counter)
    security_pages: Counter = field(default_factory=Counter)
    bots: Counter = field(default_factory=Counter)  # wall pages BotD judged a bot (botcheck.py)
    people: Counter = field(default_factory=Counter)  # and not a bot
    bot_kinds: Counter = field(default_factory=Counter)  # BotD's botKind, over every site

    def to_json(self) -> dict:
        counters = ("sessions_issued", "expired", "with_session", "sliders", "security_pages", "bots", "people")
        shown = {name: {site: getattr(self, name)[site] for site in SITES} for name in counters}
        shown["walls_served"] = {site: dict(self.walls_served[site]) for site in SITES}
        shown["bot_kinds"] = dict(self.bot_kinds)
        return shown


class Walls:
    """The walls' state: open challenges, sessions and counts. `clock` gives unix seconds (injectable)."""

    def __init__(self, config: WallConfig | None = None, clock=time.time):
        self.config = config or WallConfig()
        self.clock = clock
        self.tally = WallTally()
        self._challenges = {site: OrderedDict() for site in SITES}
        self._sessions = {site: OrderedDict() for site in SITES}
        self._bots = {site: OrderedDict() for site in SITES}  # challenges whose page BotD judged a bot
        self._made = Counter()  # challenges made per site: each gets a fresh seed
        self._draws = Counter()  # slider draws per site

    def replace(self, config: WallConfig) -> None:
        """A new config; open challenges and sessions stay, judged by the new limits."""
        self.config = config

    def reset_counts(self) -> None:
        self.tally = WallTally()

    def judged(self, site: str, challenge: str, bot: bool, kind: str) -> None:
        """A wall page's BotD verdict on the client that opened it: a bot's challenge grants no session.
        ``challenge``: the challenge's name (boss), arg1 (qcwy) or key (zhilian), as its page knows it."""
        if site not in SITES:
            return
        if bot:
            self._keep(self._bots[site], challenge, True)
            self.tally.bots[site] += 1
            self.tally.bot_kinds[kind or "unknown"] += 1
        else:
            self.tally.people[site] += 1

    def guard(self, site: str, request: web.Request, keyword: str) -> web.Response | None:
        """The wall's answer to a guarded request, or None to let it through."""
        if site not in self.config.sites:
            return None
        if self.config.slider_keyword(site, keyword):
            why = "slider_keyword"
        else:
            why = self._check(site, request)
            if why is None:
                return None
        self.tally.walls_served[site][why] += 1
        return self._wall(site, request, keyword)

    # --- sessions ---

    def _check(self, site, request):
        """None when the request carries a live session of its User-Agent, else why not."""
        agent = request.headers.get("User-Agent", "")
        cookies = request.cookies
        value = urllib.parse.unquote(cookies.get(COOKIES[site], ""))
        if site == "qcwy":
            key = cookies.get("acw_tc", "")
            token = (key, value)
        else:
            key, token = value.rpartition(".")[2], value
        if not value or not key:
            return "no_cookie"
        session = self._sessions[site].get(token)
        if session is None:
            challenge = self._challenges[site].get(key)
            if challenge is None or self._token(site, challenge, agent, key) != value:
                return "invalid"
            if (challenge.text if site == "qcwy" else key) in self._bots[site]:
                return "bot"  # its page's bot detector flagged the client that solved it
            session = self._keep(self._sessions[site], token, Session(agent, challenge.issued))
            self.tally.sessions_issued[site] += 1
            if self.config.refuse_sessions:
                session.expired = True
                return "refused"
        elif session.agent != agent:
            return "other_agent"
        if session.expired:
            return "expired"
        c = self.config
        if self.clock() - session.issued >= c.session_seconds or session.used >= c.session_requests:
            session.expired = True
            self.tally.expired[site] += 1
            return "expired"
        session.used += 1
        self.tally.with_session[site] += 1
        return None

    @staticmethod
    def _token(site, challenge, agent, key):
        digest = mix(f"{challenge.text}|{agent}", LANES[site])
        return digest if site == "qcwy" else f"{digest}.{key}"

    @staticmethod
    def _keep(table, key, value):
        table[key] = value
        if len(table) > KEEP:
            table.popitem(last=False)
        return value

    def _challenge(self, site):
        """(key, seed bytes, now) for a fresh challenge: 8 hex digits, 32 bytes and the clock."""
        n = self._made[site]
        self._made[site] = n + 1
        raw = hashlib.blake2b(f"{self.config.seed}|{site}|{n}".encode(), digest_size=36).digest()
        return raw[:4].hex(), raw[4:], self.clock()

    def _remember(self, site, key, text, issued):
        self._keep(self._challenges[site], key, Challenge(text, issued))

    def slider_drawn(self, site: str) -> bool:
        c = self.config
        if c.slider_rate <= 0:
            return False
        n = self._draws[site]
        self._draws[site] = n + 1
        return fraction(stable_hash(c.seed, "slider", site, n)) < c.slider_rate

    # --- the walls ---

    def _wall(self, site, request, keyword):
        if site == "boss":
            name, raw, now = self._challenge(site)
            seed, ts = base64.b64encode(raw).decode(), int(now * 1000)
            self._remember(site, name, f"{seed}|{ts}", now)
            return web.Response(body=wallpages.boss_code37(seed, ts, name), headers={"Content-Type": JSON_TYPE})
        if site == "qcwy":
            return self.qcwy_wall(keyword)
        back = urllib.parse.quote(request.raw_path, safe="")
        return web.Response(status=302, headers={"Location": f"/verify/security?return={back}"})

    def qcwy_wall(self, keyword: str) -> web.Response:
        """The WAF's answer: the slider page for slider keywords and draws, else a fresh challenge."""
        if self.config.slider_keyword("qcwy", keyword) or self.slider_drawn("qcwy"):
            self.tally.sliders["qcwy"] += 1
            tag, trace, _ = self._challenge("qcwy")
            return web.Response(text=wallpages.qcwy_slider(tag[:6], trace[:8].hex()), content_type="text/html")
        key, raw, now = self._challenge("qcwy")
        tc, arg1 = key + raw[:12].hex(), raw[12:].hex().upper()
        self._remember("qcwy", tc, arg1, now)
        self.tally.security_pages["qcwy"] += 1
        page = wallpages.qcwy_challenge(arg1)
        if self.config.hang:  # the WAF's page as farm knows it, whose script never gets past its first line
            page = page.replace("<script>", "<script>while(true){}", 1)
        response = web.Response(text=page, content_type="text/html")
        response.set_cookie("acw_tc", tc, path="/", httponly=True, max_age=1800)
        return response

    def boss_security(self, request: web.Request) -> web.Response:
        """/web/common/security-check.html: the token page, or on to the slider when one is due."""
        self.tally.security_pages["boss"] += 1
        q = request.query
        callback = q.get("callbackUrl", "")
        keyword = urllib.parse.parse_qs(urllib.parse.urlsplit(callback).query).get("query", [""])[0]
        if self.config.slider_keyword("boss", keyword) or self.slider_drawn("boss"):
            target = "/web/passport/zp/verify-slider?" + urllib.parse.urlencode(
                {"callbackUrl": callback, "srcReferer": ""}
            )
            return _html(wallpages.boss_security_to_slider(target))
        return _html(HANG_PAGE if self.config.hang else wallpages.boss_security(q.get("name", "")))

    def boss_slider(self) -> web.Response:
        self.tally.sliders["boss"] += 1
        return _html(wallpages.boss_slider())

    def zhilian_verify(self, request: web.Request) -> web.Response:
        """/verify/security: the token page, or the slider for slider keywords and draws."""
        self.tally.security_pages["zhilian"] += 1
        back = request.query.get("return", "")
        keyword = urllib.parse.parse_qs(urllib.parse.urlsplit(back).query).get("kw", [""])[0]
        key, raw, now = self._challenge("zhilian")
        if self.config.slider_keyword("zhilian", keyword) or self.slider_drawn("zhilian"):
            self.tally.sliders["zhilian"] += 1
            return _html(wallpages.zhilian_slider(raw[:8].hex()))
        seed = raw[:16].hex()
        self._remember("zhilian", key, seed, now)
        return _html(HANG_PAGE if self.config.hang else wallpages.zhilian_verify(seed, key, back))

    def status(self) -> dict:
        return {**self.tally.to_json(), "config": self.config.to_json()}


def _html(text):
    return web.Response(text=text, headers={"Content-Type": HTML_TYPE})


def add_routes(app: web.Application, sandbox) -> None:
    """The wall pages and the sites' human search pages; 404 while the sandbox has no walls."""

    def walled(handler):
        async def serve(request):
            if sandbox.walls is None:
                raise web.HTTPNotFound()
            return handler(sandbox.walls, request)

        return serve

    def qcwy_search(walls, request):
        refused = walls.guard("qcwy", request, request.query.get("keyword", ""))
        return refused or _html(wallpages.QCWY_SEARCH_SHELL)

    def security_js(walls, request):
        return web.Response(text=wallpages.BOSS_SECURITY_JS, content_type="application/javascript")

    routes = {
        "/web/geek/job": lambda walls, request: _html(wallpages.BOSS_JOB_SHELL),
        "/web/common/security-check.html": lambda walls, request: walls.boss_security(request),
        "/web/common/security-js/{name}.js": security_js,
        "/web/passport/zp/verify-slider": lambda walls, request: walls.boss_slider(),
        "/pc/search": qcwy_search,
        "/verify/security": lambda walls, request: walls.zhilian_verify(request),
    }
    for path, handler in routes.items():
        app.router.add_get(path, walled(handler))
    botcheck.add_routes(app, sandbox)
