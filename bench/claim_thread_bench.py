"""What a keyword claim on a thread of the crawl's process cost the crawl's own thread.

Why farm's claims are made by the state writer process (farm.writer), not
on the crawl's database thread: a CPU-bound loop on the main thread (standing
for the crawl's reactor) is timed alone, then with a claim every 0.12 s on
another thread (39 claims in a 5 s crawl of the crawl benchmark), in turns. The
claim itself takes a fraction of a millisecond of CPU; the main thread loses
more, as the two threads hand the GIL to each other around every SQLite call.
"""

import json
import statistics
import tempfile
import threading
import time

from farm.state.db import make_engine
from farm.state.migrate import upgrade
from farm.state.store import KeywordStore

CLAIM_EVERY = 0.12  # seconds
ROUNDS = 5


def _loop(data, repeat):
    started = time.perf_counter()
    for _ in range(repeat):
        for text in data:
            json.loads(text)
    return time.perf_counter() - started


def run():
    data = [json.dumps({"a": [i, "x" * 50, {"b": i}]}) for i in range(2000)]
    with tempfile.TemporaryDirectory() as tmp:
        url = f"sqlite:///{tmp}/claims.db"
        upgrade(url)
        store = KeywordStore(make_engine(url))
        store.add_keywords([("qcwy", "北京", f"job {n}") for n in range(1000)])
        claim_cpu, per_claim = [], []
        for _ in range(ROUNDS):
            alone = _loop(data, 500)
            claims, stop = [], threading.Event()

            def claimer():
                while not stop.is_set():
                    started = time.thread_time()
                    store.claim("qcwy", "bench", 1)
                    claims.append(time.thread_time() - started)
                    stop.wait(CLAIM_EVERY)

            thread = threading.Thread(target=claimer)
            thread.start()
            with_claims = _loop(data, 500)
            stop.set()
            thread.join()
            per_claim.append((with_claims - alone) / len(claims) * 1000)
            claim_cpu += claims
        store.close()
    return [
        ("a claim's own CPU, on its thread", statistics.median(claim_cpu) * 1000, "ms"),
        (f"what it cost a CPU-bound main thread (median of {ROUNDS})", statistics.median(per_claim), "ms"),
    ]


if __name__ == "__main__":
    for name, value, unit in run():
        print(f"{name:<60} {value:>10.2f} {unit}")
