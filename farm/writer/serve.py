"""The state writer's child: reads frames from stdin, commits each, answers on stdout (see farm.writer).

python -P -m farm.writer.serve      # with FARM_STATE_WRITER set by farm.writer.process
"""

import dataclasses
import logging
import os
import signal
import sys

import orjson

from farm.config import FarmConfig, setting_key
from farm.heap import lean_heap
from farm.sites import register_packages
from farm.state.clock import utcnow
from farm.state.lease import BatchResult
from farm.state.store import KeywordStore
from farm.writer.frames import CONFIG_VARIABLE, HEADER, READY, answer, decode


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
        # the parent's store, by FarmConfig's field names: built as every store is
        given = orjson.loads(os.environ[CONFIG_VARIABLE])
        config = FarmConfig.from_settings({setting_key(k): v for k, v in given.items()})
        register_packages(config.site_packages)  # the crawl's site packages: their postings' salary forms
        store = KeywordStore.from_config(config)
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
