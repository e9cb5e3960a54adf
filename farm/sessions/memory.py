"""The memory the crawl's browser holds: the proportional set size of Chromium's processes below this one and
of Playwright's driver, summed (farm.sessions.browser measures it every few seconds of passes and at the
crawl's close: ``farm/browser/rss_max``)."""

import os
from pathlib import Path

# seconds between two readings (farm.sessions.browser): a reading walks /proc and every page table of Chromium's
# processes on the crawl's thread, and read after every pass it took a seventh of a fast crawl's time
MEASURE_EVERY = 5.0
BROWSER_PROCESSES = ("chrom", "headless", "node")  # their /proc/PID/comm: Chromium's processes, Playwright's driver


def browser_pss() -> int:
    """The bytes the browser's processes below this one hold (PSS)."""
    return sum(_pss(pid) for pid in _descendants(os.getpid()) if _comm(pid).startswith(BROWSER_PROCESSES))


def _descendants(root: int) -> list[int]:
    children: dict[int, list[int]] = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            ppid = int((entry / "stat").read_text().rsplit(")", 1)[1].split()[1])
        except (OSError, IndexError, ValueError):
            continue
        children.setdefault(ppid, []).append(int(entry.name))
    found, todo = [], list(children.get(root, []))
    while todo:
        pid = todo.pop()
        found.append(pid)
        todo.extend(children.get(pid, []))
    return found


def _comm(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/comm").read_text().strip()
    except OSError:
        return ""


def _pss(pid: int) -> int:
    """A process's proportional set size: its own pages, and its share of those it shares (Chromium's
    processes share most of theirs, so their resident sizes added up would count them many times)."""
    try:
        for line in Path(f"/proc/{pid}/smaps_rollup").read_text().splitlines():
            if line.startswith("Pss:"):
                return int(line.split()[1]) * 1024
    except (OSError, ValueError):
        pass
    return 0
