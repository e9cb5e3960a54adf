"""The sandbox's market as it changes: what one day's world differs by, for the checks and openings tests.

A World reads its Market once, from the FARM_SANDBOX_MARKET environment variable (a JSON object; unset:
the plain world), so a test starts a sandbox process for each day it plays:

    {"halve": ["java"]}   those keywords list half their postings (on every site and city)

Every change is a pure function of the seed and what is changed, as the rest of the world is.
"""

import json
import os
from dataclasses import dataclass, field

ENVIRONMENT = "FARM_SANDBOX_MARKET"


@dataclass(frozen=True)
class Market:
    halve: frozenset = field(default_factory=frozenset)

    @classmethod
    def from_environment(cls) -> "Market":
        raw = os.environ.get(ENVIRONMENT)
        if not raw:
            return cls()
        try:
            given = json.loads(raw)
            return cls(halve=frozenset(given.get("halve", ())))
        except (ValueError, AttributeError, TypeError) as exc:
            raise SystemExit(f"{ENVIRONMENT} is not a JSON object of the market's changes: {exc}") from None

    def total(self, keyword: str, total: int) -> int:
        """The keyword's postings under the day's changes."""
        return total // 2 if keyword in self.halve else total
