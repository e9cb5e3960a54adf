"""The refusal shapes among the sandbox's faults: an unknown Boss code, 51job's soft-empty page and HTML body,
智联's client-rendered shell; drawn at a settable rate when named, never by default, never counted as served."""

import json
import re

import pytest
from parsel import Selector

from farm.sandbox.faults import FaultConfig, default_kinds, shape_kinds
from farm.sandbox.server import Sandbox
from farm.sandbox.testing import SandboxThread
from tests.unit.sandbox_conftest_helpers import boss_path, get, qcwy_path, zhilian_path


@pytest.fixture(scope="module")
def sb():
    with SandboxThread(Sandbox(seed=4, postings=(90, 90))) as sandbox:
        yield sandbox


@pytest.fixture(autouse=True)
def fresh(sb):
    sb.set_faults()
    sb.reset()


def test_boss_unknown_code_has_a_known_code_list_and_no_job_list(sb):
    sb.set_faults(rate=1.0, seed=2, kinds=["boss_unknown_code"])
    answers = []
    for page in range(1, 41):
        status, headers, body = get(sb.url, boss_path("python", page=page))
        assert status == 200 and headers["Content-Type"].startswith("application/json")
        answers.append(json.loads(body))
    assert {a["code"] for a in answers} == {9, 121, 122, 17, 200404}
    assert all(a["message"] and "jobList" not in a.get("zpData", {}) for a in answers)
    assert {"zpData" in a for a in answers} == {True, False}
    assert sb.counts() == {}


def test_qcwy_soft_empty_keeps_the_real_total(sb):
    sb.set_faults(keywords={"python": "qcwy_soft_empty"})
    body = json.loads(get(sb.url, qcwy_path("python", page=2))[2])
    assert body["status"] == "1" and body["resultbody"]["job"]["items"] == []
    assert body["resultbody"]["job"]["totalCount"] == sb.truth("qcwy", "010000", "python")["total"] == 90
    assert sb.counts() == {}


def test_qcwy_html_is_html_that_no_waf_marker_names(sb):
    sb.set_faults(keywords={"python": "qcwy_html"})
    status, headers, body = get(sb.url, qcwy_path("python"))
    assert status == 200 and headers["Content-Type"].startswith("text/html") and body.startswith(b"<!DOCTYPE html>")
    text = body.decode()
    for marker in ("var arg1=", "nc_1_n1z", "waf-nc-title", "aliyun", "访问验证", "登录", "login"):
        assert marker not in text
    assert sb.counts() == {}


def test_zhilian_shell_has_root_scripts_and_navigation_but_neither_state_nor_cards(sb):
    sb.set_faults(keywords={"python": "zhilian_shell"})
    status, headers, body = get(sb.url, zhilian_path("python"))
    assert status == 200 and headers["Content-Type"].startswith("text/html")
    page = Selector(body.decode())
    assert page.css("div#root") and len(page.css("script[src]")) >= 2
    assert len(re.sub(r"\s", "", "".join(page.css("nav ::text").getall()))) > 80
    text = body.decode()
    for absent in ("__INITIAL_STATE__", "joblist-box__item", "登录", "安全验证", "geetest_box", "nc_1_wrapper"):
        assert absent not in text
    assert sb.counts() == {}


def test_shapes_are_drawn_at_the_rate_set_and_only_when_named(sb):
    shapes = ("boss_unknown_code", "qcwy_soft_empty", "qcwy_html", "zhilian_shell")
    assert shape_kinds() == shapes and not set(shapes) & set(default_kinds())
    assert FaultConfig().kinds == default_kinds()
    sb.set_faults(rate=1.0, seed=1)
    assert sb.faults()["kinds"] == list(default_kinds())
    sb.set_faults(rate=0.3, seed=5, kinds=["qcwy_soft_empty"])
    items = [json.loads(get(sb.url, qcwy_path("python", page=1))[2])["resultbody"]["job"]["items"] for _ in range(60)]
    empty = sum(not page for page in items)
    assert 8 <= empty <= 30
    assert sb.counts() == {("qcwy", "010000", "python", 1): 60 - empty}
