"""SandboxProcess: a sandbox in a child process, for tests and benchmarks (stdlib client only); SandboxThread:
one in this process, on a thread of its own, for tests that spawn no process.

    with SandboxProcess(seed=1, postings=(200, 200)) as sb:
        os.environ[f"FARM_{site.upper()}_BASE_URL"] = sb.url
        ...
        assert sb.counts()[(site, city_code, "python", 1)] == 1

    with SandboxThread(Sandbox(seed=1, walls=WallConfig(session_requests=5), clock=fake_clock)) as sb:
        ...

The child is `python -m farm.sandbox --port 0 …`; its printed URL is read with a deadline, and `stop()` (also
run on leaving the `with` block, however it is left) terminates it and waits, killing it if it lingers.
Both speak the /_sandbox/ control endpoints through the same methods.
"""

import asyncio
import json
import os
import subprocess
import sys
import tempfile
import threading
import urllib.parse
import urllib.request

STARTUP_TIMEOUT = 20.0
READY_PREFIX = "farm sandbox listening on "


class Control:
    """The /_sandbox/ control endpoints of the sandbox at `self.url`."""

    url: str | None = None

    def _call(self, path, body=None, method=None):
        data = None if body is None else json.dumps(body).encode()
        request = urllib.request.Request(
            self.url + path,
            data=data,
            method=method or ("GET" if body is None else "POST"),
            headers={"Content-Type": "application/json"},
        )
        with urllib.request.urlopen(request, timeout=30) as response:
            return json.loads(response.read())

    def health(self):
        return self._call("/_sandbox/health")

    def counts(self):
        """{(site, city, keyword, page): times served successfully}."""
        rows = self._call("/_sandbox/counts")["counts"]
        return {(r["site"], r["city"], r["keyword"], r["page"]): r["count"] for r in rows}

    def timeline(self):
        """{unix second: search requests that arrived in it (served, faulted or dropped)}."""
        return {second: n for second, n in self._call("/_sandbox/timeline")["arrivals"]}

    def reset(self):
        return self._call("/_sandbox/reset", {})

    def truth(self, site, city, keyword, page_size=None):
        query = {"site": site, "city": city, "keyword": keyword}
        if page_size is not None:
            query["page_size"] = page_size
        return self._call("/_sandbox/truth?" + urllib.parse.urlencode(query))

    def set_faults(self, **config):
        """Replace the fault config: rate, seed, kinds, keywords, slow_ms, retry_after, stale_totals,
        hostile_rate."""
        return self._call("/_sandbox/faults", config)

    def faults(self):
        return self._call("/_sandbox/faults")

    def start_outage(self, seconds, after_pages=None):
        """Drop every search connection for `seconds`, from now or once `after_pages` more pages are served."""
        body = {"seconds": seconds} if after_pages is None else {"seconds": seconds, "after_pages": after_pages}
        return self._call("/_sandbox/outage", body)

    def outage(self):
        """{"active", "until", "remaining", "seconds", "dropped", "after_pages", "pages_served"}."""
        return self._call("/_sandbox/outage")

    def walls(self):
        """{"sessions_issued", "walls_served", "expired", "with_session", "sliders", "security_pages", "config"}."""
        return self._call("/_sandbox/walls")

    def set_walls(self, **config):
        """Raise the walls, or replace their config: sites, session_seconds, session_requests, slider_rate,
        slider_keywords, seed, refuse_sessions, hang."""
        return self._call("/_sandbox/walls", config)

    def reset_walls(self):
        """Clear the wall counts."""
        return self._call("/_sandbox/walls", method="DELETE")

    def strange_walls(self):
        """{"counts": {"<site>/<what>": n}, "config"} of the strange walls (strangewalls.py)."""
        return self._call("/_sandbox/strangewalls")

    def set_strange_walls(self, **config):
        """Raise the strange walls, or replace their config: sites, forms, session_seconds, session_requests,
        slider_keywords, seed."""
        return self._call("/_sandbox/strangewalls", config)

    def set_pace(self, **config):
        """Hold each client (address) to a pace: rate, burst, strikes, ban_seconds, rates (address -> rate)."""
        return self._call("/_sandbox/pace", config)

    def pace(self):
        """{"config", "clients": {address: {"served", "too_fast", "banned", "bans", "fastest", "first", "last"}}}."""
        return self._call("/_sandbox/pace")

    def requests(self, last=20):
        """The last search requests: [{"site", "method", "path", "headers": [[name, value], …]}, …]."""
        return self._call(f"/_sandbox/requests?last={last}")["requests"]

    def identity(self):
        """{"requests", "incoherent", "reasons", "examples", "connections", "requests_per_connection",
        "most_on_a_connection"}: the search requests judged as the Chrome they claim (coherence.py)."""
        return self._call("/_sandbox/identity")


class SandboxProcess(Control):
    def __init__(
        self,
        seed=0,
        postings=None,
        fault_rate=None,
        fault_kinds=None,
        fault_seed=None,
        fail_keywords=None,
        slow_ms=None,
        retry_after=None,
        stale_totals=None,
        hostile_rate=None,
        outage_after_pages=None,
        outage_seconds=None,
        walls=None,
        host="127.0.0.1",
        python=sys.executable,
        site_packages=(),
    ):
        """`walls`: a walls.WallConfig to raise the walls with, True for the default one (None: no walls).
        `site_packages`: site packages served beside the registered sites (``--site-package``)."""
        args = [python, "-m", "farm.sandbox", "--host", host, "--port", "0", "--seed", str(seed)]
        if postings is not None:
            args += ["--postings", f"{postings[0]}:{postings[1]}"]
        for flag, value in (
            ("--fault-rate", fault_rate),
            ("--fault-seed", fault_seed),
            ("--slow-ms", slow_ms),
            ("--retry-after", retry_after),
            ("--stale-totals", stale_totals),
            ("--hostile-rate", hostile_rate),
            ("--outage-after-pages", outage_after_pages),
            ("--outage-seconds", outage_seconds),
        ):
            if value is not None:
                args += [flag, str(value)]
        if fault_kinds:
            args += ["--fault-kinds", ",".join(fault_kinds)]
        for keyword, kind in (fail_keywords or {}).items():
            args += ["--fail-keyword", f"{keyword}={kind}"]
        if walls is not None:
            args += wall_args(walls)
        for package in site_packages:
            args += ["--site-package", package]
        self.args = args
        self.proc = None
        self.url = None

    def start(self):
        # stderr goes to a file: an unread pipe would block a chatty child once its buffer filled.
        self._errors = tempfile.TemporaryFile()
        self.proc = subprocess.Popen(
            self.args,
            stdout=subprocess.PIPE,
            stderr=self._errors,
            text=True,
            env={**os.environ, "PYTHONUNBUFFERED": "1"},
        )
        line = self._first_line()
        if not line.startswith(READY_PREFIX):
            self.stop()
            raise RuntimeError(f"sandbox did not start: {line!r}\n{self.stderr()[-2000:]}")
        self.url = line[len(READY_PREFIX) :].strip()
        return self

    def _first_line(self):
        # readline() can block forever on a wedged child; read it on a thread and wait with a deadline.
        box = []
        reader = threading.Thread(target=lambda: box.append(self.proc.stdout.readline()), daemon=True)
        reader.start()
        reader.join(STARTUP_TIMEOUT)
        return box[0] if box else ""

    def stderr(self):
        """What the child wrote to stderr so far (for failure messages)."""
        self._errors.seek(0)
        return self._errors.read().decode(errors="replace")

    def stop(self):
        if self.proc is None:
            return
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self.proc.stdout.close()

    def __enter__(self):
        return self.start()

    def __exit__(self, *exc):
        self.stop()


def wall_args(config):
    """The `farm sandbox` options that raise walls with this walls.WallConfig (True: the default config)."""
    if config is True:
        return ["--walls"]
    args = ["--walls", "--wall-sites", ",".join(config.sites), "--wall-seed", str(config.seed)]
    args += ["--session-seconds", str(config.session_seconds), "--session-requests", str(config.session_requests)]
    args += ["--slider-rate", str(config.slider_rate)]
    for keyword in config.slider_keywords:
        args += ["--slider-keyword", keyword]
    return args


class SandboxThread(Control):
    """A Sandbox served on a free port by an event loop on a thread of this process; `stop()` (also on leaving
    the `with` block) stops serving and joins the thread. The test keeps the Sandbox object: its clock, walls
    and counts are the ones served."""

    def __init__(self, sandbox, host="127.0.0.1"):
        self.sandbox, self.host = sandbox, host
        self._loop = self._thread = self._runner = None

    def start(self):
        from .server import start  # aiohttp is imported only by those who serve in-process

        ready, failed = threading.Event(), []
        self._loop = asyncio.new_event_loop()

        async def serve():
            self._runner, port = await start(self.sandbox, self.host, 0)
            self.url = f"http://{self.host}:{port}"

        def run():
            asyncio.set_event_loop(self._loop)
            try:
                self._loop.run_until_complete(serve())
            except Exception as exc:  # reported by start() on the caller's thread
                failed.append(exc)
                ready.set()
                return
            ready.set()
            self._loop.run_forever()

        self._thread = threading.Thread(target=run, name="sandbox", daemon=True)
        self._thread.start()
        if not ready.wait(STARTUP_TIMEOUT) or failed:
            self.stop()
            raise RuntimeError(f"sandbox did not start: {failed[0] if failed else 'timed out'}")
        return self

    def stop(self):
        if self._thread is None:
            return
        if self._runner is not None:
            asyncio.run_coroutine_threadsafe(self._runner.cleanup(), self._loop).result(STARTUP_TIMEOUT)
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(STARTUP_TIMEOUT)
        self._loop.close()
        self._thread = None

    def __enter__(self):
        return self.start()

    def __exit__(self, *exc):
        self.stop()
