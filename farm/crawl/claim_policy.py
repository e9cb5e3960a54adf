"""When the crawl claims keywords, waits, or finishes: a pure function of what it sees.

The lease middleware (farm.crawl.leases) keeps up to FARM_LEASES_IN_FLIGHT
keywords live. It asks ``decide`` what to do whenever a keyword stops, a claim
comes back or the crawl is idle, and carries the decision out:

- ``claim``: claim ``count`` keywords (one claim at a time);
- ``wait``: claim again in ``seconds``: rows are claimable but other crawlers
  hold them locked for a moment (SKIP LOCKED), or a failed keyword waits out
  FARM_RETRY_DELAY;
- ``none_left``: nothing to claim, and keywords are still held (their ends
  bring the next decision);
- ``ask_others``: shared through Redis, nothing is left to claim and nothing is
  held here: whether other workers still hold work decides;
- ``finish``: nothing to claim, nothing held, nobody else busy: the crawl is done;
- ``hold``: nothing to do now (a claim is under way, or the crawl closes).
"""

from dataclasses import dataclass
from datetime import datetime

from farm.state.lease import Outlook

# Seconds before claiming again when rows are claimable but were all locked by other claimers.
CLAIM_BUSY_DELAY = 0.5


@dataclass(frozen=True)
class Seen:
    """What the crawl sees when it decides."""

    in_flight: int  # FARM_LEASES_IN_FLIGHT: the keywords to keep live
    live: int  # keywords of this worker still asking for pages
    held: int  # keywords held at all (live, or with an end on its way)
    claiming: bool = False  # a claim (or a take-back) is under way
    closing: bool = False  # the crawl closes (this crawl's close, or the engine's): nothing new
    # the answer of a claim that found nothing, being decided on; None: deciding whether to claim
    outlook: Outlook | None = None
    now: datetime | None = None  # when the outlook is judged
    # shared: other workers hold requests or are adopting keywords (None: not known yet);
    # a crawl of its own sees False
    others_busy: bool | None = False


@dataclass(frozen=True)
class Decision:
    action: str  # claim, wait, none_left, ask_others, finish, hold
    count: int = 0  # claim: how many
    seconds: float = 0.0  # wait: how long
    why: str = ""  # wait: "busy" (rows locked) or "retry" (a failed keyword's retry is not due)


HOLD = Decision("hold")


def decide(seen: Seen) -> Decision:
    """What the crawl does next (see the module docstring)."""
    if seen.closing or seen.claiming:
        return HOLD
    outlook = seen.outlook
    if outlook is None:
        wanted = seen.in_flight - seen.live
        return Decision("claim", count=wanted) if wanted > 0 else HOLD
    if outlook.claimable:
        return Decision("wait", seconds=CLAIM_BUSY_DELAY, why="busy")
    if outlook.next_retry_at is not None:
        assert seen.now is not None, "an outlook is judged at a time (Seen.now)"
        wait = max(0.0, (outlook.next_retry_at - seen.now).total_seconds())
        return Decision("wait", seconds=wait + 0.01, why="retry")
    if seen.held:
        return Decision("none_left")
    if seen.others_busy is None:
        return Decision("ask_others")
    return Decision("none_left") if seen.others_busy else Decision("finish")
