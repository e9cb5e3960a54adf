"""The TLS fingerprint of the machine's Chromium and of curl_cffi's Chrome targets, read by a public reader.

Each client connects to a local TCP listener (https://localhost:PORT/), which reads its ClientHello and closes;
FoxIO's JA4 reader (`ja4plus` on PyPI, with scapy, which it imports) computes each one's JA4. The identity's
TLS target (farm.sessions.identity) should have the engine's JA4 (docs/walls.md). ja4plus is not one of farm's
dependencies: install it where this runs (`pip install --target DIR ja4plus scapy`, then PYTHONPATH=DIR).

    python -m bench.ja4_check [TARGET ...]       (default: the newest three Chrome targets)
"""

import asyncio
import socket
import sys
import threading

from farm.sessions.browser import find_chromium
from farm.sessions.identity import chrome_targets


class Listener:
    """A TCP listener on 127.0.0.1 that keeps the first TLS record of each connection."""

    def __init__(self):
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(16)
        self.port = self.sock.getsockname()[1]
        self.hellos: list[bytes] = []
        threading.Thread(target=self._serve, daemon=True).start()

    def _serve(self):
        while True:
            conn, _ = self.sock.accept()
            conn.settimeout(3)
            data = b""
            try:
                while len(data) < 5 or len(data) < 5 + int.from_bytes(data[3:5], "big"):
                    chunk = conn.recv(65536)
                    if not chunk:
                        break
                    data += chunk
            except OSError:
                pass
            self.hellos.append(data)
            conn.close()


def ja4_of(hello: bytes) -> str | None:
    from ja4plus.fingerprinters.ja4 import generate_ja4
    from ja4plus.utils.tls_utils import parse_tls_handshake

    return generate_ja4(parse_tls_handshake(hello))  # the record as it came, its header included


async def _chromium(path: str, url: str) -> None:
    from playwright.async_api import Error, async_playwright

    async with async_playwright() as playwright:
        browser = await playwright.chromium.launch(executable_path=path, args=["--no-sandbox"])
        try:
            await (await browser.new_page()).goto(url, timeout=5000)
        except Error:  # the listener answers no TLS: the ClientHello is all it wants
            pass
        finally:
            await browser.close()


def _curl(target: str, url: str) -> None:
    from curl_cffi import requests
    from curl_cffi.curl import CurlError

    try:
        requests.get(url, impersonate=target, timeout=3)
    except (CurlError, requests.RequestsError):
        pass


def run(targets: list[str]) -> list[tuple[str, list[str]]]:
    listener = Listener()
    url = f"https://localhost:{listener.port}/"
    clients = []
    chromium = find_chromium()
    if chromium is not None:
        clients.append((f"Chromium at {chromium}", lambda: asyncio.run(_chromium(chromium, url))))
    clients += [(f"curl_cffi {target}", lambda target=target: _curl(target, url)) for target in targets]
    seen = []
    for name, connect in clients:
        before = len(listener.hellos)
        connect()
        seen.append((name, sorted({ja4 for hello in listener.hellos[before:] if (ja4 := ja4_of(hello))})))
    return seen


def main(argv: list[str]) -> None:
    for name, ja4s in run(argv or chrome_targets()[-3:]):
        print(f"  {name:<40} {', '.join(ja4s) or 'no ClientHello'}", flush=True)


if __name__ == "__main__":
    main(sys.argv[1:])
