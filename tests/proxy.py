"""A real HTTP forward proxy a test owns: it relays plain-HTTP requests (absolute URIs, as Scrapy sends
them to a proxy), counts what it did, can require Basic Proxy-Authorization, and can stand for a proxy
whose address the site has banned (``blocking``: it answers the site's 403 itself, relaying nothing).

    with ForwardProxy(auth=("alice", "s3cret")) as proxy:
        FARM_PROXIES = proxy.url_with_credentials
        ...
        assert proxy.relayed > 0

It runs on threads of the test process (a free port on 127.0.0.1); leaving the ``with`` block stops it. With
``source`` (an address of the loopback network, 127.0.0.2 and on) it connects to the site from that address,
so that a site telling clients apart by address (the sandbox's client pace) sees each proxy as a client.
"""

import base64
import http.client
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import urlsplit

# The headers of one hop, not passed on (RFC 9110 7.6.1), and the proxy's own.
HOP_HEADERS = {
    "connection",
    "keep-alive",
    "proxy-authorization",
    "proxy-authenticate",
    "proxy-connection",
    "te",
    "trailer",
    "transfer-encoding",
    "upgrade",
}
BANNED = (
    b"<html><head><title>403 Forbidden</title></head><body><center><h1>403 Forbidden</h1></center>"
    b"<hr><center>nginx</center></body></html>"
)


class ForwardProxy:
    def __init__(self, auth: tuple[str, str] | None = None, blocking: bool = False, source: str | None = None):
        self.auth = auth
        self.source = source  # the address it connects to the site from (127.0.0.N: a client of its own)
        self.blocking = blocking  # the site bans this proxy's address: every request gets its 403
        self.relayed = 0  # requests passed on to the site, answered
        self.blocked = 0  # requests answered with the ban
        self.refused = 0  # requests without the right Proxy-Authorization (407)
        self.times: list[float] = []  # when each request relayed or blocked came (time.monotonic)
        self.lock = threading.Lock()
        self.server = None
        self.port = 0

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def url_with_credentials(self) -> str:
        user, password = self.auth
        return f"http://{user}:{password}@127.0.0.1:{self.port}"

    def start(self) -> "ForwardProxy":
        self.server = _QuietServer(("127.0.0.1", 0), _handler(self))
        self.server.daemon_threads = True
        self.port = self.server.server_address[1]
        threading.Thread(target=self.server.serve_forever, kwargs={"poll_interval": 0.1}, daemon=True).start()
        return self

    def stop(self) -> None:
        if self.server is not None:
            self.server.shutdown()
            self.server.server_close()
            self.server = None

    def __enter__(self):
        return self.start()

    def __exit__(self, *exc):
        self.stop()

    def _authorised(self, header: str | None) -> bool:
        if self.auth is None:
            return True
        expected = base64.b64encode(":".join(self.auth).encode()).decode()
        return header == f"Basic {expected}"

    def _count(self, what: str) -> None:
        with self.lock:
            setattr(self, what, getattr(self, what) + 1)
            if what != "refused":
                self.times.append(time.monotonic())


def _handler(proxy: ForwardProxy):
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"  # keep-alive, as Scrapy uses a proxy

        def do_GET(self):
            self._relay()

        def do_POST(self):
            self._relay()

        def _relay(self):
            length = int(self.headers.get("Content-Length") or 0)
            body = self.rfile.read(length) if length else None
            if not proxy._authorised(self.headers.get("Proxy-Authorization")):
                proxy._count("refused")
                return self._answer(407, {"Proxy-Authenticate": 'Basic realm="test"'}, b"")
            if proxy.blocking:
                proxy._count("blocked")
                return self._answer(403, {"Content-Type": "text/html"}, BANNED)
            target = urlsplit(self.path)
            if target.scheme != "http" or not target.hostname:
                return self._answer(400, {}, b"a forward proxy takes absolute http:// URLs")
            headers = {name: value for name, value in self.headers.items() if name.lower() not in HOP_HEADERS}
            source = (proxy.source, 0) if proxy.source else None
            upstream = http.client.HTTPConnection(target.hostname, target.port or 80, timeout=30, source_address=source)
            try:
                path = target.path + (f"?{target.query}" if target.query else "")
                upstream.request(self.command, path or "/", body=body, headers=headers)
                response = upstream.getresponse()
                content = response.read()
                passed = {name: value for name, value in response.getheaders() if name.lower() not in HOP_HEADERS}
                passed.pop("Content-Length", None)
                status = response.status
            except OSError:
                return self._answer(502, {}, b"the site cannot be reached")
            finally:
                upstream.close()
            proxy._count("relayed")
            self._answer(status, passed, content)

        def _answer(self, status, headers, body):
            self.send_response(status)
            for name, value in headers.items():
                self.send_header(name, value)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, format, *args):  # the test's output stays its own
            pass

    return Handler


class _QuietServer(ThreadingHTTPServer):
    def handle_error(self, request, client_address) -> None:
        """A client gone mid-answer (a crawl closing its connections) is no error of the proxy's; anything
        else is printed, as socketserver does. Printed to stderr it would land in a CliRunner's output."""
        if not isinstance(sys.exc_info()[1], ConnectionError):
            super().handle_error(request, client_address)
