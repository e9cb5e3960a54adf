"""Outages: the site dropping every connection for a while in the middle of a crawl.

During an outage every search request has its connection closed without a response (as the `drop` fault does),
before anything else looks at it: nothing is counted and no fault is drawn. The /_sandbox/ control endpoints
keep answering. An outage starts now (`start`, POST /_sandbox/outage {"seconds": S}), or once N search pages
have been served normally since it was armed (`arm`, --outage-after-pages N --outage-seconds S, or POST
{"seconds": S, "after_pages": N}); an armed outage fires once.
"""

import time


class Outage:
    def __init__(self, after_pages=None, seconds=0.0, clock=time.monotonic):
        self._clock = clock
        self.until = 0.0  # the clock's end of the current or last outage; 0.0: there has been none
        self.seconds = 0.0  # length of the current or last outage
        self.dropped = 0  # requests the current or last outage dropped
        self.arm(after_pages, seconds)

    def arm(self, after_pages, seconds):
        """Start an outage of `seconds` once `after_pages` more pages are served (None: disarm)."""
        self.after_pages, self._armed_seconds, self.served = after_pages, seconds, 0

    def start(self, seconds):
        """An outage from now on for `seconds` (0 ends one now); it replaces an armed one."""
        self.until, self.seconds, self.dropped = self._clock() + seconds, seconds, 0
        self.after_pages = None

    def drops(self):
        """Whether an outage is on; if so the caller drops the request, and it is counted here."""
        if self.until and self._clock() < self.until:
            self.dropped += 1
            return True
        return False

    def page_served(self):
        if self.after_pages is not None:
            self.served += 1
            if self.served >= self.after_pages:
                self.start(self._armed_seconds)

    def status(self):
        remaining = max(0.0, self.until - self._clock()) if self.until else 0.0
        return {
            "active": remaining > 0,
            "until": time.time() + remaining if self.until else None,
            "remaining": round(remaining, 3),
            "seconds": self.seconds,
            "dropped": self.dropped,
            "after_pages": self.after_pages,
            "pages_served": self.served,
        }

    @staticmethod
    def parse(data):
        """(seconds, after_pages) from a POST body; ValueError names what is wrong."""
        if not isinstance(data, dict) or "seconds" not in data:
            raise ValueError('an outage needs {"seconds": S} (and "after_pages": N to wait for N pages)')
        unknown = set(data) - {"seconds", "after_pages"}
        if unknown:
            raise ValueError(f"unknown outage keys: {', '.join(sorted(unknown))}")
        seconds, after_pages = float(data["seconds"]), data.get("after_pages")
        if not 0 <= seconds < 86400:
            raise ValueError(f"seconds must be between 0 and a day, not {seconds}")
        if after_pages is not None and (not isinstance(after_pages, int) or after_pages < 1):
            raise ValueError(f"after_pages must be a whole number of pages, at least 1, not {after_pages!r}")
        return seconds, after_pages
