"""farm's download handler keeps one curl_cffi session per identity and proxy: its requests share their
connections, and its cookies stay farm's (no curl jar adds, keeps or mixes them)."""

import pytest
from scrapy import Request
from scrapy.utils.test import get_crawler

from farm.sandbox.server import Sandbox
from farm.sandbox.testing import SandboxThread
from farm.sandbox.walls import WallConfig
from farm.sessions.handler import KeptConnectionsHandler
from farm.sessions.identity import FETCH, ClientIdentity
from tests.unit.loop_helpers import run_loop
from tests.unit.sandbox_conftest_helpers import qcwy_path, zhilian_path

IDENTITY = ClientIdentity.of("chrome", "156.0.8078.114")


@pytest.fixture
def sb():
    with SandboxThread(Sandbox(seed=3, postings=(30, 30), walls=WallConfig(sites=("qcwy",)))) as sandbox:
        yield sandbox


def sent(sb):
    """The search requests the sandbox saw: (path, {header name: value}), a Cookie reduced to its names."""
    return [(row["path"], dict(row["headers"])) for row in sb.requests(last=100)]


def fetch(sb, target, path, cookie=None):
    headers = {**IDENTITY.headers(FETCH), "Referer": sb.url + "/pc/search", "Accept": "application/json"}
    if cookie:
        headers["Cookie"] = cookie
    return Request(sb.url + path, headers=headers, meta={"impersonate": target})


def download(requests):
    """The answers to ``requests``, sent one after another by one handler, closed after."""

    async def run():
        handler = KeptConnectionsHandler(get_crawler())
        try:
            return [await handler.download_request(request) for request in requests]
        finally:
            await handler.close()

    return run_loop(run)


def test_requests_of_one_identity_share_one_connection(sb):
    sb.reset()
    answers = download([fetch(sb, "chrome", zhilian_path("python", page=n)) for n in range(1, 11)])
    assert [a.status for a in answers] == [200] * 10
    seen = sb.identity()
    assert seen["requests"] == 10 and seen["connections"] == 1  # scrapy-impersonate's handler: 10 connections


def test_a_cookie_an_answer_sets_is_not_sent_back_by_the_client_and_sessions_never_mix(sb):
    sb.reset()
    answers = download(
        [
            fetch(sb, "chrome", qcwy_path("python")),  # the WAF's page, with Set-Cookie: acw_tc
            fetch(sb, "chrome", qcwy_path("python", page=2)),  # no Cookie of farm's: none is sent
            fetch(sb, "chrome146", qcwy_path("python"), cookie="acw_tc=other; acw_sc__v2=x"),
            fetch(sb, "chrome", qcwy_path("python", page=3)),  # the other session's cookies stay there
            fetch(sb, "chrome146", qcwy_path("python", page=2)),  # and its own are not kept
        ]
    )
    assert b"acw_tc=" in answers[0].headers.get(b"Set-Cookie", b"")
    cookies = [headers.get("Cookie") for _, headers in sent(sb)]
    assert cookies == [None, None, "acw_tc; acw_sc__v2", None, None]
