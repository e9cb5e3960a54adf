"""When a site refuses the crawl as a whole: a pure rule over the answers a crawl gets.

A wall farm cannot pass (a slider, a puzzle), or an answer it does not understand, is retried with the
site's back-off and leaves its keyword partial. When nothing but such refusals has come from the site for
FARM_SITE_REFUSED_AFTER seconds (at least ``least`` of them, no page between), carrying on only climbs the
back-off for every keyword in turn; the crawl instead concludes that the site refuses it, says so with the
refusals by shape, and ends (farm.middlewares.blocks).
"""

from collections import Counter

LEAST_REFUSALS = 6


class RefusalWatch:
    def __init__(self, after: float, least: int = LEAST_REFUSALS):
        self.after = after  # seconds; 0: never conclude
        self.least = least
        self.since: float | None = None  # the first refusal since the last page
        self.shapes: Counter = Counter()  # refusals since the last page, by shape

    def page(self) -> None:
        """An answer farm understood: the site does not refuse the crawl."""
        self.since = None
        self.shapes.clear()

    def refused(self, shape: str, now: float) -> bool:
        """One more refusal; True once the site is taken to refuse the crawl."""
        if self.since is None:
            self.since = now
        self.shapes[shape] += 1
        return bool(self.after) and sum(self.shapes.values()) >= self.least and now - self.since >= self.after

    def summary(self) -> str:
        return ", ".join(f"{shape} ×{n}" for shape, n in self.shapes.most_common())
