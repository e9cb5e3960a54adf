"""uvicorn's HTTP protocol with a deadline for reading each request, and a bound on its head.

uvicorn times a connection out only between requests (``timeout_keep_alive``): a
client that sends half a request head, or half a body, holds its connection and a
slot of ``limit_concurrency`` for good. Here every request must arrive whole, head and
body, within ``read_timeout`` seconds (from the connection, or the request's first
byte): else 408, and the connection is closed. A head over ``max_head`` bytes gets 431.
"""

import logging

from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol

from farm.errors import HeadTooLarge

logger = logging.getLogger(__name__)

# bytes of request line and headers: a listing may name 1,000 keywords to skip in its query (30 KB)
MAX_HEAD = 64 * 1024


class DeadlineProtocol(HttpToolsProtocol):
    """HttpToolsProtocol, its requests read within ``read_timeout`` and their heads within ``max_head``."""

    read_timeout = 10.0
    max_head = MAX_HEAD

    def connection_made(self, transport) -> None:
        super().connection_made(transport)
        self._deadline = None
        self._head = None  # bytes received of the head being read; None when no head is being read
        self._arm()

    def connection_lost(self, exc) -> None:
        self._disarm()
        super().connection_lost(exc)

    def data_received(self, data: bytes) -> None:
        if self._deadline is None:  # the first byte of the next request on a kept-alive connection
            self._arm()
        super().data_received(data)
        if self._head is not None and not self.transport.is_closing():
            self._head += len(data)
            if self._head > self.max_head:
                self._refuse(431, f"request head over {self.max_head} bytes")

    def on_message_begin(self) -> None:
        super().on_message_begin()
        self._head = 0
        self._parsed = 0  # bytes of URL and headers parsed: a whole head may come in one read

    def on_url(self, url: bytes) -> None:
        self._count(len(url))
        super().on_url(url)

    def on_header(self, name: bytes, value: bytes) -> None:
        self._count(len(name) + len(value) + 4)
        super().on_header(name, value)

    def _count(self, size: int) -> None:
        self._parsed += size
        if self._parsed > self.max_head:
            raise HeadTooLarge  # the parser stops, and uvicorn answers 400: send_400_response makes it 431

    def send_400_response(self, msg: str) -> None:
        if self._head is not None and self._parsed > self.max_head:
            self._refuse(431, f"request head over {self.max_head} bytes")
        else:
            super().send_400_response(msg)

    def on_headers_complete(self) -> None:
        self._head = None
        super().on_headers_complete()

    def on_message_complete(self) -> None:
        super().on_message_complete()
        self._disarm()

    def _arm(self) -> None:
        self._disarm()
        self._deadline = self.loop.call_later(self.read_timeout, self._expired)

    def _disarm(self) -> None:
        if self._deadline is not None:
            self._deadline.cancel()
            self._deadline = None

    def _expired(self) -> None:
        self._deadline = None
        if self.transport.is_closing():
            return
        if self.cycle is None or self.cycle.response_complete:
            if self._head is None:  # connected, or kept alive, and nothing sent: just close
                self.transport.close()
                return
            self._refuse(408, f"request head not read within {self.read_timeout:g}s")
        elif not self.cycle.more_body or self.cycle.response_started:
            return  # read whole; the app is answering
        else:
            # the app waits for the rest of the body: it is told the client went away, and answers nothing
            self.cycle.disconnected = True
            self.cycle.message_event.set()
            self._refuse(408, f"request body not read within {self.read_timeout:g}s")

    def _refuse(self, status: int, why: str) -> None:
        self._disarm()
        peer = self.client[0] if self.client else "?"
        logger.warning("%d from %s: %s; connection closed", status, peer, why)
        reason = {408: b"Request Timeout", 431: b"Request Header Fields Too Large"}[status]
        body = b'{"detail":"%s"}' % why.encode("ascii", "backslashreplace")
        self.transport.write(
            b"HTTP/1.1 %d %s\r\ncontent-type: application/json\r\ncontent-length: %d\r\n"
            b"connection: close\r\n\r\n%s" % (status, reason, len(body), body)
        )
        self.transport.close()
