"""What one pass of a wall costs the browser: 51job's wall passed again and again in farm's Browser, against a
sandbox with its walls up, a pass at a time or several at once.

The figures are passes a second, the median pass, and the CPU seconds a pass costs each kind of Chromium
process (its browser process, renderers, GPU and utility processes) and Playwright's driver, read from
/proc before and after (the first pass, which starts the browser, left out).

    python -m bench.walls_passes [--passes N] [--at-once N]
"""

import argparse
import asyncio
import os
import statistics
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path

from farm.sandbox.testing import SandboxProcess
from farm.sessions.browser import Browser, find_chromium
from farm.sessions.disguise import crawl_identity
from farm.sessions.wall import Wall

try:
    from farm.sessions.memory import BROWSER_PROCESSES, _comm, _descendants
except ImportError:  # farm before the browser's memory had a module of its own: the same bench at an earlier commit
    from farm.sessions.browser import BROWSER_PROCESSES, _comm, _descendants  # type: ignore[attr-defined,no-redef]

TICK = os.sysconf("SC_CLK_TCK")


def cpu_by_kind() -> dict[str, float]:
    """CPU seconds so far of the browser's processes below this one, by kind (Chromium's --type)."""
    seconds: dict[str, float] = {}
    for pid in _descendants(os.getpid()):
        comm = _comm(pid)
        if not comm.startswith(BROWSER_PROCESSES):
            continue
        try:
            spent = cpu_seconds(pid)
            words = Path(f"/proc/{pid}/cmdline").read_text().replace("\0", " ").split()
        except OSError:
            continue
        kind = next((w[len("--type=") :] for w in words if w.startswith("--type=")), comm)
        kind += next((" " + w.split("=", 1)[1] for w in words if w.startswith("--utility-sub-type=")), "")
        seconds[kind] = seconds.get(kind, 0.0) + spent
    return seconds


def cpu_seconds(pid: int) -> float:
    """The CPU seconds (user and system) process ``pid`` has spent so far, from /proc; OSError once it is gone."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / TICK


class TreeCpu:
    """The CPU seconds a process and every process below it spend, read from /proc every ``every`` seconds
    while it runs, by kind (``kind_of``). A process's own figure ends with it; RUSAGE_CHILDREN would count only
    the processes reaped by their parents up the tree, and the crawl leaves its browser's processes to die
    with it unreaped, so their CPU would be missing."""

    def __init__(self, root: int, kind_of: Callable[[int], str], every: float = 0.1):
        self.root, self.kind_of, self.every = root, kind_of, every
        self._spent: dict[int, tuple[str, float]] = {}
        self._done = threading.Event()
        self._thread = threading.Thread(target=self._watch, daemon=True)
        self._thread.start()

    def stop(self) -> dict[str, float]:
        """The seconds each kind spent, as last read."""
        self._done.set()
        self._thread.join()
        seconds: dict[str, float] = {}
        for kind, spent in self._spent.values():
            seconds[kind] = seconds.get(kind, 0.0) + spent
        return seconds

    def _watch(self) -> None:
        kinds: dict[int, str] = {}
        while True:
            for pid in [self.root, *_descendants(self.root)]:
                try:
                    if pid not in kinds:
                        kinds[pid] = self.kind_of(pid)
                    self._spent[pid] = (kinds[pid], cpu_seconds(pid))
                except OSError:
                    continue
            if self._done.wait(self.every):
                return


async def measure(passes: int, at_once: int) -> list[tuple[str, float, str]]:
    with SandboxProcess(seed=31, postings=(500, 500), walls=True) as sandbox:
        identity = crawl_identity("chrome", find_chromium())
        browser = Browser("", max(at_once, 1), 30.0)

        def wall(n: int) -> Wall:
            url = f"{sandbox.url}/pc/search?keyword=python{n}&searchType=2&jobArea=010000"
            return Wall("qcwy_acw_sc__v2", url, ("acw_sc__v2",), data=("/api/job/search-pc",))

        times: list[float] = []

        async def one(n: int) -> None:
            started = time.monotonic()
            await browser.earn(wall(n), identity, "")
            times.append(time.monotonic() - started)

        try:
            await browser.earn(wall(0), identity, "")  # the browser started
            before, started = cpu_by_kind(), time.monotonic()
            for n in range(1, passes + 1, at_once):
                await asyncio.gather(*(one(n + i) for i in range(min(at_once, passes + 1 - n))))
            elapsed, after = time.monotonic() - started, cpu_by_kind()
        finally:
            await browser.close()
    rows = [
        (f"passes a second, {at_once} at once", passes / elapsed, "passes/s"),
        ("a pass, median", statistics.median(times), "s"),
        ("CPU a pass, every process of the browser", sum(after.values()) - sum(before.values()), "s"),
    ]
    rows[-1] = (rows[-1][0], rows[-1][1] / passes, "s")
    for kind in sorted(after):
        rows.append((f"  {kind}", (after[kind] - before.get(kind, 0.0)) / passes, "s"))
    rows.append(("load average (1 min) at the end", os.getloadavg()[0], ""))
    return rows


def main(argv: list[str]) -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--passes", type=int, default=20)
    parser.add_argument("--at-once", type=int, default=1)
    args = parser.parse_args(argv)
    for name, value, unit in asyncio.run(measure(args.passes, args.at_once)):
        print(f"  {name:<60} {value:>8.3f}  {unit}", flush=True)


if __name__ == "__main__":
    main(sys.argv[1:])
