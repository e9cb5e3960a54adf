"""The walls of `farm sandbox --walls`: each served as docs/sites.md §4.6 says, passed only by a client that
computes what the page computes for its own User-Agent, sessions ending by time and by count, sliders that
set no cookie, and the /_sandbox/walls and /_sandbox/requests endpoints. In-process: no child process."""

import base64
import json
import re
import urllib.error
import urllib.parse
import urllib.request
from types import SimpleNamespace

import pytest
from click.testing import CliRunner

from farm.sandbox import cli
from farm.sandbox.server import Sandbox
from farm.sandbox.testing import SandboxThread, wall_args
from farm.sandbox.walls import WallConfig
from farm.sites.boss.wall import boss_token
from farm.sites.qcwy.wall import qcwy_token
from farm.sites.zhilian.wall import zhilian_token
from tests.unit.sandbox_conftest_helpers import boss_path, get, initial_state, qcwy_path, zhilian_path

UA = "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/124.0.0.0 Safari/537.36"
OTHER_UA = "python-requests/2.32.3"
START = 1_800_000_000.0


class Clock:
    """The walls' clock, moved by the tests."""

    def __init__(self):
        self.now = START

    def __call__(self):
        return self.now


@pytest.fixture(scope="module")
def clock():
    return Clock()


@pytest.fixture(scope="module")
def sb(clock):
    with SandboxThread(Sandbox(seed=4, postings=(60, 60), walls=WallConfig(), clock=clock)) as sandbox:
        yield sandbox


@pytest.fixture(autouse=True)
def fresh(sb, clock):
    clock.now = START
    sb.set_walls()
    sb.set_faults()
    sb.reset()


def fetch(sb, path, agent=UA, cookies=None, headers=None):
    sent = {"User-Agent": agent, **(headers or {})}
    if cookies:
        sent["Cookie"] = "; ".join(f"{name}={value}" for name, value in cookies.items())
    return get(sb.url, path, sent)


def boss_json(sb, agent=UA, cookies=None, keyword="python"):
    status, headers, body = fetch(sb, boss_path(keyword), agent, cookies)
    assert status == 200 and headers["Content-Type"].startswith("application/json"), (status, body[:200])
    return json.loads(body)


def earn_boss(sb, agent=UA, keyword="python"):
    """The __zp_stoken__ a client computes from code 37's zpData."""
    z = boss_json(sb, agent, keyword=keyword)["zpData"]
    return {"__zp_stoken__": boss_token(z["seed"], z["ts"], z["name"], agent)}


def earn_qcwy(sb, agent=UA, path=None):
    status, headers, body = fetch(sb, path or qcwy_path("python"), agent)
    arg1 = re.search(rb"var arg1='([0-9A-F]{40})';", body).group(1).decode()
    acw_tc = re.match(r"acw_tc=([0-9a-f]+);", headers["Set-Cookie"]).group(1)
    return {"acw_tc": acw_tc, "acw_sc__v2": qcwy_token(arg1, agent)}


def zhilian_verify_page(sb, agent=UA, keyword="python"):
    status, headers, _ = fetch(sb, zhilian_path(keyword), agent)
    assert status == 302
    return fetch(sb, headers["Location"], agent)


def earn_zhilian(sb, agent=UA, keyword="python"):
    _, _, body = zhilian_verify_page(sb, agent, keyword)
    seed, key = re.search(rb'var _zs="([0-9a-f]+)",_zk="([0-9a-f]+)"', body).groups()
    return {"zp_verify": zhilian_token(seed.decode(), key.decode(), agent)}


def served(sb, site):
    return sb.walls()["walls_served"][site]


# --- Boss ---------------------------------------------------------------------------------------------------


def test_boss_api_without_a_session_answers_code_37_with_a_fresh_challenge(sb):
    first, second = boss_json(sb), boss_json(sb)
    assert first["code"] == 37 and first["message"] == "您的访问行为异常."
    z = first["zpData"]
    assert set(z) == {"seed", "ts", "name"} and "jobList" not in z
    assert len(base64.b64decode(z["seed"], validate=True)) == 32
    assert z["ts"] == int(START * 1000) and re.fullmatch(r"[0-9a-f]{8}", z["name"])
    assert second["zpData"]["seed"] != z["seed"] and second["zpData"]["name"] != z["name"]
    assert served(sb, "boss") == {"no_cookie": 2}


def test_boss_token_computed_in_python_passes_with_its_user_agent_only(sb):
    cookies = earn_boss(sb)
    body = boss_json(sb, cookies=cookies)
    assert body["code"] == 0 and len(body["zpData"]["jobList"]) == 30
    assert boss_json(sb, OTHER_UA, cookies)["code"] == 37
    # a token earned for one User-Agent is not the token of another: a client cannot pass it on
    assert boss_json(sb, OTHER_UA, earn_boss(sb, UA))["code"] == 37
    forged = {"__zp_stoken__": cookies["__zp_stoken__"].replace(cookies["__zp_stoken__"][0], "0", 1) + "0"}
    assert boss_json(sb, cookies=forged)["code"] == 37
    walls = sb.walls()
    assert walls["sessions_issued"]["boss"] == 1 and walls["with_session"]["boss"] == 1
    assert walls["walls_served"]["boss"] == {"no_cookie": 2, "other_agent": 1, "invalid": 2}
    assert sb.counts() == {("boss", "101010100", "python", 1): 1}  # walls are not served pages


def test_boss_security_page_loads_the_token_script_and_the_job_page_follows_code_37(sb):
    z = boss_json(sb)["zpData"]
    query = urllib.parse.urlencode({**z, "callbackUrl": "/web/geek/job?query=python&city=101010100", "srcReferer": ""})
    status, headers, page = fetch(sb, f"/web/common/security-check.html?{query}")
    assert status == 200 and headers["Content-Type"].startswith("text/html")
    assert f'<script src="/web/common/security-js/{z["name"]}.js"></script>'.encode() in page
    status, headers, script = fetch(sb, f"/web/common/security-js/{z['name']}.js")
    assert status == 200 and "javascript" in headers["Content-Type"]
    assert b"__zp_stoken__=" in script and b"encodeURIComponent" in script and b"location.replace(" in script
    assert b"/web/geek/job" in script  # the default callback
    status, _, shell = fetch(sb, "/web/geek/job?query=python&city=101010100")
    assert status == 200 and b"/wapi/zpgeek/search/joblist.json" in shell and b"security-check.html" in shell
    assert sb.walls()["security_pages"]["boss"] == 1


# --- 51job --------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("path", [qcwy_path("python"), "/pc/search?keyword=python&jobArea=010000"])
def test_qcwy_waf_challenge_guards_the_api_and_the_search_page(sb, path):
    status, headers, body = fetch(sb, path)
    assert status == 200 and headers["Content-Type"].startswith("text/html")
    assert re.fullmatch(r"acw_tc=[0-9a-f]+; HttpOnly; Max-Age=1800; Path=/", headers["Set-Cookie"])
    assert re.match(rb"<html><script>\nvar arg1='[0-9A-F]{40}';", body) and body.endswith(b"</script></html>")
    assert b"document.cookie='acw_sc__v2='+x+'; path=/; max-age=3600'" in body
    assert b"document.location.reload();" in body
    cookies = earn_qcwy(sb, path=path)
    status, _, page = fetch(sb, path, cookies=cookies)
    assert status == 200 and b"var arg1=" not in page
    assert fetch(sb, path, OTHER_UA, cookies)[2].count(b"var arg1=") == 1


def test_qcwy_session_needs_its_own_acw_tc(sb):
    cookies, other = earn_qcwy(sb), earn_qcwy(sb)
    assert b"var arg1=" in fetch(sb, qcwy_path("python"), cookies={"acw_sc__v2": cookies["acw_sc__v2"]})[2]
    swapped = {"acw_tc": other["acw_tc"], "acw_sc__v2": cookies["acw_sc__v2"]}
    assert b"var arg1=" in fetch(sb, qcwy_path("python"), cookies=swapped)[2]
    body = json.loads(fetch(sb, qcwy_path("python"), cookies=cookies)[2])
    assert body["status"] == "1" and len(body["resultbody"]["job"]["items"]) == 20
    assert served(sb, "qcwy") == {"no_cookie": 3, "invalid": 1}


def test_qcwy_waf_comes_before_the_sign_check(sb):
    wrong = {"sign": "0" * 64}
    assert b"var arg1=" in fetch(sb, qcwy_path("python"), headers=wrong)[2]
    body = json.loads(fetch(sb, qcwy_path("python"), cookies=earn_qcwy(sb), headers=wrong)[2])
    assert body["status"] == "1004"


# --- 智联 ---------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("path", [zhilian_path("python 开发"), zhilian_path("python", in_path=True)])
def test_zhilian_redirects_to_the_verification_page_and_back(sb, path):
    status, headers, _ = fetch(sb, path)
    assert status == 302 and headers["Location"] == "/verify/security?return=" + urllib.parse.quote(path, safe="")
    status, headers, page = fetch(sb, headers["Location"])
    assert status == 200 and headers["Content-Type"].startswith("text/html")
    assert b"<title>\xe5\xae\x89\xe5\x85\xa8\xe9\xaa\x8c\xe8\xaf\x81</title>" in page  # 安全验证
    assert b"zp_verify=" in page and b"location.replace(" in page and json.dumps(path).encode() in page
    seed, key = re.search(rb'var _zs="([0-9a-f]+)",_zk="([0-9a-f]+)"', page).groups()
    cookies = {"zp_verify": zhilian_token(seed.decode(), key.decode(), UA)}
    status, _, page = fetch(sb, path, cookies=cookies)
    assert status == 200 and initial_state(page)["positionList"]
    assert fetch(sb, path, OTHER_UA, cookies)[0] == 302
    assert sb.walls()["security_pages"]["zhilian"] == 1


# --- sessions end -------------------------------------------------------------------------------------------


def test_a_session_ends_session_seconds_after_its_challenge_was_served(sb, clock):
    sb.set_walls(session_seconds=30)
    cookies = earn_boss(sb)
    clock.now += 29.5  # earned late: the life runs from the challenge, not from the first use
    assert boss_json(sb, cookies=cookies)["code"] == 0
    clock.now += 0.5
    refused = boss_json(sb, cookies=cookies)
    assert refused["code"] == 37 and refused["zpData"]["ts"] == int(clock.now * 1000)
    clock.now = START  # the token stays dead, whatever the clock says
    assert boss_json(sb, cookies=cookies)["code"] == 37
    assert boss_json(sb, cookies=earn_boss(sb))["code"] == 0
    walls = sb.walls()
    assert walls["expired"]["boss"] == 1 and walls["sessions_issued"]["boss"] == 2
    assert walls["walls_served"]["boss"] == {"no_cookie": 2, "expired": 2}


@pytest.mark.parametrize("site", ["boss", "qcwy", "zhilian"])
def test_a_session_answers_session_requests_requests(sb, site):
    sb.set_walls(session_requests=3)
    earn, path, passed = {
        "boss": (earn_boss, boss_path("python"), lambda s, b: json.loads(b)["code"] == 0),
        "qcwy": (earn_qcwy, qcwy_path("python"), lambda s, b: b.startswith(b'{"status":"1"')),
        "zhilian": (earn_zhilian, zhilian_path("python"), lambda s, b: s == 200 and b"__INITIAL_STATE__" in b),
    }[site]
    cookies = earn(sb)
    answers = [fetch(sb, path, cookies=cookies) for _ in range(4)]
    assert [passed(status, body) for status, _, body in answers] == [True, True, True, False]
    walls = sb.walls()
    assert walls["expired"][site] == 1 and walls["with_session"][site] == 3
    assert fetch(sb, path, cookies=earn(sb))[0] == 200 and sb.walls()["sessions_issued"][site] == 2


def test_only_the_configured_sites_are_walled(sb):
    sb.set_walls(sites=["zhilian"])
    assert boss_json(sb)["code"] == 0
    assert fetch(sb, qcwy_path("python"))[2].startswith(b'{"status":"1"')
    assert fetch(sb, zhilian_path("python"))[0] == 302


# --- sliders ------------------------------------------------------------------------------------------------


def test_boss_slider_keyword_is_never_let_through_and_its_security_page_leads_to_the_slider(sb):
    sb.set_walls(slider_keywords=["boss:java"])
    cookies = earn_boss(sb)
    assert boss_json(sb, cookies=cookies, keyword="java")["code"] == 37
    assert boss_json(sb, cookies=cookies, keyword="python")["code"] == 0
    callback = "/web/geek/job?query=java&city=101010100"
    query = urllib.parse.urlencode({"seed": "s", "name": "n", "ts": 1, "callbackUrl": callback, "srcReferer": ""})
    _, _, page = fetch(sb, f"/web/common/security-check.html?{query}")
    slider = "/web/passport/zp/verify-slider?" + urllib.parse.urlencode({"callbackUrl": callback, "srcReferer": ""})
    assert f"location.replace({json.dumps(slider)})".encode() in page and b"security-js" not in page
    status, headers, page = fetch(sb, slider)
    assert status == 200 and "Set-Cookie" not in headers
    for marker in ("滑块", "verify-slider", "nc_1_n1z"):
        assert marker.encode() in page
    assert b"cookie" not in page
    walls = sb.walls()
    assert walls["sliders"]["boss"] == 1 and walls["walls_served"]["boss"]["slider_keyword"] == 1


def test_qcwy_slider_keyword_gets_the_slider_page_even_with_a_session(sb):
    sb.set_walls(slider_keywords=["java"])
    cookies = earn_qcwy(sb)
    for path in (qcwy_path("java"), "/pc/search?keyword=java&jobArea=010000"):
        status, headers, page = fetch(sb, path, cookies=cookies)
        assert status == 200 and headers["Content-Type"].startswith("text/html") and "Set-Cookie" not in headers
        for marker in ("nc_1_n1z", "waf-nc-title", "请按住滑块"):
            assert marker.encode() in page
        assert b"var arg1=" not in page and b"document.cookie" not in page
    assert sb.walls()["sliders"]["qcwy"] == 2


def test_zhilian_slider_keyword_verification_page_is_a_slider(sb):
    sb.set_walls(slider_keywords=["zhilian:java"])
    cookies = earn_zhilian(sb)
    assert fetch(sb, zhilian_path("java"), cookies=cookies)[0] == 302
    status, headers, page = zhilian_verify_page(sb, keyword="java")
    assert status == 200 and "Set-Cookie" not in headers
    assert b"geetest_box" in page and "滑块".encode() in page and b"cookie" not in page
    assert sb.walls()["sliders"]["zhilian"] == 1


def test_slider_rate_is_drawn_per_security_visit(sb):
    sb.set_walls(slider_rate=1.0)
    assert b"geetest_box" in zhilian_verify_page(sb)[2]
    assert b"nc_1_n1z" in fetch(sb, qcwy_path("python"))[2]
    query = urllib.parse.urlencode({"seed": "s", "name": "n", "ts": 1, "callbackUrl": "/web/geek/job?query=go"})
    assert b"verify-slider" in fetch(sb, f"/web/common/security-check.html?{query}")[2]
    sb.set_walls(slider_rate=0.5, seed=3)
    pages = [zhilian_verify_page(sb)[2] for _ in range(40)]
    sliders = sum(b"geetest_box" in page for page in pages)
    assert 8 <= sliders <= 32 and sb.walls()["sliders"]["zhilian"] == 1 + sliders


# --- control ------------------------------------------------------------------------------------------------


def test_a_site_that_refuses_sessions_refuses_each_on_its_first_use(sb):
    sb.set_walls(sites=["boss"], refuse_sessions=True)
    token = earn_boss(sb)
    assert boss_json(sb, cookies=token)["code"] == 37  # a valid token, refused on its first use
    walls = sb.walls()
    assert walls["sessions_issued"]["boss"] == 1 and walls["with_session"]["boss"] == 0
    assert walls["walls_served"]["boss"]["refused"] == 1


def test_walls_endpoint_shows_config_and_counts_and_delete_clears_the_counts(sb):
    shown = sb.set_walls(session_seconds=9, session_requests=4, slider_keywords=["java"], seed=2)
    assert shown["config"] == {
        "sites": ["boss", "qcwy", "zhilian"],
        "session_seconds": 9.0,
        "session_requests": 4,
        "slider_rate": 0.0,
        "slider_keywords": ["java"],
        "seed": 2,
        "refuse_sessions": False,
        "hang": False,
    }
    earn_boss(sb)
    walls = sb.walls()
    assert set(walls) == {
        "sessions_issued",
        "walls_served",
        "expired",
        "with_session",
        "sliders",
        "security_pages",
        "bots",
        "people",
        "bot_kinds",
        "config",
    }
    assert walls["walls_served"] == {"boss": {"no_cookie": 1}, "qcwy": {}, "zhilian": {}}
    cleared = sb.reset_walls()
    assert cleared["walls_served"] == {"boss": {}, "qcwy": {}, "zhilian": {}} and cleared["config"]["seed"] == 2


@pytest.mark.parametrize(
    "config, field",
    [
        ({"session_seconds": 0}, "session_seconds"),
        ({"session_requests": 1.5}, "session_requests"),
        ({"slider_rate": 2}, "slider_rate"),
        ({"sites": ["boss", "indeed"]}, "sites"),
        ({"slider_keywords": "java"}, "slider_keywords"),
        ({"seed": "x"}, "seed"),
        ({"hang": 1}, "hang"),
        ({"colour": "red"}, "colour"),
    ],
)
def test_a_bad_wall_config_is_refused_naming_the_field(sb, config, field):
    request = urllib.request.Request(sb.url + "/_sandbox/walls", data=json.dumps(config).encode(), method="POST")
    with pytest.raises(urllib.error.HTTPError) as caught:
        urllib.request.urlopen(request, timeout=10)
    assert caught.value.code == 400 and field in json.loads(caught.value.read())["error"]
    assert sb.walls()["config"]["session_seconds"] == 120.0


def test_requests_shows_the_last_search_requests_headers_in_order_cookie_values_hidden(sb):
    cookies = earn_boss(sb)
    fetch(sb, boss_path("python"), cookies=cookies, headers={"X-Zeta": "1", "accept": "*/*"})
    fetch(sb, zhilian_path("go"))
    fetch(sb, "/web/geek/job?query=python")  # a page, not a search
    rows = sb.requests(last=2)
    assert [(r["site"], r["method"], r["path"]) for r in rows] == [
        ("boss", "GET", boss_path("python")),
        ("zhilian", "GET", zhilian_path("go")),
    ]
    headers = rows[0]["headers"]
    assert [name for name, _ in headers] == ["Host", "Accept-Encoding", "User-Agent", "X-Zeta", "accept", "Cookie"]
    assert dict(headers)["Cookie"] == "__zp_stoken__" and dict(headers)["User-Agent"] == UA
    assert len(sb.requests(last=50)) == 3
    sb.reset()
    assert sb.requests() == []


def test_without_walls_nothing_is_walled_and_the_wall_pages_are_absent():
    with SandboxThread(Sandbox(seed=4, postings=(60, 60))) as sandbox:
        assert json.loads(fetch(sandbox, boss_path("python"))[2])["code"] == 0
        assert fetch(sandbox, zhilian_path("python"))[0] == 200
        for path in ("/web/geek/job", "/pc/search", "/verify/security", "/web/common/security-check.html"):
            assert fetch(sandbox, path)[0] == 404
        walls = sandbox.walls()
        assert walls["config"] is None and walls["sessions_issued"] == {"boss": 0, "qcwy": 0, "zhilian": 0}
        sandbox.set_walls(sites=["boss"])  # raised at run time
        assert json.loads(fetch(sandbox, boss_path("python"))[2])["code"] == 37


# --- the command ------------------------------------------------------------------------------------------


def test_the_commands_wall_flags_give_the_config_sandbox_process_asks_for(monkeypatch):
    built = []  # the sandboxes the command would serve, instead of serving them
    monkeypatch.setattr(cli, "_serve", lambda box, host, port: box)
    monkeypatch.setattr(cli, "asyncio", SimpleNamespace(run=built.append))
    config = WallConfig(("boss", "zhilian"), 7.5, 9, 0.25, ("java", "qcwy:go"), 3)
    result = CliRunner().invoke(cli.sandbox, ["--port", "0", *wall_args(config)])
    assert result.exit_code == 0, result.output
    assert built[0].walls.config == config
    CliRunner().invoke(cli.sandbox, ["--port", "0", *wall_args(True)])
    assert built[1].walls.config == WallConfig()
    CliRunner().invoke(cli.sandbox, ["--port", "0"])
    assert built[2].walls is None


@pytest.mark.parametrize(
    "args, message",
    [
        (["--session-requests", "5"], "--session-requests needs --walls"),
        (["--slider-keyword", "java"], "--slider-keyword needs --walls"),
        (["--walls", "--wall-sites", "boss,indeed"], "indeed"),
        (["--walls", "--session-seconds", "0"], "--session-seconds"),
    ],
)
def test_bad_wall_flags_fail_with_one_clear_line(args, message):
    result = CliRunner().invoke(cli.sandbox, ["--port", "0", *args])
    errors = [line for line in result.output.splitlines() if line.startswith("Error:")]
    assert result.exit_code == 2 and len(errors) == 1 and message in errors[0]


def post_verdict(sb, site, challenge, bot, kind=""):
    body = json.dumps({"site": site, "challenge": challenge, "bot": bot, "botKind": kind}).encode()
    request = urllib.request.Request(sb.url + "/_sandbox/botd", data=body, headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(request, timeout=10) as answer:
        return answer.status


def test_a_challenge_whose_page_botd_judged_a_bot_grants_no_session(sb):
    z = boss_json(sb)["zpData"]
    assert post_verdict(sb, "boss", z["name"], True, "headless_chrome") == 200
    token = {"__zp_stoken__": boss_token(z["seed"], z["ts"], z["name"], UA)}
    assert boss_json(sb, cookies=token)["code"] == 37  # the right token, but a bot solved it
    assert served(sb, "boss").get("bot") == 1
    people = earn_boss(sb)
    post_verdict(sb, "boss", "someone-else", False)
    assert boss_json(sb, cookies=people)["code"] == 0  # a challenge BotD did not flag still grants one
    walls = sb.walls()
    assert walls["bots"]["boss"] == 1 and walls["people"]["boss"] == 1
    assert walls["bot_kinds"] == {"headless_chrome": 1}


def test_every_token_page_runs_botd_before_it_sets_its_cookie(sb):
    pages = [
        fetch(sb, "/web/common/security-js/ab12cd34.js")[2],
        fetch(sb, qcwy_path("python"))[2],
        zhilian_verify_page(sb)[2],
    ]
    for body in pages:
        text = body.decode()
        # the cookie is set in the callback BotD's verdict calls: _0xbd('<site>', challenge, function(){…})
        assert "/_sandbox/botd.esm.js" in text and re.search(r"_0xbd\('(boss|qcwy|zhilian)',\w+,function\(\)\{", text)
    status, headers, bundle = fetch(sb, "/_sandbox/botd.esm.js")
    assert status == 200 and b"Fingerprint BotD v2.0.0" in bundle
