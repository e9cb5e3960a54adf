"""The page window: how many pages a crawl may have fetched without their progress recorded.

A page enters when the scheduler hands its request to the downloader, and leaves
when its progress is written (or it is given up, or its keyword ends). When the
window is full the farm scheduler hands out nothing more: requests wait in the
queue, where an ended keyword's requests are simply dropped, and never in the
downloader. So a crawler killed at any moment has at most FARM_PAGES_IN_FLIGHT
pages to fetch again, however fast it was going.
"""

from collections.abc import Callable

from farm.crawl.backends.base import LeaseKey


class PageWindow:
    def __init__(self, size: int, on_room: Callable[[], None] = lambda: None):
        self.size = size
        self.on_room = on_room  # called when a page leaves a full window
        self.pages: set[tuple[LeaseKey, int]] = set()  # (lease key, page)

    def __len__(self) -> int:
        return len(self.pages)

    def has_room(self, lease_key: LeaseKey, page: int) -> bool:
        """Whether the page may be fetched now (a retried page keeps its own place)."""
        return (lease_key, page) in self.pages or len(self.pages) < self.size

    def enter(self, lease_key: LeaseKey, page: int) -> None:
        self.pages.add((lease_key, page))

    def leave(self, lease_key: LeaseKey, page: int) -> None:
        was_full = len(self.pages) >= self.size
        self.pages.discard((lease_key, page))
        if was_full and len(self.pages) < self.size:
            self.on_room()

    def leave_lease(self, lease_key: LeaseKey) -> None:
        was_full = len(self.pages) >= self.size
        self.pages = {key for key in self.pages if key[0] != lease_key}
        if was_full and len(self.pages) < self.size:
            self.on_room()
