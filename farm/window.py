"""The page window: how many pages a crawl may have fetched without their progress recorded.

A page enters when its request goes to the downloader and leaves when its
progress is written (or its keyword ends). When the window is full, the lease
middleware holds new requests back, and with them Scrapy's downloader. So a
crawler killed at any moment has at most FARM_PAGES_IN_FLIGHT pages to fetch
again, however fast it was going.
"""

from collections import deque

from scrapy.utils.defer import maybe_deferred_to_future
from twisted.internet.defer import Deferred


class PageWindow:
    def __init__(self, size: int):
        self.size = size
        self.pages: set[tuple[tuple[int, int], int]] = set()  # (lease key, page)
        self._waiting: deque[Deferred] = deque()

    def __len__(self):
        return len(self.pages)

    async def enter(self, lease_key, page):
        """Return once the page has a place in the window (a retried page keeps its own)."""
        key = (lease_key, page)
        while key not in self.pages and len(self.pages) >= self.size:
            room = Deferred()
            self._waiting.append(room)
            await maybe_deferred_to_future(room)
        self.pages.add(key)

    def leave(self, lease_key, page):
        self.pages.discard((lease_key, page))
        self._wake()

    def leave_lease(self, lease_key):
        self.pages = {key for key in self.pages if key[0] != lease_key}
        self._wake()

    def _wake(self):
        for _ in range(min(len(self._waiting), self.size - len(self.pages))):
            self._waiting.popleft().callback(None)
