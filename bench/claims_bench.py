"""Claims per second with 8 concurrent processes on MariaDB, at 10,000 and at 1,000,000 keywords;
and the same on PostgreSQL.

    .venv/bin/python -m bench.claims_bench      # FARM_BENCH_MYSQL=mysql+pymysql://root@127.0.0.1:3306
                                                # FARM_BENCH_POSTGRESQL=postgresql+psycopg://postgres@127.0.0.1:5432

Each size runs in a throwaway database (dropped afterwards). The processes are started,
connected and warmed before the clock starts; then each claims CLAIMS_PER_PROCESS
keywords, one a round trip (n=1) and then CLAIM_BATCH a round trip (as a crawl claims: up
to FARM_LEASES_IN_FLIGHT at once, each lease under its own token), and the rate is all
keywords claimed over the wall time from the start signal to the last process done.
The ratio (10k rate / 1M rate) shows whether a
claim's cost grows with the table: it should stay near 1, because the claim walks
ix_keyword_fresh from its start instead of sorting the table.
"""

import multiprocessing
import time
from datetime import timedelta

from sqlalchemy import text

from bench.mariadb import mariadb_database
from bench.postgresql import postgresql_database
from farm.state import KeywordStore, claimrules
from farm.state.db import make_engine, without_read_deadline
from farm.state.migrate import upgrade

PROCESSES = 8
CLAIMS_PER_PROCESS = 512
WARMUP_CLAIMS = 20
CLAIM_BATCH = 8  # FARM_LEASES_IN_FLIGHT's default: the keywords a crawl holds at once
BATCHES = (1, CLAIM_BATCH)
SIZES = (10_000, 1_000_000)
SPAWN = multiprocessing.get_context("spawn")


def _claimer(url, worker, batch, ready, start, results):
    engine = make_engine(url)
    store = KeywordStore(engine)
    try:
        for _ in range(WARMUP_CLAIMS):
            store.claim("boss", f"bench-{worker}", n=batch)
        ready.put(worker)
        start.wait()
        claimed = 0
        for _ in range(CLAIMS_PER_PROCESS // batch):
            claimed += len(store.claim("boss", f"bench-{worker}", n=batch))
        results.put((worker, claimed, time.monotonic(), None))
    except Exception as exc:  # reported by the parent
        results.put((worker, 0, time.monotonic(), repr(exc)))
    finally:
        engine.dispose()


def _fill(engine, rows: int, store: KeywordStore) -> None:
    """``rows`` keywords of boss, all crawled yesterday: the table on any day after the first."""
    yesterday = store.today() - timedelta(days=1)
    if engine.dialect.name == "postgresql":
        filler, _ = without_read_deadline(engine)  # a million rows take longer than FARM_DB_TIMEOUT
        with filler.begin() as conn:
            conn.execute(
                text(
                    "INSERT INTO keyword (source, city, job, crawl_status, last_requested_date, "
                    "last_completed_page, created_at, updated_at) "
                    "SELECT 'boss', 'city' || seq % 300, 'job' || seq, 'completed', :d, 3, "
                    f"now() AT TIME ZONE 'UTC', now() AT TIME ZONE 'UTC' FROM generate_series(1, {rows}) AS seq"
                ),
                {"d": yesterday},
            )
            conn.execute(text("ANALYZE keyword"))
        filler.dispose()
        return
    with engine.begin() as conn:
        conn.execute(
            text(
                "INSERT INTO keyword (source, city, job, crawl_status, last_requested_date, "
                "last_completed_page, created_at, updated_at) "
                f"SELECT 'boss', CONCAT('city', seq % 300), CONCAT('job', seq), 'completed', :d, 3, "
                f"UTC_TIMESTAMP(), UTC_TIMESTAMP() FROM seq_1_to_{rows}"
            ),
            {"d": yesterday},
        )
        conn.execute(text("ANALYZE TABLE keyword"))


def _explain_fresh_claim(engine, store: KeywordStore) -> tuple[str, str]:
    """The index and Extra of the claim query's fresh branch."""
    stmt = claimrules.candidates("fresh", 1, "mariadb")
    params = {
        "source": "boss",
        "day": store.today(),
        "max_retries": store.max_retries,
        "cutoff": store.clock() - timedelta(seconds=store.lease_timeout),
    }
    compiled = stmt.compile(engine, compile_kwargs={"literal_binds": False})
    with engine.connect() as conn:
        row = conn.exec_driver_sql("EXPLAIN " + str(compiled), compiled.construct_params(params)).first()
    return row.key, row.Extra or ""


def measure(rows: int, batches=BATCHES, database=mariadb_database) -> tuple[dict[int, float], str, str]:
    """Keywords claimed per second at ``rows`` keywords, per claim size in ``batches`` (one
    after the other on the same table); plus (MariaDB) the fresh branch's index and Extra."""
    with database() as url:
        upgrade(url)
        engine = make_engine(url, read_deadline=False)  # a million rows filled in one statement
        store = KeywordStore(engine)
        _fill(engine, rows, store)
        key, extra = _explain_fresh_claim(engine, store) if engine.dialect.name != "postgresql" else ("", "")
        engine.dispose()
        return {batch: _rate(url, batch) for batch in batches}, key, extra


def _rate(url: str, batch: int) -> float:
    """Keywords claimed per second by PROCESSES processes, ``batch`` a claim."""
    return race(_claimer, (url,), PROCESSES, batch, CLAIMS_PER_PROCESS)


def race(target, leading: tuple, workers: int, batch: int, each: int) -> float:
    """Keywords claimed per second by ``workers`` processes running ``target(*leading, worker,
    batch, ready, start, results)``, each claiming ``each`` keywords ``batch`` a claim: started
    and warmed before the clock starts, timed from the start signal to the last one done."""
    procs = []
    try:
        ready, results, start = SPAWN.Queue(), SPAWN.Queue(), SPAWN.Event()
        procs = [
            SPAWN.Process(target=target, args=(*leading, w, batch, ready, start, results), daemon=True)
            for w in range(workers)
        ]
        for p in procs:
            p.start()
        for _ in procs:
            ready.get(timeout=120)
        began = time.monotonic()
        start.set()
        total, ended = 0, began
        for _ in procs:
            worker, claimed, at, error = results.get(timeout=300)
            if error:
                raise RuntimeError(f"worker {worker} failed: {error}")
            total += claimed
            ended = max(ended, at)
        for p in procs:
            p.join(timeout=30)
        expected = workers * (each // batch) * batch
        if total != expected:
            raise RuntimeError(f"{total} keywords claimed, expected {expected}")
        return total / (ended - began)
    finally:
        for p in procs:
            if p.is_alive():
                p.terminate()
                p.join(timeout=5)


def run() -> list[tuple[str, float, str]]:
    rows = []
    rates = {}
    for size in SIZES:
        by_batch, key, extra = measure(size)
        rates[size] = by_batch[CLAIM_BATCH]
        for batch, rate in by_batch.items():
            rows.append((f"claims/s, {PROCESSES} processes, {size:,} keywords, {batch} a claim", rate, "claims/s"))
        rows.append((f"fresh claim at {size:,}: index {key}, filesort", float("filesort" in extra.lower()), "bool"))
    rows.append((f"ratio 10k rate / 1M rate, {CLAIM_BATCH} a claim", rates[SIZES[0]] / rates[SIZES[-1]], "x"))
    for size in SIZES:
        by_batch, _, _ = measure(size, database=postgresql_database)
        for batch, rate in by_batch.items():
            rows.append(
                (f"claims/s, {PROCESSES} processes, {size:,} keywords, {batch} a claim, PostgreSQL", rate, "claims/s")
            )
    return rows


if __name__ == "__main__":
    results = run()
    width = max(len(name) for name, _, _ in results)
    print(f"{'measure':<{width}}  {'value':>10}  unit")
    for name, value, unit in results:
        print(f"{name:<{width}}  {value:>10.2f}  {unit}")
