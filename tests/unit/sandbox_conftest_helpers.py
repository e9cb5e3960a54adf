"""Helpers for the sandbox tests: URLs in each site's real form, a stdlib HTTP getter, a raw-socket getter
(to see dropped and truncated responses as they are on the wire), and page walkers."""

import http.client
import json
import re
import socket
import urllib.parse

import pytest

from farm.sandbox.testing import SandboxProcess

INITIAL_STATE = re.compile(r"__INITIAL_STATE__=(\{.*?\})</script>")
CITIES = {"boss": "101010100", "qcwy": "010000", "zhilian": "530"}


@pytest.fixture(scope="module")
def sandbox():
    """One sandbox for a test module: seed 7, the default spread of keyword sizes, no faults."""
    with SandboxProcess(seed=7) as sb:
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
