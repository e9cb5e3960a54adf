"""The pages of the sandbox's walls (walls.py) and the sites' human search pages, with their scripts.

Each token script runs walltoken.JS and the bot detector (botcheck.py: its verdict posted first), sets its
cookie and goes back where the visitor came from; a slider page's script never sets a cookie. Values put into a
script are JSON with `<` escaped, so no value ends the script.
"""

import html
import json

from . import botcheck
from .qcwy import WAF_SLIDER
from .walltoken import JS


def _js(value) -> str:
    return json.dumps(value, ensure_ascii=False).replace("<", "\\u003c")


# --- Boss直聘 ---------------------------------------------------------------------------------------------

BOSS_CODE37_MESSAGE = "您的访问行为异常."

BOSS_SECURITY = """<!DOCTYPE html><html><head><meta charset="utf-8"><title>BOSS直聘</title>
<script src="/web/common/security-js/{name}.js"></script></head>
<body><div class="page-security"><p class="tip">正在加载中...</p></div></body></html>"""

# The security script: seed, ts and callbackUrl come from the page's own query, as on the site.
BOSS_SECURITY_JS = (
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
BOSS_SECURITY_TO_SLIDER = """<!DOCTYPE html><html><head><meta charset="utf-8"><title>BOSS直聘</title></head>
<body><div class="page-security"><p class="tip">正在加载中...</p></div>
<script>location.replace({url});</script></body></html>"""

BOSS_SLIDER = """<!DOCTYPE html><html><head><meta charset="utf-8"><title>BOSS直聘 - 安全验证</title></head>
<body><div class="verify-slider" id="verify-slider"><h3 class="title">请完成安全验证</h3>
<p class="tip">拖动下方滑块完成拼图</p><div id="nc_1_wrapper" class="nc_wrapper">
<span id="nc_1_n1z" class="nc_iconfont btn_slide">&gt;</span><span class="nc-lang-cnt">向右拖动滑块</span></div></div>
<script>document.getElementById('nc_1_n1z').onmousedown=function(){{return false;}};</script></body></html>"""

# /web/geek/job: the client fetches the API; on code 37 it goes to the security page with the zpData, as the
# site's own client does; on code 0 it draws the cards.
BOSS_JOB_SHELL = """<!DOCTYPE html><html><head><meta charset="utf-8"><title>BOSS直聘 - 找工作</title></head>
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


def boss_code37(seed: str, ts: int, name: str) -> bytes:
    body = {"code": 37, "message": BOSS_CODE37_MESSAGE, "zpData": {"seed": seed, "ts": ts, "name": name}}
    return json.dumps(body, ensure_ascii=False, separators=(",", ":")).encode()


def boss_security(name: str) -> str:
    return BOSS_SECURITY.format(name=html.escape(name))


def boss_security_to_slider(slider_url: str) -> str:
    return BOSS_SECURITY_TO_SLIDER.format(url=_js(slider_url))


def boss_slider() -> str:
    return BOSS_SLIDER.format()


# --- 51job ------------------------------------------------------------------------------------------------

# The challenge's script; the page puts `var arg1='…';` before it.
QCWY_CHALLENGE_JS = (
    "(function(){"
    + JS
    + botcheck.JS
    + "var x=_0x5c(arg1+'|'+navigator['\\x75\\x73\\x65\\x72\\x41\\x67\\x65\\x6e\\x74'],0x5);"
    "_0xbd('qcwy',arg1,function(){document.cookie='acw_sc__v2='+x+'; path=/; max-age=3600';"
    "document.location.reload();});})();"
)

# /pc/search: the human search page behind the WAF; its script asks the API and draws the cards. Should the
# API answer with a WAF page instead (the session ran out), the page reloads and meets the WAF itself.
QCWY_SEARCH_SHELL = """<!DOCTYPE html><html><head><meta charset="utf-8"><title>前程无忧 - 职位搜索</title></head>
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


def qcwy_challenge(arg1: str) -> str:
    return f"<html><script>\nvar arg1='{arg1}';\n{QCWY_CHALLENGE_JS}\n</script></html>"


def qcwy_slider(tag: str, trace: str) -> str:
    return WAF_SLIDER.format(tag=tag, trace=trace)


# --- 智联 --------------------------------------------------------------------------------------------------

# The 安全验证 page's script; the page puts `var _zs=…,_zk=…,_zr=…;` (seed, key, return) before it.
ZHILIAN_VERIFY_JS = (
    "(function(){" + JS + botcheck.JS + "var r=_zr;if(r.charAt(0)!=='/'||r.charAt(1)==='/'){r='/';}"
    "var z=_0x5c(_zs+'|'+navigator['\\x75\\x73\\x65\\x72\\x41\\x67\\x65\\x6e\\x74'],0x4)+'.'+_zk;"
    "_0xbd('zhilian',_zk,function(){document.cookie='zp_verify='+z+'; path=/';location.replace(r);});})();"
)

ZHILIAN_SLIDER = """<!DOCTYPE html><html><head><meta charset="utf-8"><title>安全验证</title></head>
<body><div class="verify-wrap"><h1>安全验证</h1><p>请拖动下方滑块完成验证</p>
<div class="geetest_box"><div class="geetest_slider"><div class="geetest_track">
<div class="geetest_btn" id="geetest_btn"></div></div><span class="geetest_tip">拖动滑块完成拼图</span></div></div>
<p class="trace">{trace}</p></div>
<script>document.getElementById('geetest_btn').onmousedown=function(){{return false;}};</script></body></html>"""


def zhilian_verify(seed: str, key: str, back: str) -> str:
    return (
        '<!DOCTYPE html><html><head><meta charset="utf-8"><title>安全验证</title></head>'
        '<body><div class="verify-wrap"><h1>安全验证</h1><p>正在验证您的访问环境，请稍候…</p></div>'
        f"<script>var _zs={_js(seed)},_zk={_js(key)},_zr={_js(back)};{ZHILIAN_VERIFY_JS}</script></body></html>"
    )


def zhilian_slider(trace: str) -> str:
    return ZHILIAN_SLIDER.format(trace=html.escape(trace))
