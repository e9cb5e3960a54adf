"""The probes of several sites at once, each a child process (farm.probe.child) ended by its deadline.

Every child starts in a temporary folder of its own, in a process group of its own (its browser's
processes with it), in the current directory with the current environment, so that it finds the same
project and settings as `scrapy crawl` run from here. Its crawl closes itself before the deadline
(farm.probe.plan); one still running at the deadline is asked to stop (SIGTERM: Scrapy's graceful
shutdown, which still writes the report) and, GRACE seconds later, killed with its whole group.
The folder goes when the probes are done; ``log_dir`` keeps each crawl's log.
"""

import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from dataclasses import replace
from pathlib import Path

from farm.probe.child import LOG, REPORT
from farm.probe.plan import Probe
from farm.probe.verdict import Ended, Verdict, judge

GRACE = 5.0  # seconds between SIGTERM and SIGKILL at the deadline
STDERR_TAIL = 4000  # characters of a child's stderr kept for a verdict


def run_probes(probes: list[Probe], log_dir: Path | None = None, python: str = sys.executable) -> list[Verdict]:
    """Each probe's verdict, in the order given; all run at once, each within its ``timeout``."""
    with tempfile.TemporaryDirectory(prefix="farm-probe-") as tmp:
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
        except BaseException:  # Ctrl+C: the children, in sessions of their own, did not get it
            for _, _, process, _ in children:
                _signal_group(process, signal.SIGKILL)
                process.wait()
            raise


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
