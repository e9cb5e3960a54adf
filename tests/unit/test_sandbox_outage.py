"""Outages: every search connection closed without a response for S seconds, now or after N pages; the control
endpoints keep answering and nothing dropped is counted."""

import http.client
import json
import time
import urllib.error
import urllib.parse
import urllib.request

import pytest

from tests.unit.sandbox_conftest_helpers import CITIES, command, get, qcwy_path, raw_get, sandbox_thread, site_path

DEADLINE = 15.0  # seconds any outage here must be over by


@pytest.fixture(scope="module")
def sb():
    with sandbox_thread(seed=3, postings=(60, 60)) as sandbox:
        yield sandbox


@pytest.fixture(autouse=True)
def no_outage(sb):
    sb.start_outage(0)  # ends any outage
    sb.reset()
    yield
    sb.start_outage(0)


def dropped(sb, path):
    """True when the request's connection closed with nothing sent back."""
    data, ended = raw_get(sb.url, path)
    if ended == "complete":
        return False
    assert data == b"" and ended in ("closed", "reset"), (data[:200], ended)
    return True


def wait_until_served(sb, path):
    """Poll until the request is served; (time it was, requests dropped meanwhile). Fails past DEADLINE."""
    drops, deadline = 0, time.monotonic() + DEADLINE
    while time.monotonic() < deadline:
        if not dropped(sb, path):
            return time.monotonic(), drops
        drops += 1
        time.sleep(0.05)  # between polls only: the assertion is on the condition
    raise AssertionError(f"the outage was still on after {DEADLINE}s")


def test_an_outage_drops_every_search_for_its_seconds_and_then_ends(sb):
    started = time.monotonic()
    status = sb.start_outage(1.5)
    assert status["active"] and status["seconds"] == 1.5 and status["dropped"] == 0
    assert abs(status["until"] - (time.time() + 1.5)) < 1.0
    for site, city in CITIES.items():
        assert dropped(sb, site_path(site, "python", city, 1)), site
    with pytest.raises((http.client.RemoteDisconnected, ConnectionResetError)):
        get(sb.url, qcwy_path("java"))
    # the control endpoints keep answering
    assert sb.health()["status"] == "ok" and sb.truth("qcwy", "010000", "python")["total"] == 60
    assert sb.faults()["rate"] == 0.0 and sb.counts() == {}
    assert sb.outage()["dropped"] == 4 and sb.outage()["active"]
    served_at, drops = wait_until_served(sb, qcwy_path("python"))
    assert served_at - started >= 1.5  # not before its seconds were up
    status = sb.outage()
    assert not status["active"] and status["remaining"] == 0 and status["dropped"] == 4 + drops
    assert sb.counts() == {("qcwy", "010000", "python", 1): 1}  # nothing dropped was counted


def test_an_open_keep_alive_connection_is_dropped_too(sb):
    conn = http.client.HTTPConnection(urllib.parse.urlsplit(sb.url).netloc, timeout=10)
    try:
        conn.request("GET", qcwy_path("python"))
        assert conn.getresponse().read() and conn.sock is not None  # kept alive
        sb.start_outage(5)
        conn.request("GET", qcwy_path("python", page=2))
        with pytest.raises((http.client.RemoteDisconnected, ConnectionResetError)):
            conn.getresponse()
    finally:
        conn.close()
    assert sb.counts() == {("qcwy", "010000", "python", 1): 1}


def test_seconds_zero_ends_an_outage_now(sb):
    sb.start_outage(60)
    assert dropped(sb, qcwy_path("python"))
    assert not sb.start_outage(0)["active"]
    assert not dropped(sb, qcwy_path("python"))


def serve_pages(sandbox, n, start=1):
    for page in range(start, start + n):
        status, _, _ = get(sandbox.url, qcwy_path("python", page=page))
        assert status == 200


def test_after_pages_flags_start_one_outage_once_n_pages_are_served():
    with sandbox_thread(seed=3, postings=(60, 60), outage_after_pages=3, outage_seconds=1.0) as sandbox:
        assert sandbox.outage() | {"until": None} == {
            "active": False,
            "until": None,
            "remaining": 0.0,
            "seconds": 0.0,
            "dropped": 0,
            "after_pages": 3,
            "pages_served": 0,
        }
        sandbox.truth("qcwy", "010000", "python")  # control calls are not pages
        serve_pages(sandbox, 2)
        before_third = time.monotonic()
        serve_pages(sandbox, 1, start=3)
        assert dropped(sandbox, qcwy_path("python", page=4))
        assert sandbox.outage()["active"] and sandbox.outage()["pages_served"] == 3
        served_at, _ = wait_until_served(sandbox, qcwy_path("python", page=4))
        assert served_at - before_third >= 1.0  # it began with page 3's answer and lasted its second
        serve_pages(sandbox, 6, start=5)  # an armed outage fires once
        assert sandbox.counts() == {("qcwy", "010000", "python", p): 1 for p in range(1, 11)}


def test_after_pages_through_the_endpoint(sb):
    status = sb.start_outage(30, after_pages=2)
    assert (status["active"], status["after_pages"], status["pages_served"]) == (False, 2, 0)
    serve_pages(sb, 1)
    assert not sb.outage()["active"]
    serve_pages(sb, 1, start=2)
    assert dropped(sb, qcwy_path("python", page=3))
    assert sb.outage()["active"] and sb.outage()["remaining"] > 20


@pytest.mark.parametrize(
    "body, message",
    [
        ({}, "seconds"),
        ({"seconds": -1}, "seconds"),
        ({"seconds": 5, "after_pages": 0}, "after_pages"),
        ({"seconds": "x"}, "x"),
        ({"seconds": 1, "colour": "red"}, "colour"),
    ],
)
def test_bad_outage_requests_are_refused(sb, body, message):
    request = urllib.request.Request(sb.url + "/_sandbox/outage", data=json.dumps(body).encode(), method="POST")
    with pytest.raises(urllib.error.HTTPError) as caught:
        urllib.request.urlopen(request, timeout=10)
    assert caught.value.code == 400 and message in json.loads(caught.value.read())["error"]
    assert not sb.outage()["active"]


@pytest.mark.parametrize(
    "args",
    [["--outage-seconds", "5"], ["--outage-after-pages", "5"], ["--outage-after-pages", "0", "--outage-seconds", "5"]],
)
def test_outage_flags_are_checked(args):
    run, built = command("--port", "0", *args)
    assert run.exit_code == 2 and not built
    errors = [line for line in run.stderr.splitlines() if line.startswith("Error:")]
    assert len(errors) == 1 and "outage" in errors[0]
