"""The walls' bot detector: BotD (FingerprintJS's open-source detector, vendored under vendor/botd with its MIT
licence) runs in each wall page before its token script, and the page posts its verdict before it sets its
cookie. A challenge whose page BotD judged a bot grants no session (walls.py: the token is refused as
``bot``), as a WAF refuses the session of a client its script flagged; the verdicts are counted in
GET /_sandbox/walls (``bots``, ``people``, ``bot_kinds``).

    GET  /_sandbox/botd.esm.js      the detector's browser bundle, as published
    POST /_sandbox/botd             {"site", "challenge", "bot", "botKind"}: a wall page's verdict

A client that computes the token without running the page (walltoken.py) posts no verdict and is judged by
the token alone.
"""

from pathlib import Path

from aiohttp import web

BUNDLE = Path(__file__).parent / "vendor" / "botd" / "botd.esm.js"
BUNDLE_PATH = "/_sandbox/botd.esm.js"
VERDICT_PATH = "/_sandbox/botd"

# _0xbd(site, challenge, then): BotD's verdict posted, then `then` (also when the detector cannot run)
JS = (
    "function _0xbd(s,c,t){var p=function(v){return fetch('" + VERDICT_PATH + "',{method:'POST',"
    "headers:{'Content-Type':'application/json'},body:JSON.stringify({site:s,challenge:c,bot:!!v.bot,"
    "botKind:v.botKind||''})});};import('" + BUNDLE_PATH + "').then(function(m){return m.load();})"
    ".then(function(b){return b.detect();}).then(p).catch(function(){}).then(t);}"
)


def add_routes(app: web.Application, sandbox) -> None:
    bundle = BUNDLE.read_bytes()

    async def script(request: web.Request) -> web.Response:
        return web.Response(body=bundle, headers={"Content-Type": "text/javascript; charset=utf-8"})

    async def verdict(request: web.Request) -> web.Response:
        if sandbox.walls is None:
            raise web.HTTPNotFound()
        try:
            body = await request.json()
            site, challenge, bot = str(body["site"]), str(body["challenge"]), bool(body["bot"])
        except (ValueError, KeyError, TypeError):
            return web.json_response({"error": "a verdict is {site, challenge, bot, botKind}"}, status=400)
        sandbox.walls.judged(site, challenge, bot, str(body.get("botKind") or ""))
        return web.json_response({"status": "ok"})

    app.router.add_get(BUNDLE_PATH, script)
    app.router.add_post(VERDICT_PATH, verdict)
