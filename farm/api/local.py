"""What a server without FARM_API_TOKEN serves: its own host's programs, never a web page.

Without a token the API listens on a loopback address only, so no other machine
reaches it; but every browser on this machine does, on behalf of any page it shows.
So the server answers only requests that name it by a loopback Host (a page that
rebinds its DNS name to 127.0.0.1 still sends its own name: 400) and that no browser
sent from another site (an Origin other than the Host's own, or ``Sec-Fetch-Site``
cross-site or same-site: 403). Programs send neither header. Any port is taken, so
that an SSH tunnel or a container's port mapping still reaches the server.
"""

import logging

from farm.api.auth import is_loopback, send_json
from farm.api.outcomes import Outcomes

logger = logging.getLogger(__name__)

SAME_ORIGIN = (b"same-origin", b"none")  # Sec-Fetch-Site of the server's own pages, or a typed address


def _host_and_port(value: str) -> tuple[str, int | None] | None:
    """``Host``'s name and port ([::1]:8000, localhost), None when it cannot be read."""
    if value.startswith("["):
        name, bracket, rest = value[1:].partition("]")
        if not bracket or (rest and not rest.startswith(":")):
            return None
        port = rest[1:]
    else:
        name, _, port = value.partition(":")
    if port and not port.isdigit():
        return None
    return name, int(port) if port else None


def _loopback(host: bytes) -> bool:
    """``host`` (a Host header) names a loopback address, with any port."""
    parsed = _host_and_port(host.decode("latin-1"))
    return parsed is not None and is_loopback(parsed[0])


class LocalOnly:
    """ASGI middleware: 400 for a foreign Host, 403 for a request a browser sent from another site."""

    def __init__(self, app, outcomes: Outcomes):
        self.app = app
        self.outcomes = outcomes

    async def __call__(self, scope, receive, send):
        if scope["type"] != "http":
            return await self.app(scope, receive, send)
        headers = dict(scope["headers"])
        host = headers.get(b"host")
        why = None
        if host is None or not _loopback(host):
            status, why = 400, f"Host {(host or b'').decode('latin-1')!r} is not a loopback address"
            detail = (
                b'{"detail":"the Host header must name this server at a loopback address '
                b'(localhost, 127.0.0.1 or [::1])"}'
            )
        else:
            origin = headers.get(b"origin")
            site = headers.get(b"sec-fetch-site")
            if origin is not None and origin.lower() != b"http://" + host.lower():
                why = f"Origin {origin.decode('latin-1')!r} is another site"
            elif site is not None and site.lower() not in SAME_ORIGIN:
                why = f"Sec-Fetch-Site {site.decode('latin-1')!r}"
            status = 403
            detail = (
                b'{"detail":"a request from another site: without FARM_API_TOKEN the API serves programs '
                b'on this machine, not web pages"}'
            )
        if why is None:
            return await self.app(scope, receive, send)
        self.outcomes.add("not_local")
        peer = scope.get("client") or ("?", 0)
        logger.warning("%d %s %s from %s: %s", status, scope["method"], scope["path"], peer[0], why)
        await send_json(send, status, detail, [(b"connection", b"close")])
