"""The state writer alone over a long day: its memory, page by page, without a crawl.

Drives a real state writer child (farm.writer.serve's loop, in ``python -m bench.longday_writer
serve``) with frames shaped as a crawl of qcwy sends them (farm.crawl.outbox): 8 keywords held at
a time (FARM_LEASES_IN_FLIGHT's default), each of 40 pages of 20 postings rendered by the sandbox
and parsed by the spider, the next page of 4 of them a frame, a keyword's end and the claim of the
next in the frame after its last page, one frame in flight. The child logs, every EVERY pages, its
resident memory, the size of its engine's compiled-statement cache and of the salary parser's
cache, SQLite's own allocations, glibc malloc's, and with --trace the allocations Python holds that
grew most since the first sample (tracemalloc, grouped by traceback).

    python -m bench.longday_writer [--pages 100000] [--keywords 1000000] [--every 10000] [--trace]
"""

import argparse
import os
import subprocess
import sys
import tempfile
import tracemalloc
from pathlib import Path

import orjson

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))


PAGE = os.sysconf("SC_PAGE_SIZE")
LEASES, PAGES_A_KEYWORD, PAGE_SIZE = 8, 40, 20
PAGES_A_FRAME = 4  # a frame carries the pages (and their postings) done since the last one went out


def rss() -> int:
    with open("/proc/self/statm") as file:
        return int(file.read().split()[1]) * PAGE


# --- the child: farm.writer.serve, counting pages -----------------------------------------------


def serve(every: int, trace: bool) -> int:
    from farm.salary import parse
    from farm.writer import serve as module

    if trace:
        tracemalloc.start(12)
    decode, state = module.decode, {"pages": 0, "next": every, "first": None, "store": None}
    from_config = module.KeywordStore.from_config

    def kept(*args, **kwargs):
        state["store"] = store = from_config(*args, **kwargs)
        return store

    def counted(payload):
        batch = decode(payload)
        state["pages"] += len(batch.pages)
        if state["pages"] >= state["next"]:
            state["next"] += every
            sample(state, parse)
        return batch

    module.decode, module.KeywordStore.from_config = counted, kept
    return module.main()


def sample(state, parse) -> None:
    engine = state["store"].engine
    cache = engine._compiled_cache
    line = {
        "pages": state["pages"],
        "rss": rss(),
        "compiled": len(cache) if cache is not None else None,
        "salaries": parse.cache_info().currsize,
        "sqlite": sqlite_memory(),
        "malloc": malloc_in_use(),
    }
    if tracemalloc.is_tracing():
        snapshot = tracemalloc.take_snapshot().filter_traces([tracemalloc.Filter(False, tracemalloc.__file__)])
        line["traced"] = sum(s.size for s in snapshot.statistics("filename"))
        if state["first"] is None:
            state["first"] = snapshot
        else:
            top = snapshot.compare_to(state["first"], "traceback")[:8]
            line["grew"] = [[s.size_diff, s.count_diff, [str(f) for f in s.traceback.format()[-6:]]] for s in top]
    sys.stderr.write("longday_writer " + orjson.dumps(line).decode() + "\n")
    sys.stderr.flush()


def sqlite_memory() -> int | None:
    """Bytes SQLite's allocator holds (its page caches, prepared statements, schema), when the
    sqlite3 module links the shared library."""
    import ctypes
    import ctypes.util

    name = ctypes.util.find_library("sqlite3")
    if name is None:
        return None
    used = ctypes.CDLL(name).sqlite3_memory_used
    used.restype = ctypes.c_int64
    return used()


def malloc_in_use() -> list[int] | None:
    """glibc malloc's (bytes in use, bytes free in its heap, bytes mapped alone), from mallinfo2."""
    import ctypes

    class Info(ctypes.Structure):
        _fields_ = [
            (name, ctypes.c_size_t)
            for name in (
                "arena",
                "ordblks",
                "smblks",
                "hblks",
                "hblkhd",
                "usmblks",
                "fsmblks",
                "uordblks",
                "fordblks",
                "keepcost",
            )
        ]

    try:
        mallinfo2 = ctypes.CDLL(None).mallinfo2
    except AttributeError:
        return None
    mallinfo2.restype = Info
    info = mallinfo2()
    return [info.uordblks, info.fordblks, info.hblkhd]


# --- the driver: a crawl's frames ------------------------------------------------------------------


class Pages:
    """A keyword's postings as the spider makes them, page by page, from the sandbox's world."""

    def __init__(self):
        from farm.sandbox.cities import city_named
        from farm.sandbox.data import World
        from farm.sandbox.results import Query
        from farm.sites.qcwy.sandbox import render
        from farm.sites.qcwy.spider import _posting

        self.world, self.render, self.query, self.posting, self.city = (
            World(9, (800, 800)),
            render,
            Query,
            _posting,
            city_named,
        )

    def rows(self, lease: list, page: int) -> list[bytes]:
        keyword_id, city, job = lease[0], lease[2], lease[3]
        body = orjson.loads(
            self.render(self.world, self.query("qcwy", self.city(city).code("qcwy"), job, page, PAGE_SIZE))
        )
        rows = []
        for item in body["resultbody"]["job"]["items"]:
            row = dict(self.posting(item)._values, source="qcwy", keyword_id=keyword_id)
            rows.append(orjson.dumps(row))
        return rows


def drive(db_url: str, pages: int, every: int, trace: bool) -> None:
    from farm.writer.frames import CONFIG_VARIABLE, READY, frame, read_answer

    env = dict(os.environ, **{CONFIG_VARIABLE: orjson.dumps({"db_url": db_url}).decode()})
    argv = [sys.executable, "-m", "bench.longday_writer", "serve", "--every", str(every)] + ["--trace"] * trace
    child = subprocess.Popen(argv, cwd=ROOT, env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    made = Pages()
    try:
        assert child.stdout.readline() == READY
        held: dict[tuple, list] = {}  # (id, token): [wire lease, next page to send]
        pending_claim, ends, done = LEASES, [], 0
        while done < pages:
            claims = []
            if pending_claim:
                claims = [("qcwy", "longday", pending_claim, frozenset(), frozenset(held))]
            postings, page_ops = [], []
            # the next page of each of the first keywords, a few a frame, as parallel fetches end
            for entry in list(held.values())[:PAGES_A_FRAME]:
                lease, page = entry
                if page > PAGES_A_KEYWORD:
                    continue
                rows = made.rows(lease, page)
                postings += rows
                page_ops.append((lease, page, len(rows), PAGES_A_KEYWORD if page == 1 else None))
                entry[1] = page + 1
            child.stdin.write(frame(postings, page_ops, ends, claims))
            child.stdin.flush()
            kind, _, detail = child.stdout.readline().partition(b" ")
            if kind != b"ok":
                raise RuntimeError(f"the writer answered {kind!r} {detail[:300]!r}")
            result = read_answer(detail.rstrip(b"\n"))
            done += len(page_ops)
            ends = []
            for key, entry in list(held.items()):
                if entry[1] > PAGES_A_KEYWORD:
                    ends.append((entry[0], "completed", None))
                    del held[key]
            pending_claim = LEASES - len(held) if ends or not claims else 0
            for leases, _ in result.claims:
                for lease in leases:
                    held[lease.key] = [_Wire(lease), lease.start_page]
            if not held and not ends and result.claims and not result.claims[0][0]:
                raise RuntimeError("nothing left to claim")
    finally:
        child.stdin.close()
        child.wait(timeout=120)


class _Wire(list):
    """A lease as frame() takes it (wire()) and as Pages reads it (id, token, city, job)."""

    def __init__(self, lease):
        super().__init__([lease.id, lease.lease_token, lease.city, lease.job])
        self.lease = lease

    def wire(self):
        return self.lease.wire()


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("mode", nargs="?", default="drive", choices=("drive", "serve"))
    parser.add_argument("--pages", type=int, default=100_000)
    parser.add_argument("--keywords", type=int, default=1_000_000)
    parser.add_argument("--every", type=int, default=10_000)
    parser.add_argument("--trace", action="store_true")
    args = parser.parse_args()
    if args.mode == "serve":
        sys.exit(serve(args.every, args.trace))
    from bench.longday_bench import build

    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "longday.db"
        build(path, args.keywords)
        drive(f"sqlite:///{path}", args.pages, args.every, args.trace)
