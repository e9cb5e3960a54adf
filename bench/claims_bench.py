"""Claims per second with 8 concurrent processes on MariaDB, at 10,000 and at 1,000,000 keywords;
and the same on PostgreSQL.

    .venv/bin/python -m bench.claims_bench      # FARM_BENCH_MYSQL=mysql+pymysql://root@127.0.0.1:3306
                                                # FARM_BENCH_POSTGRESQL=postgresql+psycopg://postgres@127.0.0.1:5432

Each size runs in a throwaway database (dropped afterwards). The processes are started,
connected and warmed before the clock starts; then each claims CLAIMS_PER_PROCESS
keywords one at a time (n=1), and the rate is all claims over the wall time from the
start signal to the last process done. The ratio (10k rate / 1M rate) shows whether a
claim's cost grows with the table: it should stay near 1, because the claim walks
ix_keyword_fresh from its start instead of sorting the table.
"""

import multiprocessing
import time
from datetime import timedelta

from sqlalchemy import text

from bench.mariadb import mariadb_database
from bench.postgresql import postgresql_database
from farm.state import KeywordStore
from farm.state.db import make_engine, without_read_deadline
from farm.state.migrate import upgrade

PROCESSES = 8
CLAIMS_PER_PROCESS = 500
WARMUP_CLAIMS = 20
SIZES = (10_000, 1_000_000)
SPAWN = multiprocessing.get_context("spawn")


def _claimer(url, worker, ready, start, results):
    engine = make_engine(url)
    store = KeywordStore(engine)
    try:
        for _ in range(WARMUP_CLAIMS):
            store.claim("boss", f"bench-{worker}")
        ready.put(worker)
        start.wait()
        claimed = 0
        for _ in range(CLAIMS_PER_PROCESS):
            claimed += len(store.claim("boss", f"bench-{worker}"))
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
    stmt = store._candidates("fresh", 1)
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


def measure(rows: int, database=mariadb_database) -> tuple[float, str, str]:
    """Claims per second at ``rows`` keywords; plus (MariaDB) the fresh branch's index and Extra."""
    with database() as url:
        procs = []
        try:
            upgrade(url)
            engine = make_engine(url)
            store = KeywordStore(engine)
            _fill(engine, rows, store)
            key, extra = _explain_fresh_claim(engine, store) if engine.dialect.name != "postgresql" else ("", "")
            ready, results, start = SPAWN.Queue(), SPAWN.Queue(), SPAWN.Event()
            procs = [
                SPAWN.Process(target=_claimer, args=(url, w, ready, start, results), daemon=True)
                for w in range(PROCESSES)
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
                    raise RuntimeError(f"claimer {worker} failed: {error}")
                total += claimed
                ended = max(ended, at)
            for p in procs:
                p.join(timeout=30)
            if total != PROCESSES * CLAIMS_PER_PROCESS:
                raise RuntimeError(f"{total} claims, expected {PROCESSES * CLAIMS_PER_PROCESS}")
            engine.dispose()
            return total / (ended - began), key, extra
        finally:
            for p in procs:
                if p.is_alive():
                    p.terminate()
                    p.join(timeout=5)


def run() -> list[tuple[str, float, str]]:
    rows = []
    rates = {}
    for size in SIZES:
        rate, key, extra = measure(size)
        rates[size] = rate
        rows.append((f"claims/s, {PROCESSES} processes, {size:,} keywords", rate, "claims/s"))
        rows.append((f"fresh claim at {size:,}: index {key}, filesort", float("filesort" in extra.lower()), "bool"))
    rows.append(("ratio 10k rate / 1M rate", rates[SIZES[0]] / rates[SIZES[-1]], "x"))
    for size in SIZES:
        rate, _, _ = measure(size, postgresql_database)
        rows.append((f"claims/s, {PROCESSES} processes, {size:,} keywords, PostgreSQL", rate, "claims/s"))
    return rows


if __name__ == "__main__":
    results = run()
    width = max(len(name) for name, _, _ in results)
    print(f"{'measure':<{width}}  {'value':>10}  unit")
    for name, value, unit in results:
        print(f"{name:<{width}}  {value:>10.2f}  {unit}")
