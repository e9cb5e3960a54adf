"""Headers a request may carry once: 400 for a ``Host``, ``Origin`` or ``Content-Type`` given twice.

Readers of a head disagree on which of two copies counts (a proxy may check the first
and the server use the last), so a request with two is refused whole before anything
reads either (RFC 9110 allows one of each; RFC 9112 §3.2 asks 400 for two Hosts).
"""

import logging

from farm.api.auth import send_json
from farm.api.outcomes import Outcomes

logger = logging.getLogger(__name__)

ONCE = (b"host", b"origin", b"content-type")
_SHOWN = {b"host": "Host", b"origin": "Origin", b"content-type": "Content-Type"}


def repeated(headers) -> bytes | None:
    """The first header of ONCE that ``headers`` (ASGI's lower-case pairs) hold more than once."""
    seen = set()
    for name, _ in headers:
        if name in ONCE:
            if name in seen:
                return name
            seen.add(name)
    return None


class OneEach:
    """ASGI middleware: 400 for a request that gives a header of ONCE more than once."""

    def __init__(self, app, outcomes: Outcomes):
        self.app = app
        self.outcomes = outcomes

    async def __call__(self, scope, receive, send):
        if scope["type"] != "http":
            return await self.app(scope, receive, send)
        name = repeated(scope["headers"])
        if name is None:
            return await self.app(scope, receive, send)
        self.outcomes.add("repeated_headers")
        peer = scope.get("client") or ("?", 0)
        shown = _SHOWN[name]
        logger.warning("400 %s %s from %s: %s given more than once", scope["method"], scope["path"], peer[0], shown)
        body = f'{{"detail":"the {shown} header is given more than once: send it once"}}'.encode()
        await send_json(send, 400, body, [(b"connection", b"close")])
