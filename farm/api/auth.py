"""Who may call the keyword API: the holders of FARM_API_TOKEN.

With the token set, every request (the OpenAPI document and /docs too) must carry
``Authorization: Bearer <token>``; anything else gets 401 before the request is
read further. Without it, the server only listens on a loopback address, where
no other machine can reach it. The token never goes to a log: a refused request
is logged by its method, path and peer.
"""

import hmac
import ipaddress
import logging

from farm.api.outcomes import Outcomes
from farm.errors import TokenRequired

logger = logging.getLogger(__name__)

LOCAL_NAMES = ("localhost",)


def is_loopback(host: str) -> bool:
    if host.lower() in LOCAL_NAMES:
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:  # a host name: it may resolve to anything
        return False


def check_bind(host: str, token: str | None) -> None:
    """TokenRequired unless the server may listen on ``host`` with this token (or without one)."""
    if not token and not is_loopback(host):
        raise TokenRequired(
            f"refusing to serve the keyword API on {host} without FARM_API_TOKEN: anyone who reaches "
            f"it could claim and end keywords. Set FARM_API_TOKEN to a secret bearer token, or use "
            f"--host 127.0.0.1"
        )


def _bearer(headers) -> bytes | None:
    """The credentials of the request's first Authorization header, when it is a Bearer one."""
    for name, value in headers:
        if name == b"authorization":
            scheme, _, credentials = value.partition(b" ")
            return credentials.strip() if scheme.lower() == b"bearer" else None
    return None


class BearerAuth:
    """ASGI middleware: 401 unless the request carries the bearer token."""

    def __init__(self, app, token: str, outcomes: Outcomes):
        self.app = app
        self.token = token.encode("utf-8")
        self.outcomes = outcomes

    async def __call__(self, scope, receive, send):
        if scope["type"] != "http":
            return await self.app(scope, receive, send)
        given = _bearer(scope["headers"])
        if given is not None and hmac.compare_digest(given, self.token):
            return await self.app(scope, receive, send)
        self.outcomes.add("unauthorized")
        peer = scope.get("client") or ("?", 0)
        logger.warning(
            "401 %s %s from %s: %s",
            scope["method"],
            scope["path"],
            peer[0],
            "no bearer token" if given is None else "wrong bearer token",
        )
        await send_json(
            send,
            401,
            b'{"detail":"a valid bearer token is required (Authorization: Bearer <FARM_API_TOKEN>)"}',
            [(b"www-authenticate", b"Bearer")],
        )


async def send_json(send, status: int, body: bytes, headers=()) -> None:
    """A whole JSON response, from ASGI middleware that answers instead of the app."""
    await send(
        {
            "type": "http.response.start",
            "status": status,
            "headers": [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode()), *headers],
        }
    )
    await send({"type": "http.response.body", "body": body})
