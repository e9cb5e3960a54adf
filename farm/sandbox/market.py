"""The sandbox's market as it changes: what one day's world differs by, for the checks and openings tests.

A World reads its Market once, from the FARM_SANDBOX_MARKET environment variable (a JSON object; unset:
the plain world), so a test starts a sandbox process for each day it plays:

    {"halve": ["java"]}   those keywords list half their postings (on every site and city)
    {"retire": {"java": 5}, "hire": {"java": 3}}
                          java's first 5 positions are gone from every site and city, and 3 new
                          positions follow its last: the rest of its postings are the day before's

Every change is a pure function of the seed and what is changed, as the rest of the world is.
"""

import json
import os
from dataclasses import dataclass, field

ENVIRONMENT = "FARM_SANDBOX_MARKET"


@dataclass(frozen=True)
class Market:
    halve: frozenset = field(default_factory=frozenset)
    retire: dict = field(default_factory=dict)  # keyword -> positions gone from the start of its list
    hire: dict = field(default_factory=dict)  # keyword -> new positions after its last

    @classmethod
    def from_environment(cls) -> "Market":
        raw = os.environ.get(ENVIRONMENT)
        if not raw:
            return cls()
        try:
            given = json.loads(raw)
            return cls(
                halve=frozenset(given.get("halve", ())),
                retire={str(k): int(n) for k, n in given.get("retire", {}).items()},
                hire={str(k): int(n) for k, n in given.get("hire", {}).items()},
            )
        except (ValueError, AttributeError, TypeError) as exc:
            raise SystemExit(f"{ENVIRONMENT} is not a JSON object of the market's changes: {exc}") from None

    def total(self, keyword: str, total: int) -> int:
        """The keyword's postings under the day's changes."""
        return total // 2 if keyword in self.halve else total
