"""HireHub's wall in the sandbox, a shape of farm.sandbox.walls: /hh/search without a session answers 302 to
/hh/check?back=…, whose script sets ``hh_pass = hirehub_token(seed, key, User-Agent)`` and goes back.

Its record (SITE) raises no wall, so its crawls meet none; tests/integration/test_fourth_site.py registers a
record naming this module (``sandbox_wall``) to show that a site package's wall is served from the package.
"""

import urllib.parse

from aiohttp import web

from farm.sandbox.walls import Walls
from farm.sandbox.wallshape import Page, WallShape, html_response, js_value
from farm.sandbox.walltoken import JS, mix


def hirehub_token(seed: str, key: str, user_agent: str) -> str:
    """The ``hh_pass`` value the check page sets for its seed, its key and this User-Agent."""
    return f"{mix(f'{seed}|{user_agent}', 2)}.{key}"


class HireHubWall(WallShape):
    site = "hirehub"
    cookie = "hh_pass"
    lanes = 2
    summary = "302 to /hh/check, cookie hh_pass"

    def answer(self, walls: Walls, request: web.Request, keyword: str) -> web.Response:
        back = urllib.parse.quote(request.raw_path, safe="")
        return web.Response(status=302, headers={"Location": f"/hh/check?back={back}"})

    def pages(self) -> dict[str, Page]:
        return {"/hh/check": self.check}

    def check(self, walls: Walls, request: web.Request) -> web.Response:
        walls.tally.security_pages[self.site] += 1
        key, raw, now = walls.challenge(self.site)
        seed = raw[:8].hex()
        walls.remember(self.site, key, seed, now)
        script = (
            f"{JS}var s={js_value(seed)},k={js_value(key)},b={js_value(request.query.get('back', '/'))};"
            "document.cookie='hh_pass='+_0x5c(s+'|'+navigator.userAgent,2)+'.'+k+'; path=/';location.replace(b);"
        )
        return html_response(
            f"<!DOCTYPE html><html><head><title>HireHub check</title></head><script>{script}</script></html>"
        )


WALL = HireHubWall()
