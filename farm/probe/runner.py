"""The probes of several sites at once, each a child process (farm.probe.child) ended by its deadline.

Every child starts in a temporary folder of its own, in a process group of its own (its browser's
processes with it), in the current directory with the current environment, so that it finds the same
project and settings as `scrapy crawl` run from here. Its crawl closes itself before the deadline
(farm.probe.plan); one still running at the deadline is asked to stop (SIGTERM: Scrapy's graceful
shutdown, which still writes the report) and, GRACE seconds later, killed with its whole group.
The folder goes when the probes are done; ``log_dir`` keeps each crawl's log.

The children are in sessions of their own: a Ctrl+C, a SIGTERM (a timeout, systemd) or a SIGHUP (the
terminal gone) reaches the runner alone, which then kills every child with its group and removes the
folder before it exits (SIGTERM and SIGHUP with 128 + the signal's number, as a process they kill).
"""

import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import replace
from pathlib import Path

from farm.probe.child import LOG, REPORT
from farm.probe.plan import Probe
from farm.probe.verdict import Ended, Verdict, judge

GRACE = 5.0  # seconds between SIGTERM and SIGKILL at the deadline
STDERR_TAIL = 4000  # characters of a child's stderr kept for a verdict
STOPPING = (signal.SIGTERM, signal.SIGHUP)  # signals that end the runner as Ctrl+C does, its children with it


def run_probes(probes: list[Probe], log_dir: Path | None = None, python: str = sys.executable) -> list[Verdict]:
    """Each probe's verdict, in the order given; all run at once, each within its ``timeout``."""
    with _stopped_by(STOPPING), tempfile.TemporaryDirectory(prefix="farm-probe-") as tmp:
        children = []
        try:
            for probe in probes:
                children.append(_start(probe, Path(tmp) / probe.name, python))
            verdicts = []
            for probe, folder, process, deadline in children:
                ended = _wait(process, deadline, folder)
                verdict = judge(probe.site, _report(folder), ended, probe.timeout)
                verdicts.append(replace(verdict, identity=probe.identity) if probe.identity else verdict)
                if log_dir is not None and (folder / LOG).exists():
                    log_dir.mkdir(parents=True, exist_ok=True)
                    shutil.copyfile(folder / LOG, log_dir / f"{probe.name}.log")
            return verdicts
        except BaseException:  # Ctrl+C, SIGTERM: the children, in sessions of their own, did not get it
            for _, _, process, _ in children:
                _signal_group(process, signal.SIGKILL)
                process.wait()
            raise


@contextmanager
def _stopped_by(signums: tuple[int, ...]) -> Iterator[None]:
    """Each of ``signums`` raises SystemExit(128 + signum) meanwhile (once: a second is ignored while the
    children are killed), so that the runner's cleanup runs. Only on the main thread, where Python
    takes signals; elsewhere nothing changes."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def stop(signum, frame):
        for each in signums:
            signal.signal(each, signal.SIG_IGN)
        print(f"farm probe: stopped by {signal.Signals(signum).name}", file=sys.stderr)
        raise SystemExit(128 + signum)

    previous = {signum: signal.signal(signum, stop) for signum in signums}
    try:
        yield
    finally:
        for signum, handler in previous.items():
            signal.signal(signum, handler)


def _start(probe: Probe, folder: Path, python: str):
    folder.mkdir()
    with open(folder / "stderr.txt", "wb") as err:
        process = subprocess.Popen(
            [python, "-m", "farm.probe.child", probe.site, probe.city, probe.job, str(probe.timeout), str(folder)]
            + ([] if probe.proxy is None else [str(probe.proxy)]),
            stdin=subprocess.DEVNULL,
            stdout=err,
            stderr=err,
            start_new_session=True,  # its own process group: the browser ends with it
        )
    return probe, folder, process, time.monotonic() + probe.timeout


def _wait(process: subprocess.Popen, deadline: float, folder: Path) -> Ended:
    try:
        code = process.wait(max(0.0, deadline - time.monotonic()))
    except subprocess.TimeoutExpired:
        _signal_group(process, signal.SIGTERM)
        try:
            process.wait(GRACE)
        except subprocess.TimeoutExpired:
            pass
        code = None
    _signal_group(process, signal.SIGKILL)  # whatever of it is left: a browser it could not close
    process.wait()
    stderr = (folder / "stderr.txt").read_bytes()[-STDERR_TAIL:].decode("utf-8", errors="replace")
    return Ended(code, stderr)


def _signal_group(process: subprocess.Popen, signum: int) -> None:
    try:
        os.killpg(process.pid, signum)
    except ProcessLookupError:  # the group has ended
        pass


def _report(folder: Path) -> dict | None:
    try:
        return json.loads((folder / REPORT).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
