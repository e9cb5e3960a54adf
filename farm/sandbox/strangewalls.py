"""Walls in shapes no spider names (`farm sandbox --strange-walls`): a second imitation of the sites' doors,
drawn apart from walls.py and from the rules farm's spiders were written against, to show that farm passes
walls it has never seen (docs/sites.md §4.6, "Strange walls"). No shape is a site's own: they stand before
every site the sandbox imitates (the registry's), or the config's `sites`.

Each challenge is served in one of four forms, taken in turn from the config's `forms`, so that one crawl meets
them all; each sets a cookie whose name is new with every challenge (`_vx_3fa9c1`, `sgw_07be2d`, …):

    reload   HTTP 200 in place of the data: a 安全验证 page whose script hashes its secret and the User-Agent
             (SHA-256, in SubtleCrypto: the cookie arrives a moment after the page shows) and reloads
    refresh  HTTP 200 in place of the data: a 请稍候 page whose script sets the cookie after 0.6 s and whose
             `<meta http-equiv="refresh">` reloads it after 2 s, with no script navigation at all
    form     HTTP 200 in place of the data: a "Checking your browser" page whose script finds a proof of work
             and POSTs it in a form to /_guard/answer, which sets the cookie (HttpOnly) and sends the browser
             back with a refresh
    chain    a 302 in place of the data to /_guard/hop (which sets a tracing cookie), a 307 on to /_guard/check,
             a 访问校验 page whose script sets the cookie and goes back where the visitor came from
    stay     HTTP 200 in place of the data: a 环境检测 page whose script sets the cookie and says 检测通过, 请刷新,
             and goes nowhere: the visitor asks again

A session is the cookie of a challenge whose value is that challenge's token for the request's User-Agent; it
lets through `session_requests` requests within `session_seconds`, then the next request meets a new challenge.
Slider keywords (`KW` or `site:KW`) never pass: the data is answered by a puzzle page (the chain ends on one),
whose script sets no cookie.
"""

import hashlib
import html
import json
import time
from collections import Counter, OrderedDict
from dataclasses import dataclass, field

from aiohttp import web

from .sites import served_sites

FORMS = ("reload", "refresh", "form", "chain", "stay")
FIELDS = ("sites", "forms", "session_seconds", "session_requests", "slider_keywords", "seed")
COOKIE_WORDS = ("_vx_", "sgw_", "tkv", "__hc_", "rsk_")
WORK = "00"  # the hex a form's proof of work must hash to first
KEEP = 65536


@dataclass(frozen=True)
class StrangeConfig:
    sites: tuple = field(default_factory=served_sites)  # every site the sandbox imitates
    forms: tuple = FORMS
    session_seconds: float = 300.0
    session_requests: int = 40
    slider_keywords: tuple = ()  # "KW" (every site) or "site:KW"
    seed: int = 0

    def __post_init__(self):
        for name, given, known in (("sites", self.sites, served_sites()), ("forms", self.forms, FORMS)):
            unknown = [value for value in given if value not in known]
            if unknown or not given:
                raise ValueError(f"{name}: {unknown[0] if unknown else 'none'!r} is not one of {', '.join(known)}")
        if not self.session_seconds > 0:
            raise ValueError(f"session_seconds must be above 0, not {self.session_seconds}")
        if self.session_requests < 1:
            raise ValueError(f"session_requests must be at least 1, not {self.session_requests}")

    @classmethod
    def from_json(cls, data: object) -> "StrangeConfig":
        """A config from a control-endpoint body; ValueError names the field that is wrong."""
        if not isinstance(data, dict):
            raise ValueError("the strange walls' config must be a JSON object")
        unknown = sorted(set(data) - set(FIELDS))
        if unknown:
            raise ValueError(f"unknown strange walls field {unknown[0]!r}; known: {', '.join(FIELDS)}")
        values: dict[str, tuple | float | int] = {}
        for name in ("sites", "forms", "slider_keywords"):
            if name in data:
                value = data[name]
                if not isinstance(value, list) or not all(isinstance(v, str) and v for v in value):
                    raise ValueError(f"{name} must be a list of non-empty strings, not {value!r}")
                values[name] = tuple(value)
        for name, kind in (("session_seconds", float), ("session_requests", int), ("seed", int)):
            if name in data:
                value = data[name]
                if isinstance(value, bool) or not isinstance(value, int | float) or kind(value) != value:
                    raise ValueError(f"{name} must be a {'whole ' if kind is int else ''}number, not {value!r}")
                values[name] = kind(value)
        return cls(**values)  # type: ignore[arg-type]  # each value checked against its field above

    def to_json(self) -> dict:
        return {name: list(v) if isinstance(v := getattr(self, name), tuple) else v for name in FIELDS}

    def slider_keyword(self, site: str, keyword: str) -> bool:
        return keyword in self.slider_keywords or f"{site}:{keyword}" in self.slider_keywords


@dataclass
class Guard:
    site: str
    form: str
    secret: str
    cookie: str
    back: str  # the path and query it was met at
    issued: float
    slider: bool = False


@dataclass
class Admission:
    agent: str
    issued: float
    used: int = 0


def token(secret: str, agent: str) -> str:
    """The cookie a challenge's script (or its form's answer) sets for this User-Agent."""
    return hashlib.sha256(f"{secret}|{agent}".encode()).hexdigest()[:32]


class StrangeWalls:
    """Challenges, sessions and counts of the strange walls. `clock` gives unix seconds (injectable)."""

    def __init__(self, config: StrangeConfig | None = None, clock=time.time):
        self.config = config or StrangeConfig()
        self.clock = clock
        self.counts: Counter[str] = Counter()  # "<site>/<what>": challenges served by form, sessions, passes, sliders
        self._challenges: OrderedDict[str, Guard] = OrderedDict()  # by id
        self._cookies: OrderedDict[str, str] = OrderedDict()  # cookie name -> challenge id
        self._sessions: OrderedDict[tuple[str, str], Admission] = OrderedDict()
        self._made: Counter[str] = Counter()

    def replace(self, config: StrangeConfig) -> None:
        self.config = config

    def guard(self, site: str, request: web.Request, keyword: str) -> web.Response | None:
        """The wall's answer to a search request, or None to let it through."""
        if site not in self.config.sites:
            return None
        slider = self.config.slider_keyword(site, keyword)
        if not slider and self._session(site, request):
            self.counts[f"{site}/let_through"] += 1
            return None
        return self._challenge_answer(site, request.raw_path, slider)

    def _session(self, site, request) -> bool:
        agent = request.headers.get("User-Agent", "")
        for name, value in request.cookies.items():
            challenge = self._challenges.get(self._cookies.get(name, ""))
            if challenge is None or challenge.site != site or value != token(challenge.secret, agent):
                continue
            session = self._sessions.get((name, value))
            if session is None:
                session = _keep(self._sessions, (name, value), Admission(agent, challenge.issued))
                self.counts[f"{site}/sessions"] += 1
            c = self.config
            if self.clock() - session.issued >= c.session_seconds or session.used >= c.session_requests:
                continue
            session.used += 1
            return True
        return False

    def _challenge_answer(self, site, back, slider):
        n = self._made[site]
        self._made[site] = n + 1
        digest = hashlib.blake2b(f"{self.config.seed}|strange|{site}|{n}".encode(), digest_size=24).hexdigest()
        form = self.config.forms[n % len(self.config.forms)]
        cookie = COOKIE_WORDS[int(digest[:2], 16) % len(COOKIE_WORDS)] + digest[2:8]
        challenge = Guard(site, form, digest[8:40], cookie, back, self.clock(), slider)
        key = digest[40:48]
        _keep(self._challenges, key, challenge)
        _keep(self._cookies, cookie, key)
        self.counts[f"{site}/{'slider' if slider else form}"] += 1
        if form == "chain":
            response = web.Response(status=302, headers={"Location": f"/_guard/hop?c={key}"})
            return response
        if slider:
            return _html(PUZZLE.format(trace=key))
        return self._page(form, key, challenge)

    def _page(self, form, key, challenge):
        values = {"secret": _js(challenge.secret), "name": _js(challenge.cookie), "back": _js(challenge.back)}
        if form == "reload":
            return _html(RELOAD.format(script=DIGEST_JS + RELOAD_JS.format(**values), trace=key))
        if form == "refresh":
            return _html(REFRESH.format(script=DIGEST_JS + REFRESH_JS.format(**values), trace=key))
        if form == "form":
            script = DIGEST_JS + FORM_JS.format(secret=_js(challenge.secret), work=_js(WORK))
            return _html(FORM.format(key=key, back=html.escape(challenge.back), script=script))
        if form == "stay":
            return _html(STAY.format(script=DIGEST_JS + STAY_JS.format(**values), trace=key))
        return _html(CHECK.format(script=DIGEST_JS + CHECK_JS.format(**values), trace=key))

    # --- the pages behind the first answer ---

    def hop(self, request: web.Request) -> web.Response:
        key = request.query.get("c", "")
        if key not in self._challenges:
            raise web.HTTPNotFound()
        response = web.Response(status=307, headers={"Location": f"/_guard/check?c={key}&t={int(self.clock())}"})
        response.set_cookie("_gh_trace", key, path="/", max_age=600)
        return response

    def check(self, request: web.Request) -> web.Response:
        challenge = self._challenges.get(request.query.get("c", ""))
        if challenge is None:
            raise web.HTTPNotFound()
        if challenge.slider:
            return _html(PUZZLE.format(trace=request.query.get("c", "")))
        return self._page("chain", request.query["c"], challenge)

    async def answer(self, request: web.Request) -> web.Response:
        form = await request.post()
        challenge = self._challenges.get(str(form.get("c", "")))
        nonce = str(form.get("n", ""))
        if challenge is None or not hashlib.sha256(f"{challenge.secret}:{nonce}".encode()).hexdigest().startswith(WORK):
            return web.Response(status=400, text="bad proof")
        self.counts[f"{challenge.site}/answers"] += 1
        back = challenge.back if challenge.back.startswith("/") and not challenge.back.startswith("//") else "/"
        page = (
            f'<!DOCTYPE html><html><head><meta http-equiv="refresh" content="0;url={html.escape(back)}"></head></html>'
        )
        response = _html(page)
        agent = request.headers.get("User-Agent", "")
        response.set_cookie(challenge.cookie, token(challenge.secret, agent), path="/", httponly=True, max_age=1800)
        return response

    def status(self) -> dict:
        return {"counts": dict(sorted(self.counts.items())), "config": self.config.to_json()}


def add_routes(app: web.Application, sandbox) -> None:
    """/_guard/hop, /_guard/check and /_guard/answer; 404 while the strange walls are down."""

    def up():
        if sandbox.strange is None:
            raise web.HTTPNotFound()
        return sandbox.strange

    async def hop(request):
        return up().hop(request)

    async def check(request):
        return up().check(request)

    async def answer(request):
        return await up().answer(request)

    app.router.add_get("/_guard/hop", hop)
    app.router.add_get("/_guard/check", check)
    app.router.add_post("/_guard/answer", answer)


def _keep(table, key, value):
    table[key] = value
    if len(table) > KEEP:
        table.popitem(last=False)
    return value


def _js(value) -> str:
    return json.dumps(value).replace("<", "\\u003c")


def _html(text):
    return web.Response(text=text, headers={"Content-Type": "text/html; charset=utf-8", "Cache-Control": "no-store"})


# window.__h(text): a promise of the first 32 hex digits of SHA-256(text)
DIGEST_JS = (
    "window.__h=function(t){return crypto.subtle.digest('SHA-256',new TextEncoder().encode(t)).then("
    "function(b){return Array.prototype.map.call(new Uint8Array(b),function(x){return('0'+x.toString(16))"
    ".slice(-2);}).join('').slice(0,32);});};"
)
RELOAD_JS = (
    "__h({secret}+'|'+navigator.userAgent).then(function(v){{document.cookie={name}+'='+v+'; path=/; max-age=1800';"
    "setTimeout(function(){{location.reload();}},200);}});"
)
REFRESH_JS = (
    "setTimeout(function(){{__h({secret}+'|'+navigator.userAgent).then(function(v){{"
    "document.cookie={name}+'='+v+'; path=/';}});}},600);"
)
CHECK_JS = (
    "__h({secret}+'|'+navigator.userAgent).then(function(v){{document.cookie={name}+'='+v+'; path=/';"
    "var b={back};if(b.charAt(0)!=='/'||b.charAt(1)==='/'){{b='/';}}location.href=b;}});"
)
STAY_JS = (
    "__h({secret}+'|'+navigator.userAgent).then(function(v){{document.cookie={name}+'='+v+'; path=/';"
    "document.getElementById('st').textContent='检测通过，请刷新页面';}});"
)
FORM_JS = (
    "(function(){{var s={secret},w={work},i=0;function next(){{__h(s+':'+i).then(function(v){{"
    "if(v.indexOf(w)===0){{document.getElementById('n').value=String(i);document.getElementById('v').submit();}}"
    "else{{i++;next();}}}});}}next();}})();"
)

RELOAD = """<!DOCTYPE html><html lang="zh"><head><meta charset="utf-8"><title>安全验证</title>
<style>.sv-spin{{width:28px;height:28px;border:3px solid #ddd;border-top-color:#3a7;border-radius:50%}}</style></head>
<body><main class="sv"><div class="sv-spin"></div><h2>安全验证</h2><p>正在确认您的访问环境，请稍候</p>
<noscript>请开启 JavaScript 后刷新页面</noscript><small class="sv-ref">{trace}</small></main>
<script>{script}</script></body></html>"""

REFRESH = """<!DOCTYPE html><html><head><meta charset="utf-8"><meta http-equiv="refresh" content="2">
<title>请稍候…</title></head><body><div id="wait"><p>请稍候…页面即将自动跳转</p><p class="ref">{trace}</p></div>
<script>{script}</script></body></html>"""

FORM = """<!DOCTYPE html><html><head><meta charset="utf-8"><title>Checking your browser</title></head>
<body><div class="cb"><h1>Checking your browser before accessing the site.</h1>
<p>This process is automatic. Your browser will redirect to your requested content shortly.</p>
<form id="v" method="POST" action="/_guard/answer"><input type="hidden" name="c" value="{key}">
<input type="hidden" name="n" id="n" value=""><input type="hidden" name="r" value="{back}"></form></div>
<script>{script}</script></body></html>"""

CHECK = """<!DOCTYPE html><html><head><meta charset="utf-8"><title>访问校验</title></head>
<body><section id="check"><p>访问校验中</p><p class="id">{trace}</p></section><script>{script}</script></body></html>"""

STAY = """<!DOCTYPE html><html><head><meta charset="utf-8"><title>环境检测</title></head>
<body><div class="env"><p id="st">环境检测中…</p><p class="ref">{trace}</p></div>
<script>{script}</script></body></html>"""

# The puzzle no client passes: its script only draws; it sets no cookie.
PUZZLE = """<!DOCTYPE html><html><head><meta charset="utf-8"><title>人机验证</title></head>
<body><div class="pz"><canvas id="pz-bg" width="300" height="150"></canvas>
<div class="pz-bar"><span class="pz-knob" id="knob">&#8594;</span><em>向右拖动完成拼图</em></div>
<p class="pz-ref">{trace}</p></div>
<script>var c=document.getElementById('pz-bg').getContext('2d');c.fillRect(20,40,44,44);</script></body></html>"""
