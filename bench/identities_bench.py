"""Pages a second against 1, 2, 4 and 8 identities: the fleet's take grows with its proxies.

The sandbox holds each client (address) to TOLERATED requests a second and bans one that goes faster
(farm/sandbox/clientpace.py); each identity is a real forward proxy (tests/proxy.py) connecting from an
address of its own (127.0.0.2 and on), and the crawl keeps FARM_QCWY_RATE=RATE for each. A crawl of n
identities fetches 8n keywords of 5 pages, so that each runs about as long; its rate is its pages over the
time from the first request any proxy relayed to the last (start-up left out), and "of linear" is that rate
over n times the one-identity rate. The aim: linear until the machine's cores, not the pace, are the limit.
The requests the sandbox judged too fast are counted against the pages.

    python -m bench.identities_bench [--rounds N]
"""

import argparse
import statistics
import sys
import tempfile
from pathlib import Path

from farm.sandbox.testing import SandboxProcess
from tests.e2e.harness import fetched_pages, prepare_db, run_crawl
from tests.proxy import ForwardProxy

RATE = 5.0  # the crawl's pace for one identity
TOLERATED = 6.5  # what the sandbox tolerates from one client
PAGES = 5  # a keyword's
IDENTITIES = (1, 2, 4, 8)
CITIES = ("北京", "上海", "广州", "深圳", "杭州", "成都", "武汉", "西安")


def _crawl(folder: Path, n: int, r: int) -> tuple[float, int, int]:
    """(pages a second, pages, requests judged too fast) of one crawl through ``n`` identities."""
    rows = [("qcwy", CITIES[i % len(CITIES)], f"job{i}") for i in range(8 * n)]
    db = f"sqlite:///{folder / f'n{n}r{r}.db'}"
    prepare_db(db, rows)
    proxies = [ForwardProxy(source=f"127.0.0.{2 + i}").start() for i in range(n)]
    try:
        with SandboxProcess(seed=41, postings=(PAGES * 20, PAGES * 20)) as sandbox:
            sandbox.set_pace(rate=TOLERATED, burst=2, strikes=3, ban_seconds=2)
            crawl = run_crawl(
                "qcwy",
                db,
                sandbox.url,
                timeout=600,
                FARM_QCWY_MAX_PAGES=PAGES,
                FARM_QCWY_RATE=RATE,
                FARM_PROXIES=",".join(proxy.url for proxy in proxies),
                FARM_PROXY_QUARANTINE=1,
                FARM_LEASES_IN_FLIGHT=8 * n,
            )
            if crawl.returncode != 0:
                raise RuntimeError(f"the crawl through {n} identities failed:\n{crawl.output[-2000:]}")
            pages = sum(fetched_pages(sandbox, "qcwy").values())
            refused = sum(c["too_fast"] + c["banned"] for c in sandbox.pace()["clients"].values())
    finally:
        for proxy in proxies:
            proxy.stop()
    times = [t for proxy in proxies for t in proxy.times]
    return pages / (max(times) - min(times)), pages, refused


def run(rounds: int = 2, verbose: bool = False):
    rates: dict[int, list[float]] = {n: [] for n in IDENTITIES}
    pages = refused = 0
    with tempfile.TemporaryDirectory(prefix="farm-identities-bench-") as tmp:
        for r in range(rounds):
            for n in IDENTITIES if r % 2 == 0 else tuple(reversed(IDENTITIES)):
                rate, crawled, judged = _crawl(Path(tmp), n, r)
                rates[n].append(rate)
                pages, refused = pages + crawled, refused + judged
                if verbose:
                    print(f"  round {r + 1}, {n} identities: {rate:.1f} pages/s ({crawled} pages)", flush=True)
    one = statistics.median(rates[1])
    rows = [(f"one identity's pace (FARM_QCWY_RATE), the sandbox tolerating {TOLERATED:g}", RATE, "pages/s")]
    for n in IDENTITIES:
        rows.append((f"pages/s through {n} identities", statistics.median(rates[n]), "pages/s"))
    for n in IDENTITIES[1:]:
        rows.append(
            (f"{n} identities: of linear (pages/s over {n} x one's)", statistics.median(rates[n]) / (n * one), "ratio")
        )
    rows.append(("requests the sandbox judged too fast, per page", refused / pages if pages else 0.0, "ratio"))
    return rows


def main(argv):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=2)
    args = parser.parse_args(argv)
    for name, value, unit in run(args.rounds, verbose=True):
        print(f"  {name:<60} {value:>11.{3 if unit == 'ratio' else 2}f}  {unit}", flush=True)


if __name__ == "__main__":
    main(sys.argv[1:])
