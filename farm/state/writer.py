"""The state writer: a child process that does a crawl's hot writes, in order.

Scrapy runs a crawl on one core. A crawl that also encoded and wrote every
posting and every page's progress on that core (a thread shares the GIL) spent
a fifth of it there. So the crawl hands those writes, already JSON, to this
process, which does them on another core: ``python -P -m farm.state.writer``
with ``FARM_STATE_WRITER`` set to a JSON object: the database URL and the
crawl's store options (KeywordStore.options).

The crawl's keyword claims are made here too, after the frame's writes. On
the crawl's database thread each claim cost the crawl's own thread 1.4 to 4.5 ms
(bench/claim_thread_bench.py): the two threads handing the GIL back and forth
around every SQLite call. Here they cost it nothing.

The protocol, over the child's stdin and stdout. In: frames of a 4-byte
big-endian length and a JSON object, ``{"postings": [row, ...], "pages":
[[lease, page, jobs, total_pages], ...], "ends": [[lease, kind, message], ...],
"claims": [[source, crawler_id, n, [keyword id to skip, ...], [[id, token] held,
...]], ...]}`` with ``lease`` as :meth:`Lease.wire`; each frame's writes are one
transaction (KeywordStore.write_batch), its postings first fitted to their
columns (farm.state.normalise.fit_rows), and each claim then one more
(KeywordStore.claim). Out: a line per frame once it is committed, ``ok <JSON>``
with the frame's BatchResult (``{"postings": n, "pages": [PageWrite fields, ...],
"ends": [status or null, ...], "rejected": [[source, job_id, reason], ...],
"normalised": {field: postings changed}, "claims": [[[lease as Lease.to_json,
...], [claimable, next retry or null] or null], ...]}``); or ``error <message>``,
after which the writer exits. A posting that cannot be stored is rejected, not
an error: an error is a write lost whole.

The writer's first line, ``ready``, says it has started: until then the crawl
makes its claims on its database thread rather than wait for it.

Frames are committed in the order they arrive. End of input (the crawl closed,
or was killed) makes the writer exit once what it has read is committed;
SIGINT and SIGTERM do not, so a Ctrl+C in the crawl's terminal lets the crawl
finish its own graceful close.
"""

import dataclasses
import logging
import os
import signal
import sys
from collections import Counter
from datetime import datetime
from itertools import chain, repeat

import orjson

from farm.heap import lean_heap
from farm.state.clock import utcnow
from farm.state.db import make_engine
from farm.state.lease import BatchResult, Lease, PageWrite
from farm.state.normalise import fit_rows
from farm.state.store import KeywordStore, Outlook

HEADER = 4  # bytes of a frame's length
# the child's configuration, from its parent: not a setting, so not in farm.settings
CONFIG_VARIABLE = "FARM_STATE_WRITER"
READY = b"ready\n"  # the writer's first line, once it has started (Python, SQLAlchemy: a third of a second)


def frame(postings: list[bytes], pages, ends=(), claims=()) -> bytes:
    """A frame of postings (each already a JSON object), pages done (lease, page, jobs, total_pages),
    keyword ends (lease, kind, message) and claims (source, crawler_id, n, ids to skip, keys held)."""
    # Joined once, header and all: a frame is often larger than malloc's mmap threshold, and
    # each copy of it made on the way (the postings joined, then the payload, then the header
    # added) was a fresh mapping the crawl faulted in page by page.
    parts = [b"", b'{"postings":[', *chain.from_iterable(zip(postings, repeat(b",")))]
    if postings:
        parts.pop()  # the last comma
    parts += [
        b'],"pages":',
        orjson.dumps([[lease.wire(), page, jobs, total] for lease, page, jobs, total in pages]),
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
    pages = [(Lease.from_wire(lease), page, jobs, total) for lease, page, jobs, total in batch["pages"]]
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


def _read_exactly(stream, size: int) -> bytes | None:
    data = stream.read(size)
    if not data:
        return None
    while len(data) < size:
        more = stream.read(size - len(data))
        if not more:
            raise EOFError(f"input ended inside a frame ({len(data)} of {size} bytes)")
        data += more
    return data


def serve(store: KeywordStore, stdin, stdout) -> None:
    crawl = os.getppid()
    while (header := _read_exactly(stdin, HEADER)) is not None:
        batch = decode(_read_exactly(stdin, int.from_bytes(header, "big")))
        if batch.postings or batch.pages or batch.ends:
            result = store.write_batch(batch.postings, batch.pages, utcnow(), batch.ends)
        else:  # a claim alone: no write transaction (nor, on SQLite, the write lock) for nothing
            result = BatchResult(0, [], [])
        # the frames of a crawl that was killed are still written (its pages stay done), but
        # nothing is claimed for it: nobody would crawl what it took
        claims = [store.claim_or_outlook(*claim) if os.getppid() == crawl else ([], None) for claim in batch.claims]
        result = dataclasses.replace(
            result, rejected=batch.rejected + result.rejected, normalised=dict(batch.normalised), claims=claims
        )
        stdout.write(answer(result))
        stdout.flush()


def main() -> int:
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    logging.basicConfig(level=logging.WARNING, format="%(name)s: %(message)s")
    stdout = sys.stdout.buffer
    try:
        config = orjson.loads(os.environ[CONFIG_VARIABLE])
        store = KeywordStore(make_engine(config.pop("db_url"), **config.pop("db_deadlines", {})), **config)
        lean_heap()  # each frame decodes into thousands of objects: collected rarely, as in the crawl
        stdout.write(READY)  # the crawl's claims may come here from now on
        stdout.flush()
        try:
            serve(store, sys.stdin.buffer, stdout)
        finally:
            store.close()
    except Exception as exc:  # any failure ends the writer: the crawl must know
        message = f"{type(exc).__name__}: {exc}".replace("\n", " ")
        try:
            stdout.write(b"error " + message.encode("utf-8", "replace") + b"\n")
            stdout.flush()
        except OSError:  # the crawl is gone: nobody to tell
            pass
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
