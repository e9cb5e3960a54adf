"""The /_sandbox/ control endpoints (JSON) that tests and benchmarks drive the sandbox with.

GET  /_sandbox/health                        → {"status": "ok", "seed", "postings", "sites", "pages_rendered"}
GET  /_sandbox/counts                        → {"counts": [{"site","city","keyword","page","count"}, …]}
POST /_sandbox/reset                         → counts, the timeline, the wall counts, the request log and the
                                               identity counts cleared
GET  /_sandbox/timeline                      → {"arrivals": [[unix second, search requests that arrived in it], …]}
GET  /_sandbox/truth?site=&city=&keyword=[&page_size=] → what the keyword holds (see `truth`)
GET  /_sandbox/faults, POST /_sandbox/faults → show / replace the fault config (faults.FaultConfig: rate, seed,
                                               kinds, keywords, slow_ms, retry_after, stale_totals, hostile_rate)
GET  /_sandbox/outage                        → {"active", "until" (unix time), "remaining", "seconds", "dropped",
                                                "after_pages", "pages_served"} (outage.py)
POST /_sandbox/outage {"seconds": S}         → an outage from now for S seconds (0 ends one); with
                     {"seconds": S, "after_pages": N} one that starts once N more pages are served
GET  /_sandbox/walls                         → {"sessions_issued": {site: n}, "walls_served": {site: {why: n}},
                                                "expired", "with_session", "sliders", "security_pages", "bots",
                                                "people": {site: n}, "bot_kinds", "config"} (walls.py; config
                                                null and counts 0 without walls)
POST /_sandbox/walls                         → raise the walls / replace their config (walls.WallConfig: sites,
                                               session_seconds, session_requests, slider_rate, slider_keywords,
                                               seed, refuse_sessions, hang); DELETE /_sandbox/walls clears
                                               their counts
GET  /_sandbox/identity                      → {"requests", "incoherent", "reasons": {why: n}, "examples",
                                                "connections", "requests_per_connection",
                                                "most_on_a_connection"}: each search request judged as the
                                                Chrome it claims and as a request of its kind (coherence.py)
POST /_sandbox/botd, GET /_sandbox/botd.esm.js → the wall pages' bot detector (botcheck.py)
GET  /_sandbox/strangewalls                  → {"counts": {"<site>/<form>|sessions|let_through|answers|slider": n},
                                                "config"} (strangewalls.py; config null without them)
POST /_sandbox/strangewalls                  → raise the strange walls / replace their config (sites, forms,
                                               session_seconds, session_requests, slider_keywords, seed)
GET  /_sandbox/pace                          → {"config", "clients": {address: {"served", "too_fast", "banned", "bans",
                                                "fastest", "first", "last"}}} (clientpace.py); POST {"rate",
                                               "burst", "strikes", "ban_seconds", "rates"} holds each client to
                                               a pace (counts cleared; rate 0: off); DELETE clears the counts
GET  /_sandbox/requests?last=N               → {"requests": [{"site", "method", "path", "headers": [[name,
                                                value], …]}, …]}: the last N search requests (default 20), oldest
                                                first, header names as sent and in order, a Cookie's value
                                                reduced to its cookie names ("a; b")
"""

import json

from aiohttp import web

from . import hostile
from .cities import city_for, city_named
from .clientpace import PaceConfig
from .faults import FaultConfig
from .outage import Outage
from .results import Query, int_param, page_of
from .sites import site_module, site_modules, walled_sites
from .strangewalls import StrangeConfig
from .walls import WallConfig, WallTally


def add_routes(app, sandbox):
    async def health(request):
        postings = list(sandbox.world.postings) if sandbox.world.postings else None
        return web.json_response(
            {
                "status": "ok",
                "seed": sandbox.world.seed,
                "postings": postings,
                "sites": list(site_modules()),
                "pages_rendered": sandbox.rendered,
            }
        )

    async def counts(request):
        rows = [
            {"site": s, "city": c, "keyword": k, "page": p, "count": n}
            for (s, c, k, p), n in sorted(sandbox.counts.items())
        ]
        return web.json_response({"counts": rows}, dumps=_dumps)

    async def reset(request):
        sandbox.counts.clear()
        sandbox.arrivals.clear()
        sandbox.requests.clear()
        sandbox.coherence.reset()
        if sandbox.walls is not None:
            sandbox.walls.reset_counts()
        return web.json_response({"status": "ok"})

    async def walls_view(request):
        if request.method == "POST":
            try:
                sandbox.set_walls(WallConfig.from_json(await request.json()))
            except (ValueError, TypeError) as exc:  # JSONDecodeError is a ValueError
                return _error(str(exc))
        elif request.method == "DELETE" and sandbox.walls is not None:
            sandbox.walls.reset_counts()
        if sandbox.walls is None:
            return web.json_response({**WallTally(walled_sites()).to_json(), "config": None})
        return web.json_response(sandbox.walls.status(), dumps=_dumps)

    async def strange_view(request):
        if request.method == "POST":
            try:
                sandbox.set_strange_walls(StrangeConfig.from_json(await request.json()))
            except (ValueError, TypeError) as exc:
                return _error(str(exc))
        if sandbox.strange is None:
            return web.json_response({"counts": {}, "config": None})
        return web.json_response(sandbox.strange.status(), dumps=_dumps)

    async def pace_view(request):
        if request.method == "POST":
            try:
                sandbox.pace.replace(PaceConfig.from_json(await request.json()))
            except (ValueError, TypeError) as exc:  # JSONDecodeError is a ValueError
                return _error(str(exc))
        elif request.method == "DELETE":
            sandbox.pace.reset_counts()
        return web.json_response(sandbox.pace.status(), dumps=_dumps)

    async def requests_view(request):
        last = int_param(request.query.get("last"), 20, high=len(sandbox.requests) or 1)
        rows = list(sandbox.requests)[-last:]
        return web.json_response({"requests": [_request_row(*row) for row in rows]}, dumps=_dumps)

    async def identity(request):
        return web.json_response(sandbox.coherence.status(), dumps=_dumps)

    async def timeline(request):
        return web.json_response({"arrivals": [[second, n] for second, n in sorted(sandbox.arrivals.items())]})

    async def truth_view(request):
        q = request.query
        served = site_modules()
        if q.get("site") not in served or "city" not in q or "keyword" not in q:
            return _error(f"truth needs site (one of {', '.join(served)}), city and keyword")
        return web.json_response(truth(sandbox, q["site"], q["city"], q["keyword"], q.get("page_size")), dumps=_dumps)

    async def faults_view(request):
        if request.method == "POST":
            try:
                sandbox.set_faults(FaultConfig.from_json(await request.json()))
            except (ValueError, TypeError) as exc:  # JSONDecodeError is a ValueError
                return _error(str(exc))
        return web.json_response(sandbox.faults.config.to_json(), dumps=_dumps)

    async def outage_view(request):
        if request.method == "POST":
            try:
                seconds, after_pages = Outage.parse(await request.json())
            except (ValueError, TypeError) as exc:
                return _error(str(exc))
            if after_pages is None:
                sandbox.outage.start(seconds)
            else:
                sandbox.outage.arm(after_pages, seconds)
        return web.json_response(sandbox.outage.status())

    app.router.add_get("/_sandbox/health", health)
    app.router.add_get("/_sandbox/counts", counts)
    app.router.add_post("/_sandbox/reset", reset)
    app.router.add_get("/_sandbox/timeline", timeline)
    app.router.add_get("/_sandbox/truth", truth_view)
    app.router.add_route("*", "/_sandbox/faults", faults_view)
    app.router.add_route("*", "/_sandbox/outage", outage_view)
    app.router.add_route("*", "/_sandbox/walls", walls_view)
    app.router.add_get("/_sandbox/requests", requests_view)
    app.router.add_get("/_sandbox/identity", identity)
    app.router.add_route("*", "/_sandbox/strangewalls", strange_view)
    app.router.add_route("*", "/_sandbox/pace", pace_view)


def _request_row(site, method, path, raw_headers):
    headers = []
    for name, value in raw_headers:
        name, value = name.decode("latin-1"), value.decode("utf-8", "replace")
        if name.lower() == "cookie":
            value = "; ".join(part.split("=", 1)[0].strip() for part in value.split(";") if part.strip())
        headers.append([name, value])
    return {"site": site, "method": method, "path": path, "headers": headers}


def truth(sandbox, site, city, keyword, page_size=None):
    """total: postings the keyword has; pages: pages that hold postings (what the site lets a crawler reach);
    ids: the postings on those pages, in page order; stale: the keyword's stale-totals variant ('under',
    'over', 'zero') or None, its page 1 lying about the totals given here; hostile: the ids among `ids` whose
    other fields are hostile. `city` may be the site code or a city name; the answer names the site code."""
    mod = site_module(site)
    named = city_for(site, city) or city_named(city)
    code = named.code(site) if named else city
    size = int_param(page_size, mod.PAGE_SIZE, high=mod.MAX_PAGE_SIZE)
    faults = sandbox.faults.config
    page, found = page_of(sandbox.world, Query(site, code, keyword, 1, size), mod.MAX_PAGES, faults)
    ids = [slot[0] for slot in sandbox.world.slots(site, found, keyword, page.reachable)] if found else []
    return {
        "site": site,
        "city": code,
        "keyword": keyword,
        "total": page.total,
        "reachable": page.reachable,
        "page_size": size,
        "pages": page.pages,
        "ids": ids,
        "stale": page.stale,
        "hostile": [i for i in ids if hostile.picked(faults, site, i) is not None],
    }


def _dumps(value):
    return json.dumps(value, ensure_ascii=False)


def _error(message):
    return web.json_response({"error": message}, status=400, dumps=_dumps)
