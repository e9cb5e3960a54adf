"""The claim answered ahead of FastAPI's routing: a valid claim in a JSON body is answered there, with
the route's answer; every other request goes on to the app with its body whole."""

import json

import pytest

pytest.importorskip("fastapi")

import httpx

from farm.api.app import create_app
from farm.api.dbthreads import DbThreads
from farm.api.fastclaim import PATH, ClaimFastPath
from farm.api.outcomes import Outcomes
from farm.api.schemas import AvailableOut
from farm.state import KeywordStore
from farm.state.db import make_engine
from tests.migrated import migrated
from tests.unit.loop_helpers import run_loop


def make_store(path) -> KeywordStore:
    url = f"sqlite:///{path}"
    migrated(url)
    store = KeywordStore(make_engine(url))
    store.add_keywords([("boss", "北京", "Python"), ("boss", "上海", "Java"), ("qcwy", "北京", "Go")])
    return store


class Downstream:
    """The app behind the fast path: records what reaches it, answers 299 with the body it read."""

    def __init__(self):
        self.seen = []

    async def __call__(self, scope, receive, send):
        chunks = []
        while True:
            message = await receive()
            chunks.append(message.get("body", b""))
            if not message.get("more_body", False):
                break
        self.seen.append((scope["method"], scope["path"], scope["query_string"], b"".join(chunks)))
        await send({"type": "http.response.start", "status": 299, "headers": []})
        await send({"type": "http.response.body", "body": b"app"})


def call(
    app,
    method: str,
    body: bytes = b"",
    query: bytes = b"",
    path: str = PATH,
    chunk: int = 0,
    content_type: bytes | None = b"application/json",
):
    """One request through ``app``; (status, headers, body) of its answer. ``chunk`` > 0 sends the
    body in pieces of that size."""

    async def request():
        pieces = [body[i : i + chunk] for i in range(0, len(body), chunk)] if chunk and body else [body]
        messages = [
            {"type": "http.request", "body": piece, "more_body": i < len(pieces) - 1} for i, piece in enumerate(pieces)
        ]
        sent = []

        async def receive():
            return messages.pop(0) if messages else {"type": "http.disconnect"}

        async def send(message):
            sent.append(message)

        scope = {
            "type": "http",
            "method": method,
            "path": path,
            "query_string": query,
            "headers": [(b"content-type", content_type)] if content_type else [],
            "client": ("127.0.0.1", 5000),
        }
        await app(scope, receive, send)
        start, answer = sent[0], b"".join(m.get("body", b"") for m in sent[1:])
        return start["status"], dict(start["headers"]), answer

    return run_loop(request)


@pytest.fixture
def fast(tmp_path):
    store = make_store(tmp_path / "farm.db")
    db = DbThreads(store.engine, wait_limit=5)
    downstream, outcomes = Downstream(), Outcomes()
    yield ClaimFastPath(downstream, store=store, db=db, outcomes=outcomes, retry_after=7), downstream, outcomes
    db.close()
    store.close()


def test_a_valid_claim_in_a_json_body_is_answered_without_the_app(fast):
    app, downstream, outcomes = fast
    body = json.dumps({"source": "boss", "limit": 2, "crawler_id": "c1"}).encode()
    status, headers, answer = call(app, "POST", body, chunk=5)
    assert status == 200
    assert headers[b"content-type"] == b"application/json"
    assert int(headers[b"content-length"]) == len(answer)
    out = AvailableOut.model_validate_json(answer)
    assert out.reserved and out.source == "boss"
    assert sorted(k.job for k in out.keywords) == ["Java", "Python"]
    assert all(k.lease_token for k in out.keywords)
    assert downstream.seen == []
    assert outcomes.snapshot() == {"claims": 1, "keywords_claimed": 2}


CLAIM = b'{"source": "boss"}'


@pytest.mark.parametrize(
    "method, body, query, path, content_type",
    [
        ("POST", CLAIM, b"", PATH, b"text/plain"),  # the route says 415
        ("POST", CLAIM, b"", PATH, None),
        ("POST", b"[" * 5000 + b"]" * 5000, b"", PATH, b"application/json"),  # too deep: the route says 400
    ],
)
def test_a_claim_not_sent_as_json_or_nested_too_deeply_reaches_the_app(fast, method, body, query, path, content_type):
    app, downstream, outcomes = fast
    status, _, answer = call(app, method, body, query, path, chunk=3000, content_type=content_type)
    assert (status, answer) == (299, b"app")
    assert downstream.seen == [(method, path, query, body)]
    assert outcomes.snapshot() == {}


@pytest.mark.parametrize(
    "method, body, query, path",
    [
        ("POST", b"not json", b"", PATH),
        ("POST", b'{"source": "nowhere"}', b"", PATH),
        ("POST", b'{"source": "boss", "limit": "2"}', b"", PATH),  # a body is read strictly
        ("POST", b"[1, 2]", b"", PATH),
        ("POST", b"", b"source=boss", PATH),  # the claim in the query
        ("POST", b'{"source": "boss"}', b"source=boss", PATH),  # both: the route refuses it
        ("GET", b"", b"source=boss", PATH),
        ("POST", b'{"source": "boss"}', b"", "/api/v1/keyword/heartbeat"),
    ],
)
def test_every_other_request_reaches_the_app_with_its_body_whole(fast, method, body, query, path):
    app, downstream, outcomes = fast
    status, _, answer = call(app, method, body, query, path, chunk=3)
    assert (status, answer) == (299, b"app")
    assert downstream.seen == [(method, path, query, body)]
    assert outcomes.snapshot() == {}


def test_a_claim_the_database_cannot_serve_is_a_503_with_retry_after(tmp_path, caplog):
    store = KeywordStore(make_engine(f"sqlite:///{tmp_path / 'no such directory' / 'farm.db'}"))
    db, downstream, outcomes = DbThreads(store.engine, wait_limit=5), Downstream(), Outcomes()
    try:
        app = ClaimFastPath(downstream, store=store, db=db, outcomes=outcomes, retry_after=7)
        status, headers, answer = call(app, "POST", b'{"source": "boss"}')
    finally:
        db.close()
        store.close()
    assert status == 503
    assert headers[b"retry-after"] == b"7"
    assert json.loads(answer) == {"detail": "the database is unavailable; try again in 7s"}
    assert outcomes.snapshot() == {"db_unavailable": 1}
    assert f"503 POST {PATH}: the database is unavailable" in caplog.text
    assert downstream.seen == []


def test_the_answer_is_the_routes(tmp_path):
    """The same claim on two equal tables, once in a JSON body (answered ahead of the routing) and
    once in the query (answered by the route): the same answer, but for the lease tokens."""

    async def claim(store, **request):
        app = create_app(store, token=None, max_body=10_000, retry_after=5)
        # outermost first: the repeated headers, the loopback check and the body limit come before the fast path
        assert [m.cls.__name__ for m in app.user_middleware] == ["OneEach", "LocalOnly", "BodyLimit", "ClaimFastPath"]
        transport = httpx.ASGITransport(app=app, client=("127.0.0.1", 5000))
        async with httpx.AsyncClient(transport=transport, base_url="http://127.0.0.1") as client:
            answers = [await client.post(PATH, **request) for _ in range(3)]
        app.state.db.close()
        return answers

    answers = {}
    for how, request in (
        ("body", {"json": {"source": "boss", "limit": 1}}),
        ("query", {"params": {"source": "boss", "limit": 1}}),
    ):
        store = make_store(tmp_path / f"{how}.db")
        try:
            answers[how] = run_loop(lambda: claim(store, **request))
        finally:
            store.close()
    for by_body, by_query in zip(answers["body"], answers["query"], strict=True):
        assert by_body.status_code == by_query.status_code == 200
        assert by_body.headers["content-type"] == by_query.headers["content-type"]
        body, query = by_body.json(), by_query.json()
        for keyword in body["keywords"] + query["keywords"]:
            assert keyword.pop("lease_token")
        assert body == query
    # the third claim found nothing left: it says so, with the count of what is left
    assert answers["body"][-1].json()["keywords"] == [] and answers["body"][-1].json()["claimable"] == 0
