"""The cost of `farm openings update` follows its new postings, not the openings stored: the time and peak
memory of an update of 1,000 (and 100,000) new postings against 10k, 100k and 1M stored (3M with
``--sizes``), and one title posted many times at one company.

For each size the postings are bench.openings_bench's (the sandbox's, made without rendering), each
(site, id) once, written into SQLite; the stored ones are put into openings by updates of at most
``--chunk`` postings at a time (the first learns the evidence's weights and stores them), then, on a copy
of that database for each count of ``--new``, that many postings spread over the same keywords are written
and updated in a new process, timed from its start of the update to its commit; its peak resident memory
(VmHWM) is the whole process's, farm's imports included (printed apart). An update of more new postings
than a tenth of those stored is not measured. The one-title case is 16,000 postings of one title at one
company on one site, clustered in one process, and an update of 1,000 more of them against those 16,000
stored.

    python -m bench.openings_update_bench [--sizes 10000,100000,1000000] [--new 1000,100000] [--chunk 100000]
"""

import argparse
import json
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from bench.openings_bench import million  # noqa: E402
from bench.openings_stored_bench import DAY_1, DAY_2, _rows, _write  # noqa: E402
from farm.openings.cluster import Clusterer, PostingSeen  # noqa: E402
from farm.openings.stored import update_openings  # noqa: E402
from farm.state.db import make_engine  # noqa: E402
from farm.state.migrate import upgrade  # noqa: E402

NEW = 1000
CHUNK = 100_000
ONE_TITLE = 16_000

# run in a new process: the update's time and the process's peak memory, and the memory after the imports
_TIMED = r"""
import json, re, sys, time
from farm.openings.stored import update_openings
from farm.state.db import make_engine
def peak():  # this process's own high-water mark (ru_maxrss keeps the parent's across fork and exec)
    return int(re.search(r"VmHWM:\s+(\d+)", open("/proc/self/status").read()).group(1)) / 1024
engine = make_engine(sys.argv[1])
engine.connect().close()
imported = peak()
started = time.perf_counter()
done = update_openings(engine)
seconds = time.perf_counter() - started
print(json.dumps({"seconds": seconds, "postings": done.postings, "stored": done.stored - done.openings,
                  "peak_mb": peak(), "imports_mb": imported}))
"""


def timed_update(url: str) -> dict:
    """`update_openings` in a new process: its seconds, postings, openings stored before, peak memory."""
    out = subprocess.run(
        [sys.executable, "-c", _TIMED, url], check=True, capture_output=True, text=True, cwd=ROOT, env=None
    )
    return json.loads(out.stdout.strip().splitlines()[-1])


def stored_then_new(url: str, stored: list[PostingSeen], new: list[PostingSeen], chunk: int = CHUNK) -> dict:
    build(url, stored, chunk)
    return new_then_update(url, new)


def build(url: str, stored: list[PostingSeen], chunk: int = CHUNK) -> None:
    upgrade(url)
    engine = make_engine(url)
    for start in range(0, len(stored), chunk):
        _write(engine, _rows(stored[start : start + chunk], DAY_1))
        update_openings(engine)
    engine.dispose()


def new_then_update(url: str, new: list[PostingSeen]) -> dict:
    engine = make_engine(url)
    _write(engine, _rows(new, DAY_2))
    engine.dispose()
    return timed_update(url)


def against(size: int, news: list[int], chunk: int = CHUNK):
    """(new, the update's result) for each count of ``news`` against ``size`` postings stored."""
    news = [new for new in news if new * 10 <= size or new == min(news)]
    most = max(news)
    postings = list({(p.source, p.job_id): p for p in million(size + most)}.values())
    pool = postings[:: len(postings) // most][:most]
    taken = {(p.source, p.job_id) for p in pool}
    stored = [p for p in postings if (p.source, p.job_id) not in taken]
    del postings
    with tempfile.TemporaryDirectory() as folder:
        build(f"sqlite:///{folder}/stored.db", stored, chunk)
        del stored
        for new in news:
            shutil.copyfile(f"{folder}/stored.db", f"{folder}/farm.db")
            yield new, new_then_update(f"sqlite:///{folder}/farm.db", pool[:: most // new][:new])


def one_title(count: int, site: str = "boss", start: int = 0) -> list[PostingSeen]:
    return [
        PostingSeen(
            site, f"{site[0]}{n}", "Python开发工程师", "字节跳动", "北京", 20000 + n % 7 * 1000, 30000, "朝阳区"
        )
        for n in range(start, start + count)
    ]


def run(sizes: list[int] = (10_000, 100_000, 1_000_000), news: list[int] = (NEW, 100_000), chunk: int = CHUNK):
    for size in sizes:
        for _, result in against(size, list(news), chunk):
            label = f"update: {result['postings']:,} new against {result['stored']:,} openings stored"
            yield label, result["seconds"], "s"
            yield f"{label}: peak memory", result["peak_mb"], "MB"
            yield f"{label}: of which farm's imports", result["imports_mb"], "MB"
    for count in (ONE_TITLE // 2, ONE_TITLE):
        postings = one_title(count)
        started = time.perf_counter()
        Clusterer().add_all(postings)
        yield f"one title at one company, {count:,} postings clustered", time.perf_counter() - started, "s"
    with tempfile.TemporaryDirectory() as folder:
        result = stored_then_new(
            f"sqlite:///{folder}/farm.db",
            one_title(ONE_TITLE),
            one_title(NEW // 2, "boss", ONE_TITLE) + one_title(NEW // 2, "qcwy"),
        )
        yield f"one title: update of {result['postings']:,} against {result['stored']:,} stored", result["seconds"], "s"
        yield "one title: update's peak memory", result["peak_mb"], "MB"


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", default="10000,100000,1000000")
    parser.add_argument("--new", default=f"{NEW},100000")
    parser.add_argument("--chunk", type=int, default=CHUNK)
    args = parser.parse_args()
    sizes, news = ([int(n) for n in text.split(",")] for text in (args.sizes, args.new))
    for name, value, unit in run(sizes, news, args.chunk):
        print(f"{name:<72} {value:>12.3f}  {unit}", flush=True)


if __name__ == "__main__":
    main()
