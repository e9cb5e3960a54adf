"""WallShape: one site's wall in the sandbox (`farm sandbox --walls`), as its package's wall.py draws it.

walls.py keeps what every wall shares (challenges, sessions, the tally, the config, BotD's verdicts); a shape
says what is the site's own: the cookie its token page sets, how a request's cookies name a session, the
token a challenge grants a User-Agent, the answer that replaces the data, and the pages it serves beside the
search (its token page, its slider, the site's human search page). A site's record names the module of its
shape (``Site.sandbox_wall``, the module's ``WALL``); a site without one stands behind no wall.

A token is ``mix(challenge|User-Agent, lanes)`` (walltoken.py), with ``.key`` after it unless the shape keeps
its key in a cookie of its own (``credentials``).
"""

import json
import urllib.parse
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

from aiohttp import web

from .walltoken import mix

if TYPE_CHECKING:
    from .walls import Challenge, Walls

JSON_TYPE = "application/json;charset=UTF-8"
HTML_TYPE = "text/html; charset=utf-8"
# a wall page whose script never yields: the page's renderer answers nothing more (a browser's wait must be bounded)
HANG_PAGE = (
    "<!doctype html><html><head><title>安全验证</title></head><body><script>while(true){}</script></body></html>"
)

# a page the wall serves beside the search: (the walls, the request) -> the answer
Page = Callable[["Walls", web.Request], web.Response]


class WallShape:
    """A site's wall. A subclass sets ``site``, ``cookie``, ``lanes`` and ``summary`` and writes ``answer``;
    ``credentials``, ``token`` and ``verdict_name`` are the ``value.key`` form (the key after the token)."""

    site: str = ""  # its site's name
    cookie: str = ""  # the cookie its token page sets
    lanes: int = 4  # the token's lanes of mix(): 8 hex digits each
    summary: str = ""  # its line in `farm sandbox --help`

    def credentials(self, cookies: Mapping[str, str]) -> tuple[str, str, Any]:
        """(the token's value, the challenge's key, the session's key) a request's cookies carry."""
        value = urllib.parse.unquote(cookies.get(self.cookie, ""))
        return value, value.rpartition(".")[2], value

    def token(self, challenge: "Challenge", agent: str, key: str) -> str:
        """The value the challenge's page sets for this User-Agent."""
        return f"{mix(f'{challenge.text}|{agent}', self.lanes)}.{key}"

    def verdict_name(self, challenge: "Challenge", key: str) -> str:
        """The name the challenge's page posts BotD's verdict under (botcheck.py)."""
        return key

    def answer(self, walls: "Walls", request: web.Request, keyword: str) -> web.Response:
        """The wall's answer in place of the data (a request without a live session, or a slider keyword)."""
        raise NotImplementedError

    def pages(self) -> dict[str, Page]:
        """The paths it serves beside the search, each with its page."""
        return {}


def html_response(text: str) -> web.Response:
    return web.Response(text=text, headers={"Content-Type": HTML_TYPE})


def js_value(value: object) -> str:
    """``value`` as JSON inside a script, ``<`` escaped so that no value ends the script."""
    return json.dumps(value, ensure_ascii=False).replace("<", "\\u003c")
