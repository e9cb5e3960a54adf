"""The sandbox HTTP server: each imitated site's search endpoints on one aiohttp app, plus /_sandbox/ control.

aiohttp (its C HTTP parser, keep-alive, no access log) serves cached pages several times faster than one Scrapy
process can fetch them, so the sandbox is never a crawl's bottleneck. Rendered pages are cached by
(site, city, keyword, page, page size); a page is the same bytes every time, except what a site's `finish`
fills in per request (a per-search hash). A page's bytes also depend on the fault config (stale totals,
hostile postings), so a new config empties the cache.

A request goes: outage (outage.py: the connection closed) → parse → the client's pace, once set
(clientpace.py: too fast, or banned) → the site's wall, with --walls (walls.py: no live session, no page) →
the strange walls, with --strange-walls (strangewalls.py) → the site's own rejection (its `reject`: a bad
signature, a forged token) → fault draw (a site's own kinds: its imitation's) → page. Only a normal page (or
a slow one) counts in /_sandbox/counts. The last search requests are kept as they came, with their headers
in order, for /_sandbox/requests; each is judged as the Chrome it claims, and counted by the connection it
came on (coherence.py, /_sandbox/identity).
"""

import asyncio
import time
from collections import Counter, OrderedDict, deque

from aiohttp import web

from . import control
from .clientpace import ClientPace
from .coherence import Coherence
from .data import World
from .faults import Faults, drop, generic
from .outage import Outage
from .sites import imitation_of, site_modules
from .strangewalls import StrangeConfig, StrangeWalls
from .strangewalls import add_routes as add_strange_routes
from .walls import WallConfig, Walls
from .walls import add_routes as add_wall_routes

CACHE_PAGES = 4096
REQUESTS_KEPT = 1000  # search requests /_sandbox/requests can show
JSON_TYPE = "application/json;charset=UTF-8"


class Sandbox:
    """One seed's world, its fault config, its walls (None: no walls) and its counts. `app()` gives the aiohttp
    application. `clock` (unix seconds) is what the walls time sessions by."""

    def __init__(
        self, seed=0, postings=None, fault_config=None, outage=None, walls=None, clock=time.time, strange=None
    ):
        self.world = World(seed, postings)
        self.faults = Faults(fault_config)
        self.outage = outage or Outage()
        self.clock = clock
        self.walls = None if walls is None else Walls(walls, clock)
        self.strange = None if strange is None else StrangeWalls(strange, clock)  # strangewalls.py
        self.pace = ClientPace()  # off until set (POST /_sandbox/pace)
        self.counts = Counter()
        self.rendered = 0  # pages generated on request (not served from the page cache)
        self.arrivals = Counter()  # search requests by the second they arrived (time.time())
        self.requests = deque(maxlen=REQUESTS_KEPT)  # (site, method, raw path, raw headers) as they came
        self.coherence = Coherence()  # each search request judged as the Chrome it claims; per connection
        self._cache = OrderedDict()

    def set_faults(self, config):
        self.faults.replace(config)
        self._cache.clear()  # cached pages were rendered under the old config

    def set_walls(self, config: WallConfig) -> None:
        """Raise the walls with this config, or replace the config of the raised ones."""
        if self.walls is None:
            self.walls = Walls(config, self.clock)
        else:
            self.walls.replace(config)

    def set_strange_walls(self, config: StrangeConfig) -> None:
        """Raise the strange walls with this config, or replace the config of the raised ones."""
        if self.strange is None:
            self.strange = StrangeWalls(config, self.clock)
        else:
            self.strange.replace(config)

    def app(self):
        app = web.Application()
        for mod in site_modules().values():
            handler = self._handler(mod)
            for path in mod.PATHS:
                app.router.add_get(path, handler)
        add_wall_routes(app, self)
        add_strange_routes(app, self)
        control.add_routes(app, self)
        return app

    def _handler(self, mod):
        content_type = JSON_TYPE if mod.CONTENT_TYPE == "application/json" else mod.CONTENT_TYPE
        reject = getattr(mod, "reject", None)
        finish = getattr(mod, "finish", None)
        own = {kind.name: kind.answer for kind in imitation_of(mod).faults}  # its own fault kinds' answers

        async def search(request):
            self.arrivals[int(time.time())] += 1
            self.requests.append((mod.SITE, request.method, request.raw_path, request.raw_headers))
            self.coherence.seen(mod.SITE, request)
            if self.outage.drops():
                return drop(request)
            query = mod.parse(request)
            refused = self.pace.judge(request)
            if refused is not None:
                return refused
            if self.walls is not None:
                wall = self.walls.guard(mod.SITE, request, query.keyword)
                if wall is not None:
                    return wall
            if self.strange is not None:
                wall = self.strange.guard(mod.SITE, request, query.keyword)
                if wall is not None:
                    return wall
            refused = reject(request, query) if reject else None
            if refused:
                return _raw(*refused)
            kind, h = self.faults.choose(query)
            if kind == "slow":
                await asyncio.sleep(self.faults.config.slow_ms / 1000)
                kind = None
            if kind in own:
                return _raw(*own[kind](query, h, self.world, self.faults.config))
            body = self.page(mod, query)
            if finish:
                body = finish(request, body)
            if kind:
                return await generic(kind, request, body, content_type, self.faults.config)
            self.counts[query.key] += 1
            self.outage.page_served()
            return web.Response(body=body, headers={"Content-Type": content_type})

        return search

    def page(self, mod, query):
        key = (query.site, query.city, query.keyword, query.page, query.page_size)
        body = self._cache.get(key)
        if body is None:
            body = self._cache[key] = mod.render(self.world, query, self.faults.config)
            self.rendered += 1
            if len(self._cache) > CACHE_PAGES:
                self._cache.popitem(last=False)
        return body


def _raw(status, content_type, body):
    if content_type == "application/json":
        content_type = JSON_TYPE
    return web.Response(status=status, body=body, headers={"Content-Type": content_type})


async def start(sandbox, host="127.0.0.1", port=0):
    """Start serving; returns (runner, port). `await runner.cleanup()` stops it."""
    runner = web.AppRunner(sandbox.app(), access_log=None, handle_signals=False)
    await runner.setup()
    site = web.TCPSite(runner, host, port, backlog=1024)
    await site.start()
    return runner, runner.addresses[0][1]
