"""Tinyproxy (Debian's `tinyproxy`, a maintained C forward proxy farm did not write) run by a test.

    with TinyProxy(source="127.0.0.3") as proxy:
        FARM_PROXIES = proxy.url

It listens on a free port of 127.0.0.1 and, with ``source``, connects to the site from that address (its
``Bind``), so that a site telling clients apart by address sees each proxy as a client of its own. It runs
in the foreground of a child process with a configuration file of its own; leaving the ``with`` block
stops it. ``available()`` says whether the binary is installed (the tests that use it skip otherwise).
"""

import shutil
import socket
import subprocess
import tempfile
import time
from pathlib import Path

STARTUP_TIMEOUT = 10.0


def available() -> bool:
    return shutil.which("tinyproxy") is not None


class TinyProxy:
    def __init__(self, source: str | None = None):
        self.source = source
        self.port = 0
        self.process: subprocess.Popen | None = None
        self.folder: tempfile.TemporaryDirectory | None = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def start(self) -> "TinyProxy":
        with socket.socket() as sock:  # a free port (tinyproxy takes none of its own choosing)
            sock.bind(("127.0.0.1", 0))
            self.port = sock.getsockname()[1]
        self.folder = tempfile.TemporaryDirectory(prefix="farm-tinyproxy-")
        config = Path(self.folder.name) / "tinyproxy.conf"
        lines = [
            f"Port {self.port}",
            "Listen 127.0.0.1",
            "Timeout 30",
            "MaxClients 64",
            "LogLevel Error",
            "Allow 127.0.0.1",
            "DisableViaHeader Yes",
        ]
        if self.source:
            lines.append(f"Bind {self.source}")
        config.write_text("\n".join(lines) + "\n")
        self.process = subprocess.Popen(
            ["tinyproxy", "-d", "-c", str(config)], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
        )
        deadline = time.monotonic() + STARTUP_TIMEOUT
        while True:
            try:
                socket.create_connection(("127.0.0.1", self.port), timeout=1).close()
                return self
            except OSError:
                if self.process.poll() is not None or time.monotonic() > deadline:
                    self.stop()
                    raise RuntimeError(f"tinyproxy did not start listening on port {self.port}") from None
                time.sleep(0.05)

    def stop(self) -> None:
        if self.process is not None:
            self.process.terminate()
            try:
                self.process.wait(5)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
            self.process = None
        if self.folder is not None:
            self.folder.cleanup()
            self.folder = None

    def __enter__(self) -> "TinyProxy":
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()
