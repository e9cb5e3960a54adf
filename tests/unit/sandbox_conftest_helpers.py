"""Helpers for the sandbox tests: the sandbox served in the test's process, URLs in each site's real form,
a stdlib HTTP getter, a raw-socket getter (to see dropped and truncated responses as they are on the wire),
and page walkers."""

import http.client
import json
import re
import socket
import urllib.parse
from types import SimpleNamespace

import pytest
from click.testing import CliRunner, Result

from farm.sandbox import cli
from farm.sandbox.server import Sandbox
from farm.sandbox.testing import SandboxProcess, SandboxThread

INITIAL_STATE = re.compile(r"__INITIAL_STATE__=(\{.*?\})</script>")
CITIES = {"boss": "101010100", "qcwy": "010000", "zhilian": "530"}
# keywords the tests look up in a sandbox of the default spread, to find ones of a size
CANDIDATES = [
    "python",
    "java",
    "golang",
    "会计",
    "销售",
    "前端",
    "数据分析",
    "c++",
    "产品经理",
    "测试",
    "运维",
    "hr",
    "ux",
    "rust",
    "php",
    "设计",
    "客服",
    "文员",
    "司机",
    "财务",
    *(f"岗位{i}" for i in range(40)),
]


def command(*args: str) -> tuple[Result, list[Sandbox]]:
    """`farm sandbox ARGS` run by its own command in this process: its result, and the Sandbox it would
    have served (none if the flags were refused), built but not served."""
    built: list[Sandbox] = []
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(cli, "_serve", lambda box, host, port: box)
        patch.setattr(cli, "asyncio", SimpleNamespace(run=built.append))
        result = CliRunner().invoke(cli.sandbox, list(args))
    return result, built


def sandbox_thread(**options) -> SandboxThread:
    """The sandbox SandboxProcess(**options) starts as a child, built by `farm sandbox` from the same
    flags and served on a thread of this process (unit tests start no process)."""
    result, built = command(*SandboxProcess(**options).args[3:])  # the flags after `python -m farm.sandbox`
    assert result.exit_code == 0 and built, result.output
    return SandboxThread(built[0])


@pytest.fixture(scope="module")
def sandbox():
    """One sandbox for a test module: seed 7, the default spread of keyword sizes, no faults."""
    with sandbox_thread(seed=7) as sb:
        yield sb


def boss_path(keyword, city="101010100", page=1, page_size=None):
    query = {"scene": 1, "query": keyword, "city": city, "experience": "", "degree": "", "page": page}
    if page_size:
        query["pageSize"] = page_size
    return "/wapi/zpgeek/search/joblist.json?" + urllib.parse.urlencode(query)


def qcwy_path(keyword, city="010000", page=1, page_size=20, prefix="/api/job/search-pc"):
    query = {
        "api_key": "51job",
        "timestamp": 1700000000,
        "keyword": keyword,
        "searchType": 2,
        "function": "",
        "industry": "",
        "jobArea": city,
        "jobArea2": "",
        "landmark": "",
        "metro": "",
        "salary": "",
        "workYear": "",
        "degree": "",
        "companyType": "",
        "companySize": "",
        "jobType": "",
        "issueDate": "",
        "sortType": 0,
        "pageNum": page,
        "requestId": "",
        "pageSize": page_size,
        "source": 1,
        "accountId": "",
        "pageCode": "sou|sou|soulb",
        "scene": 7,
    }
    return prefix + "?" + urllib.parse.urlencode(query)


def zhilian_path(keyword, city="530", page=1, in_path=False):
    if in_path:
        return f"/sou/jl{city}/p{page}?kw={urllib.parse.quote(keyword)}"
    return f"/sou/jl{city}?kw={urllib.parse.quote(keyword)}&p={page}"


def site_path(site, keyword, city, page):
    return {"boss": boss_path, "qcwy": qcwy_path, "zhilian": zhilian_path}[site](keyword, city, page)


def get(url, path, headers=None):
    """(status, headers, body bytes) over a fresh connection."""
    host = urllib.parse.urlsplit(url).netloc
    conn = http.client.HTTPConnection(host, timeout=20)
    try:
        conn.request("GET", path, headers=headers or {})
        response = conn.getresponse()
        return response.status, dict(response.getheaders()), response.read()
    finally:
        conn.close()


def get_json(url, path, headers=None):
    status, _, body = get(url, path, headers)
    assert status == 200, body[:300]
    return json.loads(body)


def raw_get(url, path):
    """What the socket delivers for one request, read until the server closes: (bytes, how it ended)."""
    parts = urllib.parse.urlsplit(url)
    with socket.create_connection((parts.hostname, parts.port), timeout=20) as sock:
        sock.sendall(f"GET {path} HTTP/1.1\r\nHost: {parts.netloc}\r\nConnection: keep-alive\r\n\r\n".encode())
        data = b""
        while True:
            try:
                chunk = sock.recv(65536)
            except ConnectionResetError:
                return data, "reset"
            if not chunk:
                return data, "closed"
            data += chunk
            head, sep, body = data.partition(b"\r\n\r\n")
            length = re.search(rb"(?i)content-length: *(\d+)", head)
            if sep and length and len(body) >= int(length.group(1)):
                return data, "complete"


def initial_state(html_bytes):
    match = INITIAL_STATE.search(html_bytes.decode())
    assert match, "no __INITIAL_STATE__ script"
    return json.loads(match.group(1))


def page_ids(site, url, keyword, city, page):
    """(ids on the page, the envelope's totals) as a crawler would read them."""
    if site == "boss":
        z = get_json(url, boss_path(keyword, city, page))["zpData"]
        return [j["encryptJobId"] for j in z["jobList"]], {"total": z["resCount"], "has_more": z["hasMore"]}
    if site == "qcwy":
        job = get_json(url, qcwy_path(keyword, city, page))["resultbody"]["job"]
        return [j["jobId"] for j in job["items"]], {"total": job["totalCount"]}
    state = initial_state(get(url, zhilian_path(keyword, city, page))[2])
    return [p["number"] for p in state["positionList"]], {"total": state["positionCount"], "pages": state["pages"]}


def walk(site, url, keyword, city, limit=200):
    """Every id a crawler reaches by paging until an empty page, and the number of non-empty pages."""
    ids, pages = [], 0
    for page in range(1, limit):
        found, _ = page_ids(site, url, keyword, city, page)
        if not found:
            return ids, pages
        ids += found
        pages += 1
    raise AssertionError("never reached an empty page")
