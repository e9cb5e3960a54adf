"""KeptConnectionsHandler: scrapy-impersonate's download handler, with connections kept as a browser keeps them.

scrapy-impersonate opens a curl_cffi session, so a new connection and a full TLS handshake, for every
request. A browser keeps one connection a site (HTTP/2, requests multiplexed over it; keep-alive on
HTTP/1.1) and resumes its TLS sessions. This handler keeps one curl_cffi ``AsyncSession`` per (impersonation
target, proxy, proxy credentials, kind of request: one a spider), made on its first request and closed when the
crawl's downloader closes, so each identity's requests share their connections and TLS sessions.

Cookies stay farm's alone (farm.sessions.middleware and Scrapy's cookie middleware write the Cookie header):
the curl session discards every cookie an answer sets (``discard_cookies``), starts each request with its
cookie engine empty (curl_cffi clears it per transfer) and is handed no cookies of its own, so nothing is
added, kept or mixed between sessions. The session sends only the headers the request carries
(``default_headers`` off: no navigation headers of curl's on a page's fetch), in the order Chrome sends a
request of its kind (libcurl-impersonate's header order, farm.sessions.identity.header_order); libcurl adds
Host and decodes the encodings it offers. Requests without ``meta["impersonate"]`` go through Scrapy's own
HTTP/1.1 handler.

This handler is the add-on's default. ``ChromeRequestsHandler`` is the same handler with each request on a
connection of its own (libcurl's FORBID_REUSE), as scrapy-impersonate's handler sends them: a project's
choice, for a proxy that rotates its exit address a connection. docs/walls.md says what a WAF sees either way.
"""

import time

from curl_cffi import CurlHttpVersion, CurlOpt
from curl_cffi.requests import AsyncSession
from scrapy.http.headers import Headers
from scrapy.responsetypes import responsetypes
from scrapy_impersonate import ImpersonateDownloadHandler
from scrapy_impersonate.parser import CurlOptionsParser

from farm.sessions.identity import ACCEPT_ENCODING, FETCH, NAVIGATE, header_order, in_order

# (target, proxy URL or "", the proxy's credentials as curl options, the kind of request: one a spider)
SessionKey = tuple[str, str, str, str]
CLIENTS = 16  # curl handles a session may use at once: requests in flight over its connections


class KeptConnectionsHandler(ImpersonateDownloadHandler):
    reuse = True  # requests share their connections; False: each has one of its own

    def __init__(self, crawler) -> None:
        super().__init__(crawler)
        self._sessions: dict[SessionKey, AsyncSession] = {}
        self.stats = crawler.stats

    def session(self, key: SessionKey, names: list[str], curl_options: dict) -> AsyncSession:
        """The kept session of this target, proxy and kind of request, made on first use: its headers go in
        Chrome's order for that kind (``names``: the headers its requests carry), over HTTP/2 where TLS
        offers it and HTTP/1.1 in the clear, as Chrome (never an h2c upgrade)."""
        session = self._sessions.get(key)
        if session is None:
            target, proxy, _, kind = key
            options = {
                **curl_options,
                CurlOpt.HTTPHEADER_ORDER: header_order(names, kind).encode(),
                CurlOpt.HTTP_VERSION: CurlHttpVersion.V2TLS,
            }
            if not self.reuse:
                options[CurlOpt.FORBID_REUSE] = 1
            session = self._sessions[key] = AsyncSession(
                impersonate=target,
                proxy=proxy or None,
                max_clients=CLIENTS,
                curl_options=options,
                default_headers=False,
                discard_cookies=True,
                allow_redirects=False,
            )
            self.stats.inc_value("farm/connections/sessions")
        return session

    async def _download_request(self, request):
        copy = request.copy()  # CurlOptionsParser pops the proxy's credentials from the headers it reads
        curl_options = CurlOptionsParser(copy).as_dict()
        proxy = request.meta.get("proxy") or ""
        credentials = repr(sorted((int(option), value) for option, value in curl_options.items()))
        headers = [
            (name, value)
            for name, value in copy.headers.to_unicode_dict().items()
            if name.lower() not in ("accept-encoding", "proxy-authorization")
        ]
        mode = copy.headers.get(b"Sec-Fetch-Mode", b"").decode("latin-1")
        kind = FETCH if mode == "cors" else NAVIGATE
        key = (request.meta["impersonate"], proxy, credentials, kind)
        session = self.session(key, [name for name, _ in headers], curl_options)
        started = time.time()
        answer = await session.request(
            request.method,
            request.url,
            headers=in_order(headers, kind),
            data=request.body or None,
            timeout=request.meta.get("download_timeout"),
            accept_encoding=ACCEPT_ENCODING,
        )
        latency = time.time() - started
        headers_in = Headers(answer.headers.multi_items())
        headers_in.pop("Content-Encoding", None)  # curl has decoded the body
        self.stats.inc_value("impersonate/request_bytes", answer.request_size)
        self.stats.inc_value("impersonate/response_bytes", answer.header_size + answer.download_size)
        respcls = responsetypes.from_args(headers=headers_in, url=answer.url, body=answer.content)
        response = respcls(
            url=answer.url,
            status=answer.status_code,
            headers=headers_in,
            body=answer.content,
            flags=["impersonate"],
            request=request,
        )
        response.meta["download_latency"] = latency
        return response

    async def close(self) -> None:
        sessions, self._sessions = list(self._sessions.values()), {}
        for session in sessions:
            await session.close()
        await super().close()


class ChromeRequestsHandler(KeptConnectionsHandler):
    """Chrome's requests of their kind, each on a connection of its own."""

    reuse = False
