"""Each fault looks the way docs/sites.md says the real site shows it, and faults fire when and where told."""

import http.client
import json
import re
import time
import urllib.error
import urllib.request

import pytest
from parsel import Selector

from tests.unit.sandbox_conftest_helpers import (
    INITIAL_STATE,
    boss_path,
    get,
    get_json,
    initial_state,
    qcwy_path,
    raw_get,
    sandbox_thread,
    site_path,
    zhilian_path,
)


@pytest.fixture(scope="module")
def sb():
    with sandbox_thread(seed=3, postings=(60, 60)) as sandbox:
        yield sandbox


@pytest.fixture(autouse=True)
def no_faults(sb):
    sb.set_faults()
    sb.reset()
    yield
    sb.set_faults()


def fail(sb, keyword_kinds, **config):
    sb.set_faults(keywords=keyword_kinds, **config)


@pytest.mark.parametrize("kind, code", [("boss37", 37), ("boss35", 35), ("boss36", 36), ("boss7", 7)])
def test_boss_block_codes(sb, kind, code):
    fail(sb, {"python": kind})
    body = get_json(sb.url, boss_path("python"))
    assert body["code"] == code and body["message"] and "jobList" not in body.get("zpData", {})
    if code == 37:
        z = body["zpData"]
        assert isinstance(z["ts"], int) and re.fullmatch(r"[0-9a-f]{8}", z["name"]) and z["seed"]
    assert get_json(sb.url, boss_path("java"))["code"] == 0


def test_qcwy_waf_challenge(sb):
    fail(sb, {"python": "qcwy_waf"})
    status, headers, body = get(sb.url, qcwy_path("python"))
    assert status == 200 and headers["Content-Type"].startswith("text/html")
    assert re.search(rb"var arg1='[0-9A-F]{40}';", body)


def test_qcwy_slider(sb):
    fail(sb, {"python": "qcwy_slider"})
    status, headers, body = get(sb.url, qcwy_path("python"))
    page = Selector(text=body.decode())
    assert status == 200 and not headers["Content-Type"].startswith("application/json")
    assert page.css("p.waf-nc-title") and page.css('script[name^="aliyunwaf_"]') and page.css("#nc_1_n1z")
    assert "访问验证" in body.decode() and "请按住滑块" in body.decode()


def test_qcwy_throttle_status(sb):
    fail(sb, {"python": "qcwy_throttle"})
    body = get_json(sb.url, qcwy_path("python"))
    assert body["status"] == "1001" and body["resultbody"]["job"]["items"] == []


def test_zhilian_security_verification(sb):
    fail(sb, {"python": "zhilian_verify"})
    status, _, body = get(sb.url, zhilian_path("python"))
    title = Selector(text=body.decode()).css("title::text").get()
    assert status == 200 and "安全验证" in title and "Security Verification" in title
    assert not INITIAL_STATE.search(body.decode())


def test_zhilian_login_wall(sb):
    fail(sb, {"python": "zhilian_login"})
    body = get(sb.url, zhilian_path("python"))[2]
    assert "登录之后再搜索" in body.decode() and initial_state(body)["positionList"] == []
    assert not Selector(text=body.decode()).css(".joblist-box__item")


@pytest.mark.parametrize("status", [403, 429, 500, 502, 503])
def test_http_errors(sb, status):
    fail(sb, {"python": f"http{status}"}, retry_after=7)
    for site, city in (("boss", "101010100"), ("qcwy", "010000"), ("zhilian", "530")):
        got, headers, _ = get(sb.url, site_path(site, "python", city, 1))
        assert got == status
        assert (headers.get("Retry-After") == "7") == (status == 429)


def test_dropped_connection_sends_nothing(sb):
    fail(sb, {"python": "drop"})
    data, ended = raw_get(sb.url, qcwy_path("python"))
    assert data == b"" and ended in ("closed", "reset")
    with pytest.raises((http.client.RemoteDisconnected, ConnectionResetError)):
        get(sb.url, qcwy_path("python"))


def test_truncated_body_promises_more_than_it_sends(sb):
    fail(sb, {"python": "truncate"})
    data, ended = raw_get(sb.url, qcwy_path("python"))
    head, _, body = data.partition(b"\r\n\r\n")
    promised = int(re.search(rb"(?i)content-length: *(\d+)", head).group(1))
    assert ended == "closed" and head.startswith(b"HTTP/1.1 200") and 0 < len(body) < promised
    with pytest.raises(http.client.IncompleteRead):
        get(sb.url, boss_path("python"))


def test_slow_response_is_the_right_page_late_and_counted(sb):
    fail(sb, {"python": "slow"}, slow_ms=400)
    started = time.monotonic()
    body = get_json(sb.url, qcwy_path("python"))
    assert time.monotonic() - started >= 0.4 and len(body["resultbody"]["job"]["items"]) == 20
    assert sb.counts() == {("qcwy", "010000", "python", 1): 1}


def test_site_kinds_hit_only_their_site_and_site_prefix_narrows(sb):
    fail(sb, {"python": "boss37", "qcwy:java": "http500"})
    assert get_json(sb.url, qcwy_path("python"))["status"] == "1"
    assert get_json(sb.url, boss_path("python"))["code"] == 37
    assert get(sb.url, qcwy_path("java"))[0] == 500
    assert get_json(sb.url, boss_path("java"))["code"] == 0


def statuses(sb, n=40):
    return [get(sb.url, qcwy_path("python", page=1 + i % 3))[0] for i in range(n)]


def test_rate_faults_are_deterministic_for_a_seed(sb):
    sb.set_faults(rate=0.5, seed=11, kinds=["http500"])
    first = statuses(sb)
    sb.set_faults(rate=0.5, seed=11, kinds=["http500"])  # a new config restarts the sequence
    assert statuses(sb) == first
    assert 5 < first.count(500) < 35 and first.count(200) + first.count(500) == len(first)
    sb.set_faults(rate=0.5, seed=12, kinds=["http500"])
    assert statuses(sb) != first


def test_rate_draws_only_kinds_of_the_requested_site(sb):
    sb.set_faults(rate=1.0, seed=1, kinds=["boss37", "zhilian_verify"])
    assert get_json(sb.url, qcwy_path("python"))["status"] == "1"
    assert get_json(sb.url, boss_path("python"))["code"] == 37


def test_a_retried_page_gets_a_fresh_draw(sb):
    sb.set_faults(rate=0.5, seed=5, kinds=["http503"])
    for page in range(1, 4):
        for _attempt in range(30):
            if get(sb.url, boss_path("python", page=page))[0] == 200:
                break
        else:
            raise AssertionError(f"page {page} failed 30 times at rate 0.5")


def test_fail_keyword_flag_always_fails_that_keyword():
    with sandbox_thread(seed=3, postings=(30, 30), fail_keywords={"python": "http503"}) as sandbox:
        assert [get(sandbox.url, qcwy_path("python"))[0] for _ in range(5)] == [503] * 5
        assert get(sandbox.url, qcwy_path("java"))[0] == 200
        assert sandbox.faults()["keywords"] == {"python": "http503"}
        assert sandbox.counts() == {("qcwy", "010000", "java", 1): 1}


def test_fault_rate_flags():
    with sandbox_thread(seed=3, postings=(30, 30), fault_rate=1.0, fault_kinds=["http502"], fault_seed=4) as sandbox:
        assert [get(sandbox.url, qcwy_path(k))[0] for k in ("a", "b", "c")] == [502] * 3
        assert sandbox.faults() | {"keywords": None} == {
            "rate": 1.0,
            "seed": 4,
            "kinds": ["http502"],
            "keywords": None,
            "slow_ms": 1500,
            "retry_after": 1,
            "stale_totals": 0.0,
            "hostile_rate": 0.0,
        }
        assert sandbox.counts() == {}


@pytest.mark.parametrize(
    "config, message",
    [
        ({"kinds": ["boss99"]}, "boss99"),
        ({"rate": 2}, "rate"),
        ({"keywords": {"python": "nope"}}, "nope"),
        ({"colour": "red"}, "colour"),
        ({"stale_totals": 1.5}, "stale_totals"),
        ({"hostile_rate": -1}, "hostile_rate"),
    ],
)
def test_bad_fault_config_is_refused(sb, config, message):
    request = urllib.request.Request(sb.url + "/_sandbox/faults", data=json.dumps(config).encode(), method="POST")
    with pytest.raises(urllib.error.HTTPError) as caught:
        urllib.request.urlopen(request, timeout=10)
    assert caught.value.code == 400 and message in json.loads(caught.value.read())["error"]
    assert sb.faults()["rate"] == 0.0
