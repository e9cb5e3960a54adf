"""Boss直聘's wall in the sandbox (`farm sandbox --walls`; docs/sites.md §4.6), a shape of farm.sandbox.walls.

The API answers code 37 with zpData {seed, ts, name}; /web/common/security-check.html loads
/web/common/security-js/<name>.js, which runs BotD (farm.sandbox.botcheck), sets
``__zp_stoken__ = boss_token(seed, ts, name, User-Agent)`` and goes back to callbackUrl (a callbackUrl that is not
a path on this host becomes the search page). The security page sends a slider keyword, or a slider draw (one
per visit), on to /web/passport/zp/verify-slider, whose script sets no cookie. /web/geek/job, the human search
page, is not itself guarded: its script meets the wall through the API, as on the site.
"""

import base64
import html
import json
import urllib.parse

from aiohttp import web

from farm.sandbox import botcheck
from farm.sandbox.walls import Walls
from farm.sandbox.wallshape import HANG_PAGE, JSON_TYPE, Page, WallShape, html_response, js_value
from farm.sandbox.walltoken import JS, mix

CODE37_MESSAGE = "您的访问行为异常."

SECURITY = """<!DOCTYPE html><html><head><meta charset="utf-8"><title>BOSS直聘</title>
<script src="/web/common/security-js/{name}.js"></script></head>
<body><div class="page-security"><p class="tip">正在加载中...</p></div></body></html>"""

# The security script: seed, ts and callbackUrl come from the page's own query, as on the site.
SECURITY_JS = (
    "(function(){"
    + JS
    + botcheck.JS
    + "var _0x2a=new URLSearchParams(window['\\x6c\\x6f\\x63\\x61\\x74\\x69\\x6f\\x6e']"
    "['\\x73\\x65\\x61\\x72\\x63\\x68']),"
    "_0x2b=_0x2a.get('seed')||'',_0x2c=_0x2a.get('ts')||'',_0x2d=_0x2a.get('name')||'',"
    "_0x2e=_0x2a.get('callbackUrl')||'';"
    "if(_0x2e.charAt(0)!=='/'||_0x2e.charAt(1)==='/'){_0x2e='/web/geek/job';}"
    "var _0x2f=_0x5c(_0x2b+'|'+_0x2c+'|'+navigator['\\x75\\x73\\x65\\x72\\x41\\x67\\x65\\x6e\\x74'],0x4)+'.'+_0x2d;"
    "_0xbd('boss',_0x2d,function(){"
    "document['\\x63\\x6f\\x6f\\x6b\\x69\\x65']='__zp_stoken__='+encodeURIComponent(_0x2f)+'; path=/';"
    "location.replace(_0x2e);});})();"
)

# The security page when a slider is due: it sends the browser on to the slider instead of loading the token.
SECURITY_TO_SLIDER = """<!DOCTYPE html><html><head><meta charset="utf-8"><title>BOSS直聘</title></head>
<body><div class="page-security"><p class="tip">正在加载中...</p></div>
<script>location.replace({url});</script></body></html>"""

SLIDER = """<!DOCTYPE html><html><head><meta charset="utf-8"><title>BOSS直聘 - 安全验证</title></head>
<body><div class="verify-slider" id="verify-slider"><h3 class="title">请完成安全验证</h3>
<p class="tip">拖动下方滑块完成拼图</p><div id="nc_1_wrapper" class="nc_wrapper">
<span id="nc_1_n1z" class="nc_iconfont btn_slide">&gt;</span><span class="nc-lang-cnt">向右拖动滑块</span></div></div>
<script>document.getElementById('nc_1_n1z').onmousedown=function(){{return false;}};</script></body></html>"""

# /web/geek/job: the client fetches the API; on code 37 it goes to the security page with the zpData, as the
# site's own client does; on code 0 it draws the cards.
JOB_SHELL = """<!DOCTYPE html><html><head><meta charset="utf-8"><title>BOSS直聘 - 找工作</title></head>
<body><div id="wrap"><div class="search-job-result"><ul class="job-list-box" id="job-list"></ul></div>
<p id="status">加载中</p></div><script>
(function(){
  var q = new URLSearchParams(location.search);
  var api = '/wapi/zpgeek/search/joblist.json?scene=1&query=' + encodeURIComponent(q.get('query') || '') +
    '&city=' + encodeURIComponent(q.get('city') || '') + '&page=' + encodeURIComponent(q.get('page') || '1') +
    '&pageSize=15';
  fetch(api, {credentials: 'same-origin', headers: {'X-Requested-With': 'XMLHttpRequest'}})
    .then(function (r) { return r.json(); })
    .then(function (d) {
      var status = document.getElementById('status');
      if (d.code === 37 && d.zpData) {
        var z = d.zpData;
        location.href = '/web/common/security-check.html?seed=' + encodeURIComponent(z.seed) +
          '&name=' + encodeURIComponent(z.name) + '&ts=' + encodeURIComponent(z.ts) +
          '&callbackUrl=' + encodeURIComponent(location.pathname + location.search) + '&srcReferer=';
        return;
      }
      if (d.code !== 0) { status.textContent = 'code ' + d.code + ' ' + d.message; return; }
      var list = document.getElementById('job-list');
      (d.zpData.jobList || []).forEach(function (job) {
        var li = document.createElement('li');
        li.className = 'job-card-wrapper';
        li.setAttribute('data-id', job.encryptJobId);
        li.textContent = job.jobName + ' ' + job.salaryDesc + ' ' + job.brandName;
        list.appendChild(li);
      });
      status.textContent = 'ok';
      document.body.setAttribute('data-loaded', String(d.zpData.jobList.length));
    });
})();
</script></body></html>"""


def boss_token(seed: str, ts: int, name: str, user_agent: str) -> str:
    """The ``__zp_stoken__`` value the security script sets for this challenge and User-Agent."""
    return f"{mix(f'{seed}|{ts}|{user_agent}', 4)}.{name}"


def code37(seed: str, ts: int, name: str) -> bytes:
    body = {"code": 37, "message": CODE37_MESSAGE, "zpData": {"seed": seed, "ts": ts, "name": name}}
    return json.dumps(body, ensure_ascii=False, separators=(",", ":")).encode()


class BossWall(WallShape):
    site = "boss"
    cookie = "__zp_stoken__"
    lanes = 4
    summary = "code 37 + /web/common/security-check.html, cookie __zp_stoken__"

    def answer(self, walls: Walls, request: web.Request, keyword: str) -> web.Response:
        """Code 37 with a fresh challenge's zpData."""
        name, raw, now = walls.challenge(self.site)
        seed, ts = base64.b64encode(raw).decode(), int(now * 1000)
        walls.remember(self.site, name, f"{seed}|{ts}", now)
        return web.Response(body=code37(seed, ts, name), headers={"Content-Type": JSON_TYPE})

    def pages(self) -> dict[str, Page]:
        return {
            "/web/geek/job": lambda walls, request: html_response(JOB_SHELL),
            "/web/common/security-check.html": self.security,
            "/web/common/security-js/{name}.js": lambda walls, request: web.Response(
                text=SECURITY_JS, content_type="application/javascript"
            ),
            "/web/passport/zp/verify-slider": self.slider,
        }

    def security(self, walls: Walls, request: web.Request) -> web.Response:
        """/web/common/security-check.html: the token page, or on to the slider when one is due."""
        walls.tally.security_pages[self.site] += 1
        q = request.query
        callback = q.get("callbackUrl", "")
        keyword = urllib.parse.parse_qs(urllib.parse.urlsplit(callback).query).get("query", [""])[0]
        if walls.config.slider_keyword(self.site, keyword) or walls.slider_drawn(self.site):
            target = "/web/passport/zp/verify-slider?" + urllib.parse.urlencode(
                {"callbackUrl": callback, "srcReferer": ""}
            )
            return html_response(SECURITY_TO_SLIDER.format(url=js_value(target)))
        if walls.config.hang:
            return html_response(HANG_PAGE)
        return html_response(SECURITY.format(name=html.escape(q.get("name", ""))))

    def slider(self, walls: Walls, request: web.Request) -> web.Response:
        walls.tally.sliders[self.site] += 1
        return html_response(SLIDER.format())


WALL = BossWall()
