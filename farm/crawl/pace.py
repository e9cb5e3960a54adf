"""A site's pace: when the next request to it may go.

FARM_<SITE>_RATE requests per second (0: no limit), each gap jittered between
half and one and a half times its mean as Scrapy's RANDOMIZE_DOWNLOAD_DELAY does,
so that the requests do not tick like a clock. Blocks and outages push the gap
up (doubling from FARM_BLOCK_BASE_DELAY to FARM_BLOCK_MAX_DELAY, and at least a
Retry-After); good answers ease it back by halves.

The farm scheduler keeps the pace: a request waits in the queue until its turn,
never in the downloader, so nothing piles up where it can't be taken back.
"""

import random
import time
from collections.abc import Callable


class SitePace:
    def __init__(
        self,
        rate: float,
        base_delay: float,
        max_delay: float,
        clock: Callable[[], float] = time.monotonic,
        jitter: Callable[[], float] = random.random,
    ):
        if rate < 0:
            raise ValueError(f"a site's rate must be >= 0 requests per second (0: no limit), got {rate}")
        self.interval = 1 / rate if rate > 0 else 0.0
        self.base_delay = base_delay
        self.max_delay = max_delay
        self.penalty = 0.0  # the back-off gap after blocks and outages
        self.next_at = 0.0
        self.clock = clock
        self.jitter = jitter

    @property
    def gap(self) -> float:
        return max(self.interval, self.penalty)

    def wait(self) -> float:
        """Seconds until the next request may go (0: now)."""
        if not self.next_at:
            return 0.0
        return max(0.0, self.next_at - self.clock())

    def taken(self) -> None:
        """A request goes now: the next one waits a gap."""
        gap = self.gap
        self.next_at = self.clock() + gap * (0.5 + self.jitter()) if gap else 0.0

    def back_off(self, retry_after: float | None = None) -> None:
        """The site blocked us or failed: wait longer, starting now."""
        penalty = min(self.max_delay, max(self.base_delay, self.penalty * 2))
        if retry_after is not None:
            penalty = max(penalty, min(self.max_delay, retry_after))
        self.penalty = penalty
        self.next_at = max(self.next_at, self.clock() + penalty)

    def eased(self) -> None:
        """A good answer: halve the back-off."""
        if self.penalty:
            self.penalty = self.penalty / 2 if self.penalty / 2 >= self.base_delay / 2 else 0.0
