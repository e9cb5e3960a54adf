"""SandboxProcess: a sandbox in a child process, for tests and benchmarks (stdlib client only).

    with SandboxProcess(seed=1, postings=(200, 200)) as sb:
        os.environ["FARM_QCWY_BASE_URL"] = sb.url
        ...
        assert sb.counts()[("qcwy", "010000", "python", 1)] == 1

The child is `python -m farm.sandbox --port 0 …`; its printed URL is read with a deadline, and `stop()` (also
run on leaving the `with` block, however it is left) terminates it and waits, killing it if it lingers.
"""

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


class SandboxProcess:
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
        host="127.0.0.1",
        python=sys.executable,
    ):
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

    # --- control client -------------------------------------------------------------------------

    def _call(self, path, body=None):
        data = None if body is None else json.dumps(body).encode()
        request = urllib.request.Request(
            self.url + path,
            data=data,
            method="GET" if body is None else "POST",
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
