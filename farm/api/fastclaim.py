"""The claim, the call a fleet makes most, answered ahead of FastAPI's routing.

``POST /api/v1/keyword/available`` with a valid claim in its JSON body is answered here,
after the bearer token and the body limit, without FastAPI's routing, dependency solving
and answer validation: on a claim of one keyword they took as much of the server's time as
the claim itself. The claim is read and answered by the route's own functions
(claiming.body_claim, routes.claim_keywords).
Every other request goes on to FastAPI unchanged, its body handed on whole: a body that is
not JSON, not sent as JSON or not a valid claim (400, 415, 422, said as the route says them),
a claim in the query.
"""

import json

from fastapi.exceptions import RequestValidationError

from farm.api.auth import send_json
from farm.api.claiming import body_claim, json_content
from farm.api.dbthreads import DbThreads
from farm.api.errors import UNAVAILABLE, unavailable
from farm.api.limits import replay
from farm.api.outcomes import Outcomes
from farm.api.routes import claim_keywords
from farm.api.schemas import ClaimIn
from farm.state.store import KeywordStore

PATH = "/api/v1/keyword/available"


class ClaimFastPath:
    """ASGI middleware: answers a POST to PATH, with no query and a valid claim for its body."""

    def __init__(self, app, store: KeywordStore, db: DbThreads, outcomes: Outcomes, retry_after: int):
        self.app = app
        self.store = store
        self.db = db
        self.outcomes = outcomes
        self.retry_after = retry_after

    async def __call__(self, scope, receive, send):
        if scope["type"] != "http" or scope["method"] != "POST" or scope["path"] != PATH or scope["query_string"]:
            return await self.app(scope, receive, send)
        body = await _whole_body(receive)
        if body is None:  # the client went away
            return
        params = _claim(body) if json_content(_content_type(scope["headers"])) else None
        if params is None:
            return await self.app(scope, replay(body, receive), send)
        peer = scope.get("client")
        try:
            answer = await self.db.run(claim_keywords, self.store, self.outcomes, params, peer[0] if peer else None)
        except UNAVAILABLE as exc:
            detail, headers = unavailable("POST", PATH, exc, self.retry_after, self.outcomes)
            headers = [(name.lower().encode(), value.encode()) for name, value in headers.items()]
            return await send_json(send, 503, json.dumps(detail, separators=(",", ":")).encode(), headers)
        await send_json(send, 200, answer.model_dump_json().encode())


async def _whole_body(receive) -> bytes | None:
    chunks = []
    while True:
        message = await receive()
        if message["type"] != "http.request":
            return None
        chunks.append(message.get("body", b""))
        if not message.get("more_body", False):
            return b"".join(chunks)


def _content_type(headers) -> str | None:
    # the one Content-Type: farm.api.heads refuses a request with two
    return next((value.decode("latin-1") for name, value in headers if name == b"content-type"), None)


def _claim(body: bytes) -> ClaimIn | None:
    """The claim in ``body``, read by the route's own reader; None when there is none to read (the
    route answers: with the claim in the query, or 400 or 422)."""
    if not body.strip():
        return None
    try:
        return body_claim(body)
    except RequestValidationError:
        return None
