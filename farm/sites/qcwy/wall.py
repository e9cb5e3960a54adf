"""51job's wall in the sandbox (`farm sandbox --walls`; docs/sites.md §4.6), a shape of farm.sandbox.walls.

Aliyun's WAF answers the API and /pc/search, the human search page, with a page of ``var arg1=`` and a fresh
``acw_tc`` cookie; its script runs BotD (farm.sandbox.botcheck), sets ``acw_sc__v2 = qcwy_token(arg1,
User-Agent)`` and reloads. A valid pair is an ``acw_sc__v2`` computed from the arg1 issued with that
``acw_tc``. A slider keyword, or a slider draw (one per challenge), gets the WAF's slider page instead, whose
script sets no cookie.
"""

import urllib.parse
from collections.abc import Mapping

from aiohttp import web

from farm.sandbox import botcheck
from farm.sandbox.walls import Challenge, Walls
from farm.sandbox.wallshape import Page, WallShape, html_response
from farm.sandbox.walltoken import JS, mix
from farm.sites.qcwy.sandbox import WAF_SLIDER

# The challenge's script; the page puts `var arg1='…';` before it.
CHALLENGE_JS = (
    "(function(){"
    + JS
    + botcheck.JS
    + "var x=_0x5c(arg1+'|'+navigator['\\x75\\x73\\x65\\x72\\x41\\x67\\x65\\x6e\\x74'],0x5);"
    "_0xbd('qcwy',arg1,function(){document.cookie='acw_sc__v2='+x+'; path=/; max-age=3600';"
    "document.location.reload();});})();"
)

# /pc/search: the human search page behind the WAF; its script asks the API and draws the cards. Should the
# API answer with a WAF page instead (the session ran out), the page reloads and meets the WAF itself.
SEARCH_SHELL = """<!DOCTYPE html><html><head><meta charset="utf-8"><title>前程无忧 - 职位搜索</title></head>
<body><div id="app"><div class="j_joblist" id="job-list"></div><p id="status">加载中</p></div><script>
(function(){
  var q = new URLSearchParams(location.search);
  var api = '/api/job/search-pc?api_key=51job&searchType=2&keyword=' + encodeURIComponent(q.get('keyword') || '') +
    '&jobArea=' + encodeURIComponent(q.get('jobArea') || '') +
    '&pageNum=' + encodeURIComponent(q.get('pageNum') || '1') + '&pageSize=20&source=1';
  fetch(api, {credentials: 'same-origin'})
    .then(function (r) { return r.text(); })
    .then(function (text) {
      var status = document.getElementById('status');
      var d;
      try { d = JSON.parse(text); } catch (e) { location.reload(); return; }
      if (d.status !== '1') { status.textContent = 'status ' + d.status + ' ' + d.message; return; }
      var list = document.getElementById('job-list');
      d.resultbody.job.items.forEach(function (job) {
        var div = document.createElement('div');
        div.className = 'joblist-item';
        div.setAttribute('data-id', job.jobId);
        div.textContent = job.jobName + ' ' + job.provideSalaryString + ' ' + job.companyName;
        list.appendChild(div);
      });
      status.textContent = 'ok';
      document.body.setAttribute('data-loaded', String(d.resultbody.job.items.length));
    });
})();
</script></body></html>"""


def qcwy_token(arg1: str, user_agent: str) -> str:
    """The ``acw_sc__v2`` value the WAF page sets for this ``arg1`` and User-Agent (40 hex digits)."""
    return mix(f"{arg1}|{user_agent}", 5)


def challenge_page(arg1: str) -> str:
    return f"<html><script>\nvar arg1='{arg1}';\n{CHALLENGE_JS}\n</script></html>"


class QcwyWall(WallShape):
    site = "qcwy"
    cookie = "acw_sc__v2"
    lanes = 5
    summary = "Aliyun WAF page (var arg1=, acw_tc), cookie acw_sc__v2; also guards /pc/search"

    def credentials(self, cookies: Mapping[str, str]) -> tuple[str, str, tuple[str, str]]:
        """The token, and its challenge's key in ``acw_tc``: a session is the pair."""
        value = urllib.parse.unquote(cookies.get(self.cookie, ""))
        key = cookies.get("acw_tc", "")
        return value, key, (key, value)

    def token(self, challenge: Challenge, agent: str, key: str) -> str:
        return mix(f"{challenge.text}|{agent}", self.lanes)

    def verdict_name(self, challenge: Challenge, key: str) -> str:
        return challenge.text  # its page knows arg1, not acw_tc

    def answer(self, walls: Walls, request: web.Request, keyword: str) -> web.Response:
        """The WAF's answer: the slider page for slider keywords and draws, else a fresh challenge."""
        if walls.config.slider_keyword(self.site, keyword) or walls.slider_drawn(self.site):
            walls.tally.sliders[self.site] += 1
            tag, trace, _ = walls.challenge(self.site)
            return web.Response(text=WAF_SLIDER.format(tag=tag[:6], trace=trace[:8].hex()), content_type="text/html")
        key, raw, now = walls.challenge(self.site)
        tc, arg1 = key + raw[:12].hex(), raw[12:].hex().upper()
        walls.remember(self.site, tc, arg1, now)
        walls.tally.security_pages[self.site] += 1
        page = challenge_page(arg1)
        if walls.config.hang:  # the WAF's page as farm knows it, whose script never gets past its first line
            page = page.replace("<script>", "<script>while(true){}", 1)
        response = web.Response(text=page, content_type="text/html")
        response.set_cookie("acw_tc", tc, path="/", httponly=True, max_age=1800)
        return response

    def pages(self) -> dict[str, Page]:
        return {"/pc/search": self.search}

    def search(self, walls: Walls, request: web.Request) -> web.Response:
        """/pc/search: behind the WAF, like the API."""
        refused = walls.guard(self.site, request, request.query.get("keyword", ""))
        return refused or html_response(SEARCH_SHELL)


WALL = QcwyWall()
