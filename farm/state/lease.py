"""What a claim hands out (or, taking nothing, the Outlook it leaves), and what the store's fenced writes answer."""

from __future__ import annotations

import secrets
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, TypeAlias

# keyword.lease_token is a BIGINT; tokens keep to the integers every JSON reader holds exactly (a
# double's 53 bits: JavaScript's, and the API's keyword ids), and 2**53 of them leave nothing to guess
TOKEN_MAX = 2**53 - 1


def new_lease_token(old: int | None = None) -> int:
    """A lease token for a new claim: random in 1..TOKEN_MAX, and never ``old``.

    Only the claimer learns it, so a holder whose lease was taken back cannot
    guess the new holder's token and write over its keyword.
    """
    while True:
        token = secrets.randbelow(TOKEN_MAX) + 1
        if token != old:
            return token


@dataclass(frozen=True)
class Lease:
    """One keyword held by one crawler until it is completed, failed or released.

    Every write about the keyword names (``id``, ``lease_token``); once another
    claim has given the keyword a new token, the writes of this lease change nothing.
    """

    id: int
    source: str
    city: str
    job: str
    lease_token: int
    start_page: int  # last_completed_page + 1: where the crawl resumes
    from_status: str  # "fresh", "partial" or "failed": why it was claimable
    total_pages: int | None = None  # known from an earlier holder, or None
    pages_ahead: frozenset[int] = field(default_factory=frozenset)  # done beyond the watermark
    retry_count: int = 0

    @property
    def key(self) -> tuple[int, int]:
        return (self.id, self.lease_token)

    def wire(self) -> list[int | None]:
        """What a page write needs of the lease, as JSON for the state writer process."""
        return [self.id, self.lease_token, self.start_page, self.total_pages]

    @classmethod
    def from_wire(cls, wire: Sequence[Any]) -> Lease:
        keyword_id, lease_token, start_page, total_pages = wire
        return cls(
            id=keyword_id,
            source="",
            city="",
            job="",
            lease_token=lease_token,
            start_page=start_page,
            from_status="",
            total_pages=total_pages,
        )

    def to_json(self) -> list[Any]:
        """The whole lease as plain JSON data (for a request shared through Redis)."""
        return [
            self.id,
            self.source,
            self.city,
            self.job,
            self.lease_token,
            self.start_page,
            self.from_status,
            self.total_pages,
            sorted(self.pages_ahead),
            self.retry_count,
        ]

    @classmethod
    def from_json(cls, data: Any) -> Lease:
        """``to_json``'s inverse; ValueError for anything else."""
        try:
            keyword_id, source, city, job, token, start, status, total, ahead, retries = data
            lease = cls(
                id=_integer(keyword_id),
                source=str(source),
                city=str(city),
                job=str(job),
                lease_token=_integer(token),
                start_page=_integer(start),
                from_status=str(status),
                total_pages=None if total is None else _integer(total),
                pages_ahead=frozenset(_integer(page) for page in ahead),
                retry_count=_integer(retries),
            )
        except (TypeError, ValueError) as exc:
            raise ValueError(f"not a lease: {data!r:.200}") from exc
        return lease

    @property
    def name(self) -> str:
        """``id:token``: the lease as a key of shared state."""
        return f"{self.id}:{self.lease_token}"

    def pages_to_fetch(self, last_page: int) -> list[int]:
        """Pages start_page..last_page that no holder has finished yet."""
        return [p for p in range(self.start_page, last_page + 1) if p not in self.pages_ahead]


def parse_pages(text: str | None) -> frozenset[int]:
    """keyword.pages_ahead ("4,7") as pages."""
    return frozenset(int(p) for p in (text or "").split(",") if p.strip())


def format_pages(pages: Iterable[int]) -> str:
    """Pages as keyword.pages_ahead stores them ("4,7")."""
    return ",".join(str(p) for p in sorted(pages))


def _integer(value: object) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise ValueError(f"{value!r} is not an integer")
    return value


@dataclass(frozen=True)
class PageWrite:
    """The answer to ``page_done``."""

    applied: bool  # False: the lease is no longer current (fenced), nothing changed
    counted: bool  # True when this call added the page's jobs (False for a repeat)
    last_completed_page: int  # the watermark after the call
    total_pages: int | None
    completed: bool = False  # True when this page brought the watermark to total_pages


# How a keyword can end, as the crawl asks the store to write it:
ENDS = (
    "completed",  # nothing left to fetch
    "failed",  # the keyword's own fault; claimed again after FARM_RETRY_DELAY while retries are left
    "blocked",  # the site kept blocking it: partial, counted against FARM_MAX_BLOCKED_CLAIMS
    "released",  # given back unfinished (a stop, the site unreachable): partial
)

# A page done, as a holder reports it: (lease, page, jobs, total_pages), and the postings the site
# says the keyword holds when it told (pagewrites.write_batch)
DonePage: TypeAlias = tuple[Lease, int, int, int | None] | tuple[Lease, int, int, int | None, int | None]
# A keyword's end, as a holder asks for it: (lease, kind (one of ENDS), message or None)
EndAsked: TypeAlias = tuple[Lease, str, object]


@dataclass(frozen=True)
class Outlook:
    """What a claim that took nothing leaves to wait for (``claims.outlook``)."""

    claimable: int  # rows a claim could take now
    next_retry_at: datetime | None  # when the first failed row waiting for FARM_RETRY_DELAY comes due


@dataclass(frozen=True)
class BatchResult:
    """The answer to ``write_batch``, in the order things were asked."""

    postings: int  # postings written
    pages: list[PageWrite]  # a PageWrite per page
    ends: list[str | None]  # per end: the status written ("completed", "failed", "partial"), or None when fenced
    # (source, job_id, reason) of postings the database refused
    rejected: list[tuple[str, str, str]] = field(default_factory=list)
    # fields changed to fit their columns (farm.state.normalise): name -> postings changed
    normalised: dict[str, int] = field(default_factory=dict)
    # per claim asked (after the writes): (leases claimed, and when none, the store's Outlook)
    claims: list[tuple[list[Lease], Outlook | None]] = field(default_factory=list)
