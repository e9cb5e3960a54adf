"""智联招聘's wall in the sandbox (`farm sandbox --walls`; docs/sites.md §4.6), a shape of farm.sandbox.walls.

/sou/… answers 302 to /verify/security?return=…, the 安全验证 page, whose script runs BotD
(farm.sandbox.botcheck), sets ``zp_verify = zhilian_token(seed, key, User-Agent)`` and goes back to return (a
return that is not a path on this host becomes ``/``). A slider keyword, or a slider draw (one per visit),
gets the geetest slider instead, whose script sets no cookie.
"""

import html
import urllib.parse

from aiohttp import web

from farm.sandbox import botcheck
from farm.sandbox.walls import Walls
from farm.sandbox.wallshape import HANG_PAGE, Page, WallShape, html_response, js_value
from farm.sandbox.walltoken import JS, mix

# The 安全验证 page's script; the page puts `var _zs=…,_zk=…,_zr=…;` (seed, key, return) before it.
VERIFY_JS = (
    "(function(){" + JS + botcheck.JS + "var r=_zr;if(r.charAt(0)!=='/'||r.charAt(1)==='/'){r='/';}"
    "var z=_0x5c(_zs+'|'+navigator['\\x75\\x73\\x65\\x72\\x41\\x67\\x65\\x6e\\x74'],0x4)+'.'+_zk;"
    "_0xbd('zhilian',_zk,function(){document.cookie='zp_verify='+z+'; path=/';location.replace(r);});})();"
)

SLIDER = """<!DOCTYPE html><html><head><meta charset="utf-8"><title>安全验证</title></head>
<body><div class="verify-wrap"><h1>安全验证</h1><p>请拖动下方滑块完成验证</p>
<div class="geetest_box"><div class="geetest_slider"><div class="geetest_track">
<div class="geetest_btn" id="geetest_btn"></div></div><span class="geetest_tip">拖动滑块完成拼图</span></div></div>
<p class="trace">{trace}</p></div>
<script>document.getElementById('geetest_btn').onmousedown=function(){{return false;}};</script></body></html>"""


def zhilian_token(seed: str, key: str, user_agent: str) -> str:
    """The ``zp_verify`` value the 安全验证 page sets for its seed, its key and this User-Agent."""
    return f"{mix(f'{seed}|{user_agent}', 4)}.{key}"


def verify_page(seed: str, key: str, back: str) -> str:
    return (
        '<!DOCTYPE html><html><head><meta charset="utf-8"><title>安全验证</title></head>'
        '<body><div class="verify-wrap"><h1>安全验证</h1><p>正在验证您的访问环境，请稍候…</p></div>'
        f"<script>var _zs={js_value(seed)},_zk={js_value(key)},_zr={js_value(back)};{VERIFY_JS}</script></body></html>"
    )


class ZhilianWall(WallShape):
    site = "zhilian"
    cookie = "zp_verify"
    lanes = 4
    summary = "302 to /verify/security (安全验证), cookie zp_verify"

    def answer(self, walls: Walls, request: web.Request, keyword: str) -> web.Response:
        """302 to the 安全验证 page, which sends the visitor back where it was."""
        back = urllib.parse.quote(request.raw_path, safe="")
        return web.Response(status=302, headers={"Location": f"/verify/security?return={back}"})

    def pages(self) -> dict[str, Page]:
        return {"/verify/security": self.verify}

    def verify(self, walls: Walls, request: web.Request) -> web.Response:
        """/verify/security: the token page, or the slider for slider keywords and draws."""
        walls.tally.security_pages[self.site] += 1
        back = request.query.get("return", "")
        keyword = urllib.parse.parse_qs(urllib.parse.urlsplit(back).query).get("kw", [""])[0]
        key, raw, now = walls.challenge(self.site)
        if walls.config.slider_keyword(self.site, keyword) or walls.slider_drawn(self.site):
            walls.tally.sliders[self.site] += 1
            return html_response(SLIDER.format(trace=html.escape(raw[:8].hex())))
        seed = raw[:16].hex()
        walls.remember(self.site, key, seed, now)
        return html_response(HANG_PAGE if walls.config.hang else verify_page(seed, key, back))


WALL = ZhilianWall()
