"""The keyword API's outcome counts (its stats, as a crawl has Scrapy's), logged when it stops."""

import threading
from collections import Counter


class Outcomes:
    """Named counts, added to from the server's worker threads and its event loop."""

    def __init__(self):
        self._counts: Counter[str] = Counter()
        self._lock = threading.Lock()

    def add(self, name: str, n: int = 1) -> None:
        with self._lock:
            self._counts[name] += n

    def snapshot(self) -> dict[str, int]:
        with self._lock:
            return dict(sorted(self._counts.items()))

    def line(self) -> str:
        counts = self.snapshot()
        return ", ".join(f"{name} {n}" for name, n in counts.items()) or "no requests"
