"""The request body size limit (FARM_API_MAX_BODY): 413 past it, before anything parses the body.

A declared Content-Length over the limit is refused at once; a chunked body is
read until it passes the limit. The body read is handed on to the app whole.
"""

import logging

from farm.api.auth import send_json
from farm.api.outcomes import Outcomes

logger = logging.getLogger(__name__)


class BodyLimit:
    """ASGI middleware: 413 for a request body over ``max_body`` bytes."""

    def __init__(self, app, max_body: int, outcomes: Outcomes):
        self.app = app
        self.max_body = max_body
        self.outcomes = outcomes

    async def __call__(self, scope, receive, send):
        if scope["type"] != "http":
            return await self.app(scope, receive, send)
        declared = next((v for k, v in scope["headers"] if k == b"content-length"), None)
        # the HTTP server has already refused a Content-Length that is not a number
        if declared is not None and declared.isdigit() and int(declared) > self.max_body:
            return await self._too_large(scope, send)
        chunks, size = [], 0
        while True:
            message = await receive()
            if message["type"] != "http.request":  # the client went away
                return
            chunk = message.get("body", b"")
            size += len(chunk)
            if size > self.max_body:
                return await self._too_large(scope, send)
            chunks.append(chunk)
            if not message.get("more_body", False):
                break
        await self.app(scope, replay(b"".join(chunks), receive), send)

    async def _too_large(self, scope, send):
        self.outcomes.add("too_large")
        logger.warning("413 %s %s: body over FARM_API_MAX_BODY=%d bytes", scope["method"], scope["path"], self.max_body)
        body = f'{{"detail":"the request body is over FARM_API_MAX_BODY={self.max_body} bytes"}}'.encode()
        await send_json(send, 413, body, [(b"connection", b"close")])


def replay(body: bytes, receive):
    """An ASGI ``receive`` that gives ``body``, read already, as one message, then what ``receive`` gives."""
    replayed = False

    async def receive_again():
        nonlocal replayed
        if not replayed:
            replayed = True
            return {"type": "http.request", "body": body, "more_body": False}
        return await receive()

    return receive_again
