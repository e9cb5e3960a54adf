"""Headless Chromium (Debian's /usr/bin/chromium), driven over the DevTools protocol.

Opens a page and reports what a person opening it would get: console errors,
uncaught exceptions, every request the page made, and values read off the
drawn page; or a screenshot of the whole page.
"""

import base64
import json
import shutil
import subprocess
import tempfile
import time
import urllib.request
from pathlib import Path

import websocket

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
# A loaded CI machine has taken over 20 s to bring Chromium up beside the kill tests.
START_TIMEOUT = 90.0


class Browser:
    def __init__(self, width: int = 1100, height: int = 900):
        self.profile = tempfile.mkdtemp(prefix="farm-chromium-")
        log = open(Path(self.profile) / "chromium.log", "wb")  # the child keeps its own copy
        self.process = subprocess.Popen(
            [
                CHROMIUM,
                "--headless",
                "--no-sandbox",
                "--disable-gpu",
                "--no-first-run",
                "--no-default-browser-check",
                "--disable-background-networking",
                "--disable-component-update",
                "--disable-sync",
                "--remote-debugging-port=0",
                f"--user-data-dir={self.profile}",
                f"--window-size={width},{height}",
                "about:blank",
            ],
            stdout=subprocess.DEVNULL,
            stderr=log,
        )
        log.close()
        try:
            port = self._port()
            with urllib.request.urlopen(f"http://127.0.0.1:{port}/json/list", timeout=5) as answer:
                page = next(target for target in json.load(answer) if target["type"] == "page")
            self.socket = websocket.create_connection(page["webSocketDebuggerUrl"], timeout=START_TIMEOUT)
        except BaseException:
            self.close()
            raise
        self.next_id = 0
        self.events: list[dict] = []

    def _port(self) -> int:
        active = Path(self.profile) / "DevToolsActivePort"
        deadline = time.monotonic() + START_TIMEOUT
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError(f"chromium exited with {self.process.returncode}: {self._said()}")
            if active.exists() and active.read_text().strip():
                return int(active.read_text().split()[0])
            time.sleep(0.05)
        raise TimeoutError(f"chromium did not open its DevTools port in {START_TIMEOUT:.0f} s: {self._said()}")

    def _said(self) -> str:
        """The end of what Chromium wrote to stderr, for a failure's message."""
        log = Path(self.profile) / "chromium.log"
        return log.read_text(errors="replace")[-2000:] if log.exists() else ""

    def send(self, method: str, **params) -> dict:
        self.next_id += 1
        ask = self.next_id
        self.socket.send(json.dumps({"id": ask, "method": method, "params": params}))
        while True:
            message = json.loads(self.socket.recv())
            if message.get("id") == ask:
                if "error" in message:
                    raise RuntimeError(f"{method}: {message['error']}")
                return message.get("result", {})
            if "method" in message:
                self.events.append(message)

    def wait_for(self, method: str, timeout: float = START_TIMEOUT) -> dict:
        deadline = time.monotonic() + timeout
        for event in self.events:
            if event["method"] == method:
                return event
        while time.monotonic() < deadline:
            message = json.loads(self.socket.recv())
            if "method" in message:
                self.events.append(message)
                if message["method"] == method:
                    return message
        raise TimeoutError(f"no {method} within {timeout} s")

    def open(self, path: Path) -> None:
        """Load the file with the console, errors and network watched."""
        for domain in ("Page", "Runtime", "Log", "Network"):
            self.send(f"{domain}.enable")
        self.send("Page.navigate", url=path.resolve().as_uri())
        self.wait_for("Page.loadEventFired")

    def evaluate(self, expression: str):
        result = self.send("Runtime.evaluate", expression=expression, returnByValue=True)
        if "exceptionDetails" in result:
            raise RuntimeError(result["exceptionDetails"])
        return result["result"].get("value")

    def errors(self) -> list[str]:
        """Console errors and uncaught exceptions so far."""
        found = []
        for event in self.events:
            method, params = event["method"], event.get("params", {})
            if method == "Runtime.exceptionThrown":
                found.append(str(params["exceptionDetails"]))
            elif method == "Runtime.consoleAPICalled" and params.get("type") in ("error", "assert"):
                found.append(str(params.get("args")))
            elif method == "Log.entryAdded" and params["entry"].get("level") == "error":
                found.append(params["entry"].get("text", ""))
        return found

    def requests(self) -> list[str]:
        """The URL of every request the page made (its own file included)."""
        sent = (event for event in self.events if event["method"] == "Network.requestWillBeSent")
        return [event["params"]["request"]["url"] for event in sent]

    def screenshot(self, out: Path, width: int = 1100) -> None:
        """The whole page, ``width`` pixels wide, as PNG."""
        height = int(self.evaluate("document.documentElement.scrollHeight"))
        self.send("Emulation.setDeviceMetricsOverride", width=width, height=height, deviceScaleFactor=1, mobile=False)
        shot = self.send("Page.captureScreenshot", format="png", captureBeyondViewport=True)
        out.write_bytes(base64.b64decode(shot["data"]))

    def close(self) -> None:
        socket = getattr(self, "socket", None)
        if socket is not None:
            socket.close()
        self.process.terminate()
        try:
            self.process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
        shutil.rmtree(self.profile, ignore_errors=True)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


def main(argv=None):
    """python -m tests.browser PAGE.html SHOT.png: a screenshot of the whole page, 1,280 px wide."""
    import sys

    page, out = map(Path, (argv or sys.argv[1:]))
    with Browser(width=1280) as browser:
        browser.open(page)
        browser.screenshot(out, width=1280)


if __name__ == "__main__":
    main()
