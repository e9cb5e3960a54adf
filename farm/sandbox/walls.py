"""The sites' walls (`farm sandbox --walls`): a session is earned only by running a wall page's script, or by
computing what it computes (walltoken.py), and belongs to the User-Agent that earned it.

This module is what every wall shares: the config, the open challenges, the sessions, the tally and BotD's
verdicts. Each site's own wall (its cookie, its token, its answer in place of the data, its token and slider
pages) is a shape (wallshape.py) in its package's wall.py, named by its record (``Site.sandbox_wall``); a
site without one stands behind no wall. The protocol is docs/sites.md §4.6. Choices where it is silent,
after what the sites do:

- A session's life starts when its challenge was served, as a real token carries the time of its seed; it
  ends `session_seconds` later, or once it has answered `session_requests` requests (every request let
  through counts, whatever the app answers). The request after that meets the wall again, with a fresh
  seed. An expired token stays refused for good.
- One challenge may be solved by several User-Agents; each gets its own session. A live session's token
  sent with another User-Agent is refused (`other_agent`), and so is any token that does not match its
  challenge for the request's User-Agent (`invalid`).
- Slider keywords (`KW` or `site:KW`) are never let through, with or without a session: the wall's answer
  leads to a slider page, whose script never sets a cookie. `slider_rate` is drawn once per chance of a
  slider the shape gives (a visit of its token page, or its challenge), from the wall seed and a per-site
  count.
- A page's way back that is not a path on this host (not starting with one `/`) is replaced by the page's
  script.
- Each token page runs BotD before it sets its cookie (botcheck.py) and posts the verdict: a challenge whose page
  BotD judged a bot grants no session (`bot`), whatever its token.
- Challenges and sessions are kept per site, the newest 65,536 of each.
- `refuse_sessions`: every session is refused on its first use (`refused`), as a site that lets the browser
  through and then judges the client a bot. `hang`: the token pages are a script that never yields
  (`while(true){}`).
"""

import hashlib
import time
from collections import Counter, OrderedDict, defaultdict
from dataclasses import dataclass, field

from aiohttp import web

from . import botcheck
from .data import fraction, stable_hash
from .sites import wall_shapes, walled_sites

KEEP = 65536  # challenges and sessions kept per site
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


@dataclass(frozen=True)
class WallConfig:
    sites: tuple = field(default_factory=walled_sites)
    session_seconds: float = 120.0
    session_requests: int = 60
    slider_rate: float = 0.0
    slider_keywords: tuple = ()  # "KW" (every walled site) or "site:KW"
    seed: int = 0
    refuse_sessions: bool = False  # every session is refused on its first use (the site judges the client a bot)
    hang: bool = False  # the token pages' script never yields

    def __post_init__(self):
        known = walled_sites()
        unknown = [s for s in self.sites if s not in known]
        if unknown:
            raise ValueError(f"sites: unknown site {unknown[0]!r}; known: {', '.join(known)}")
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
    """The counts GET /_sandbox/walls shows, for each of ``sites``."""

    sites: tuple
    sessions_issued: Counter = field(default_factory=Counter)
    walls_served: defaultdict = field(default_factory=lambda: defaultdict(Counter))
    expired: Counter = field(default_factory=Counter)
    with_session: Counter = field(default_factory=Counter)
    sliders: Counter = field(default_factory=Counter)
    security_pages: Counter = field(default_factory=Counter)
    bots: Counter = field(default_factory=Counter)  # wall pages BotD judged a bot (botcheck.py)
    people: Counter = field(default_factory=Counter)  # and not a bot
    bot_kinds: Counter = field(default_factory=Counter)  # BotD's botKind, over every site

    def to_json(self) -> dict:
        counters = ("sessions_issued", "expired", "with_session", "sliders", "security_pages", "bots", "people")
        shown = {name: {site: getattr(self, name)[site] for site in self.sites} for name in counters}
        shown["walls_served"] = {site: dict(self.walls_served[site]) for site in self.sites}
        shown["bot_kinds"] = dict(self.bot_kinds)
        return shown


class Walls:
    """The walls' state: open challenges, sessions and counts. `clock` gives unix seconds (injectable).
    The walled sites' shapes are the registry's when the walls are raised."""

    def __init__(self, config: WallConfig | None = None, clock=time.time):
        self.config = config or WallConfig()
        self.clock = clock
        self.shapes = wall_shapes()
        self.tally = WallTally(tuple(self.shapes))
        self._challenges: defaultdict[str, OrderedDict] = defaultdict(OrderedDict)
        self._sessions: defaultdict[str, OrderedDict] = defaultdict(OrderedDict)
        self._bots: defaultdict[str, OrderedDict] = defaultdict(OrderedDict)  # challenges BotD judged a bot's
        self._made: Counter[str] = Counter()  # challenges made per site: each gets a fresh seed
        self._draws: Counter[str] = Counter()  # slider draws per site

    def replace(self, config: WallConfig) -> None:
        """A new config; open challenges and sessions stay, judged by the new limits."""
        self.config = config

    def reset_counts(self) -> None:
        self.tally = WallTally(tuple(self.shapes))

    def judged(self, site: str, challenge: str, bot: bool, kind: str) -> None:
        """A wall page's BotD verdict on the client that opened it: a bot's challenge grants no session.
        ``challenge``: the name its page knows the challenge by (its shape's ``verdict_name``)."""
        if site not in self.shapes:
            return
        if bot:
            self._keep(self._bots[site], challenge, True)
            self.tally.bots[site] += 1
            self.tally.bot_kinds[kind or "unknown"] += 1
        else:
            self.tally.people[site] += 1

    def guard(self, site: str, request: web.Request, keyword: str) -> web.Response | None:
        """The wall's answer to a guarded request, or None to let it through."""
        if site not in self.config.sites or site not in self.shapes:
            return None
        if self.config.slider_keyword(site, keyword):
            why = "slider_keyword"
        else:
            why = self._check(site, request)
            if why is None:
                return None
        self.tally.walls_served[site][why] += 1
        return self.shapes[site].answer(self, request, keyword)

    # --- sessions ---

    def _check(self, site, request):
        """None when the request carries a live session of its User-Agent, else why not."""
        shape = self.shapes[site]
        agent = request.headers.get("User-Agent", "")
        value, key, token = shape.credentials(request.cookies)
        if not value or not key:
            return "no_cookie"
        session = self._sessions[site].get(token)
        if session is None:
            challenge = self._challenges[site].get(key)
            if challenge is None or shape.token(challenge, agent, key) != value:
                return "invalid"
            if shape.verdict_name(challenge, key) in self._bots[site]:
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
    def _keep(table, key, value):
        table[key] = value
        if len(table) > KEEP:
            table.popitem(last=False)
        return value

    # --- what a shape draws its challenges from ---

    def challenge(self, site: str) -> tuple[str, bytes, float]:
        """(key, seed bytes, now) for a fresh challenge: 8 hex digits, 32 bytes and the clock."""
        n = self._made[site]
        self._made[site] = n + 1
        raw = hashlib.blake2b(f"{self.config.seed}|{site}|{n}".encode(), digest_size=36).digest()
        return raw[:4].hex(), raw[4:], self.clock()

    def remember(self, site: str, key: str, text: str, issued: float) -> None:
        """A challenge served: its token is ``text`` hashed with the User-Agent (the shape's ``token``)."""
        self._keep(self._challenges[site], key, Challenge(text, issued))

    def slider_drawn(self, site: str) -> bool:
        c = self.config
        if c.slider_rate <= 0:
            return False
        n = self._draws[site]
        self._draws[site] = n + 1
        return fraction(stable_hash(c.seed, "slider", site, n)) < c.slider_rate

    def status(self) -> dict:
        return {**self.tally.to_json(), "config": self.config.to_json()}


def add_routes(app: web.Application, sandbox) -> None:
    """Each walled site's pages beside its search (its token and slider pages, its human search page); 404
    while the sandbox has no walls."""

    def walled(page):
        async def serve(request):
            if sandbox.walls is None:
                raise web.HTTPNotFound()
            return page(sandbox.walls, request)

        return serve

    for shape in wall_shapes().values():
        for path, page in shape.pages().items():
            app.router.add_get(path, walled(page))
    botcheck.add_routes(app, sandbox)
