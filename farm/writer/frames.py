"""The state writer's frames: what the crawl sends the child and what it answers (see farm.writer)."""

import dataclasses
from collections import Counter
from datetime import datetime
from itertools import chain, repeat

import orjson

from farm.state.lease import BatchResult, Lease, Outlook, PageWrite
from farm.state.normalise import fit_rows

HEADER = 4  # bytes of a frame's length
# the child's configuration, from its parent: not a setting, so not in farm.settings
CONFIG_VARIABLE = "FARM_STATE_WRITER"
READY = b"ready\n"  # the writer's first line, once it has started (Python, SQLAlchemy: a third of a second)


def frame(postings: list[bytes], pages, ends=(), claims=()) -> bytes:
    """A frame of postings (each already a JSON object), pages done (lease, page, jobs, total_pages, site_total),
    keyword ends (lease, kind, message) and claims (source, crawler_id, n, ids to skip, keys held)."""
    # Joined once, header and all: a frame is often larger than malloc's mmap threshold, and
    # each copy of it made on the way (the postings joined, then the payload, then the header
    # added) was a fresh mapping the crawl faulted in page by page.
    parts = [b"", b'{"postings":[', *chain.from_iterable(zip(postings, repeat(b",")))]
    if postings:
        parts.pop()  # the last comma
    parts += [
        b'],"pages":',
        orjson.dumps([[lease.wire(), *page] for lease, *page in pages]),
        b',"ends":',
        orjson.dumps([[lease.wire(), kind, message] for lease, kind, message in ends]),
        b',"claims":',
        orjson.dumps(
            [[source, crawler_id, n, sorted(skip), sorted(held)] for source, crawler_id, n, skip, held in claims]
        ),
        b"}",
    ]
    parts[0] = sum(map(len, parts)).to_bytes(HEADER, "big")
    return b"".join(parts)


@dataclasses.dataclass
class Decoded:
    """A frame, decoded."""

    postings: list[dict]  # fitted to their columns
    pages: list
    ends: list
    rejected: list  # (source, job_id, reason) of postings that cannot be stored
    normalised: Counter  # fields changed to fit, by name
    claims: list  # (source, crawler_id, n, ids to skip, keys held)


def decode(payload: bytes) -> Decoded:
    batch = orjson.loads(payload)
    # a NUL can only come as orjson's \u0000: a frame without those bytes has none to remove
    postings, rejected, normalised = fit_rows(batch["postings"], nul=b"\\u0000" in payload)
    pages = [(Lease.from_wire(lease), *page) for lease, *page in batch["pages"]]
    ends = [(Lease.from_wire(lease), kind, message) for lease, kind, message in batch.get("ends", ())]
    claims = [
        (source, crawler_id, n, frozenset(skip), frozenset(map(tuple, held)))
        for source, crawler_id, n, skip, held in batch.get("claims", ())
    ]
    return Decoded(postings, pages, ends, rejected, normalised, claims)


def answer(result: BatchResult) -> bytes:
    """The ``ok`` line of a committed frame."""
    return (
        b"ok "
        + orjson.dumps(
            {
                "postings": result.postings,
                "pages": [dataclasses.astuple(r) for r in result.pages],
                "ends": result.ends,
                "rejected": result.rejected,
                "normalised": result.normalised,
                "claims": [
                    [[lease.to_json() for lease in leases], outlook and [outlook.claimable, outlook.next_retry_at]]
                    for leases, outlook in result.claims
                ],
            }
        )
        + b"\n"
    )


def read_answer(payload: bytes) -> BatchResult:
    """The BatchResult of an ``ok`` line (after ``ok ``)."""
    data = orjson.loads(payload)
    pages = [PageWrite(*fields) for fields in data["pages"]]
    rejected = [tuple(r) for r in data["rejected"]]
    claims = [
        ([Lease.from_json(lease) for lease in leases], outlook and _outlook(*outlook))
        for leases, outlook in data.get("claims", ())
    ]
    return BatchResult(data["postings"], pages, data["ends"], rejected, data.get("normalised", {}), claims)


def _outlook(claimable: int, next_retry_at: str | None) -> Outlook:
    return Outlook(claimable, next_retry_at and datetime.fromisoformat(next_retry_at))
