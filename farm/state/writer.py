"""The state writer: a child process that does a crawl's hot writes, in order.

Scrapy runs a crawl on one core. A crawl that also encoded and wrote every
posting and every page's progress on that core (a thread shares the GIL) spent
a fifth of it there. So the crawl hands those writes, already JSON, to this
process, which does them on another core: ``python -m farm.state.writer`` with
``FARM_DB_URL`` set.

The protocol, over the child's stdin and stdout. In: frames of a 4-byte
big-endian length and a JSON object, ``{"postings": [row, ...], "pages":
[[lease, page, jobs, total_pages], ...]}`` with ``lease`` as
:meth:`Lease.wire`; each frame is one transaction (KeywordStore.write_batch).
Out: a line per frame once it is committed, ``ok <rows> <JSON array of
PageWrite fields>``; or ``error <message>``, after which the writer exits.

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
from datetime import datetime

import orjson

from farm.state.clock import utcnow
from farm.state.db import make_engine
from farm.state.lease import Lease
from farm.state.store import KeywordStore

HEADER = 4  # bytes of a frame's length


def frame(postings: list[bytes], pages) -> bytes:
    """A frame of postings (each already a JSON object) and pages done (lease, page, jobs, total_pages)."""
    payload = b"".join([
        b'{"postings":[', b",".join(postings), b'],"pages":',
        orjson.dumps([[lease.wire(), page, jobs, total] for lease, page, jobs, total in pages]), b"}",
    ])  # fmt: skip
    return len(payload).to_bytes(HEADER, "big") + payload


def decode(payload: bytes) -> tuple[list[dict], list]:
    batch = orjson.loads(payload)
    postings = batch["postings"]
    for row in postings:
        published = row.get("published_at")
        if isinstance(published, str):
            row["published_at"] = datetime.fromisoformat(published)
    pages = [(Lease.from_wire(lease), page, jobs, total) for lease, page, jobs, total in batch["pages"]]
    return postings, pages


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
    while (header := _read_exactly(stdin, HEADER)) is not None:
        postings, pages = decode(_read_exactly(stdin, int.from_bytes(header, "big")))
        written, results = store.write_batch(postings, pages, utcnow())
        stdout.write(b"ok %d " % written + orjson.dumps([dataclasses.astuple(r) for r in results]) + b"\n")
        stdout.flush()


def main() -> int:
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    logging.basicConfig(level=logging.WARNING, format="%(name)s: %(message)s")
    stdout = sys.stdout.buffer
    try:
        store = KeywordStore(make_engine(os.environ["FARM_DB_URL"]))
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
