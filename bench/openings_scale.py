"""The day's `farm openings update` against millions of stored openings, on SQLite, MariaDB and PostgreSQL:
1,000 and 100,000 new postings against 1 million stored and copies of it (3, 10 million).

The million is bench.openings_update_bench's (the sandbox's postings, made without rendering, each (site,
id) once, put into openings by `farm openings update`, which learns and stores the weights), built once
into ``--cache`` and kept there. A larger store is that million written again ``copies`` times by the
database itself (INSERT … SELECT): copy k has ids shifted past the ones before, its job ids marked ``~k``
and its titles and title keys ending in ``第k组``, so each copy is other jobs of the same companies whose
titles share most bigrams (and so the blocking keys) with the million's: a key names about ``copies``
times the openings it names at a million, as history does when the same companies post kindred titles
every day; its blocking keys are computed by farm.openings.cluster.blocking_keys. MariaDB and PostgreSQL
get the million copied from the SQLite file, then the copies the same way, then their statistics.

The new postings are the pool bench.openings_update_bench keeps apart from the million, spread over the
same keywords. Each count is written, updated in a new process (bench.openings_update_bench.timed_update:
time from the call to its commit, the process's peak memory) and then taken out again (its postings,
openings and keys), so every count meets the same store. The time to make the store is printed apart.

    python -m bench.openings_scale [--stored 1000000,3000000] [--new 1000,100000] [--backend sqlite]
    python -m bench.openings_scale --stored 10000000 --new 100000      # the day against 10 million
    python -m bench.openings_scale --backend mariadb,postgresql --stored 1000000
"""

import argparse
import math
import os
import pickle
import shutil
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from sqlalchemy import delete, func, insert, select, text  # noqa: E402

from bench.mariadb import mariadb_database  # noqa: E402
from bench.openings_bench import million  # noqa: E402
from bench.openings_stored_bench import DAY_2, _rows, _write  # noqa: E402
from bench.openings_update_bench import build, timed_update  # noqa: E402
from bench.postgresql import postgresql_database  # noqa: E402
from farm.openings.cluster import blocking_keys  # noqa: E402
from farm.openings.titles import bigrams  # noqa: E402
from farm.state.db import make_engine  # noqa: E402
from farm.state.migrate import HEAD, current_revision, upgrade  # noqa: E402
from farm.state.models import (  # noqa: E402
    CompanyPair,
    JobPostingRow,
    OpeningKey,
    OpeningPosting,
    OpeningRow,
    OpeningWaiting,
    OpeningWeight,
)

CACHE = Path(os.environ.get("FARM_BENCH_CACHE", "/tmp/farm-openings-scale"))
MILLION = 1_000_000
POOL = 100_000
ROWS = 50_000  # rows read or written at once
LONG_DEADLINE = "3600"  # seconds a statement may take where the default is too short
THRESHOLD = 0.85  # `farm openings update`'s default, as the million's openings were made
POSTINGS, OPENINGS, KEYS, MEMBERS, WAITING = (
    JobPostingRow.__table__,
    OpeningRow.__table__,
    OpeningKey.__table__,
    OpeningPosting.__table__,
    OpeningWaiting.__table__,
)
TABLES = (POSTINGS, OPENINGS, KEYS, MEMBERS, CompanyPair.__table__, OpeningWeight.__table__)


def the_million(cache: Path = CACHE, unit: int = MILLION, most: int = POOL) -> tuple[Path, list, float]:
    """The million's SQLite file (``unit`` postings), the pool of ``most`` new postings and the seconds it
    took to make them (0: kept)."""
    database, pool_file = cache / f"stored{unit}-{most}.db", cache / f"pool{unit}-{most}.pkl"
    if database.exists() and pool_file.exists():
        return database, pickle.loads(pool_file.read_bytes()), 0.0
    cache.mkdir(parents=True, exist_ok=True)
    started = time.perf_counter()
    postings = list({(p.source, p.job_id): p for p in million(unit + most)}.values())
    pool = postings[:: len(postings) // most][:most]
    taken = {(p.source, p.job_id) for p in pool}
    making = cache / f"stored{unit}-{most}.making.db"
    making.unlink(missing_ok=True)
    build(f"sqlite:///{making}", [p for p in postings if (p.source, p.job_id) not in taken], len(postings))
    making.rename(database)
    pool_file.write_bytes(pickle.dumps(pool))
    return database, pool, time.perf_counter() - started


def highest(engine) -> tuple[int, int]:
    """The highest posting id and opening id stored."""
    with engine.connect() as connection:
        posting = connection.execute(select(func.max(POSTINGS.c.id))).scalar_one() or 0
        opening = connection.execute(select(func.max(OPENINGS.c.id))).scalar_one() or 0
    return posting, opening


def copy_million(source: Path, url: str) -> None:
    """The million's rows copied from its SQLite file into the (migrated) database ``url``."""
    reader, writer = make_engine(f"sqlite:///{source}"), make_engine(url, timeout=3600)
    for table in TABLES:
        order = [column for column in table.primary_key.columns]
        with reader.connect() as read:
            rows = read.execute(select(table).order_by(*order)).mappings()
            while chunk := rows.fetchmany(ROWS):
                with writer.begin() as write:
                    write.execute(insert(table), [dict(row) for row in chunk])
    reader.dispose()
    writer.dispose()


def add_copy(engine, number: int, postings: int, openings: int) -> None:
    """Copy ``number`` of the first ``postings`` postings and ``openings`` openings (see the docstring)."""
    mark = f"第{number}组"
    shifted = {"id": POSTINGS.c.id + number * postings, "job_id": POSTINGS.c.job_id + f"~{number}"}
    shifted["title"] = func.coalesce(POSTINGS.c.title, "") + mark
    with engine.begin() as connection:
        connection.execute(
            insert(POSTINGS).from_select(
                [column.name for column in POSTINGS.c],
                select(*[shifted.get(column.name, column) for column in POSTINGS.c]).where(POSTINGS.c.id <= postings),
            )
        )
        titled = {"id": OPENINGS.c.id + number * openings, "title_key": OPENINGS.c.title_key + mark}
        connection.execute(
            insert(OPENINGS).from_select(
                [column.name for column in OPENINGS.c],
                select(*[titled.get(column.name, column) for column in OPENINGS.c]).where(OPENINGS.c.id <= openings),
            )
        )
        connection.execute(
            insert(MEMBERS).from_select(
                ["posting_id", "opening_id", "why"],
                select(
                    MEMBERS.c.posting_id + number * postings, MEMBERS.c.opening_id + number * openings, MEMBERS.c.why
                ).where(MEMBERS.c.posting_id <= postings),
            )
        )
    for start in range(0, openings, ROWS):
        with engine.begin() as connection:
            made = connection.execute(
                select(OPENINGS.c.id, OPENINGS.c.city, OPENINGS.c.company_key, OPENINGS.c.title_key).where(
                    OPENINGS.c.id > start, OPENINGS.c.id <= min(start + ROWS, openings)
                )
            ).all()
            keys = [
                {
                    "block_key": key,
                    "company_key": company,
                    "title_grams": len(bigrams(title + mark)),
                    "opening_id": opening_id + number * openings,
                }
                for opening_id, city, company, title in made
                for key in blocking_keys(city, company, title + mark, THRESHOLD)
            ]
            if keys:
                connection.execute(insert(KEYS), keys)


def statistics(url: str) -> None:
    """The planner's statistics gathered, as a database does by itself after a bulk load."""
    engine = make_engine(url, timeout=3600)
    backend = engine.dialect.name
    names = ", ".join(table.name for table in (*TABLES, WAITING))
    statement = {"sqlite": "ANALYZE", "postgresql": "ANALYZE"}.get(backend, f"ANALYZE TABLE {names}")
    with engine.connect().execution_options(isolation_level="AUTOCOMMIT") as connection:
        connection.execute(text(statement))
    if backend == "postgresql":  # rows written with their ids: the sequence moves past them
        with engine.begin() as connection:
            connection.execute(
                text("SELECT setval(pg_get_serial_sequence('job_posting', 'id'), max(id)) FROM job_posting")
            )
    engine.dispose()


def grow(url: str, million_file: Path, copies: int, made: int) -> None:
    """The store at ``url`` grown from ``made`` copies of the million (0: an empty database, which gets the
    million's rows) to ``copies``."""
    if not made:
        upgrade(url)
        copy_million(million_file, url)
    engine = make_engine(url, timeout=3600)
    postings, openings = highest(engine)
    postings, openings = postings // max(made, 1), openings // max(made, 1)
    for number in range(max(made, 1), copies):
        add_copy(engine, number, postings, openings)
    settle(engine)
    engine.dispose()
    statistics(url)


def settle(engine) -> None:
    """The postings copied in with their openings wait no more (the database made each wait as it was
    inserted, farm.openings.waiting)."""
    with engine.begin() as connection:
        connection.execute(delete(WAITING).where(WAITING.c.posting_id.in_(select(MEMBERS.c.posting_id))))


def migrated_million(million_file: Path) -> float:
    """The million's file brought to farm's newest schema (kept from an older farm): the seconds it took."""
    url = f"sqlite:///{million_file}"
    if current_revision(url) == HEAD:
        return 0.0
    started = time.perf_counter()
    upgrade(url)
    return time.perf_counter() - started


def take_out(url: str, posting: int, opening: int) -> None:
    """The postings written after ``posting`` and the openings opened after ``opening`` deleted."""
    engine = make_engine(url, timeout=3600)
    with engine.begin() as connection:
        connection.execute(delete(MEMBERS).where(MEMBERS.c.posting_id > posting))
        connection.execute(delete(WAITING).where(WAITING.c.posting_id > posting))
        connection.execute(delete(KEYS).where(KEYS.c.opening_id > opening))
        connection.execute(delete(OPENINGS).where(OPENINGS.c.id > opening))
        connection.execute(delete(POSTINGS).where(POSTINGS.c.id > posting))
    engine.dispose()


def updates(url: str, label: str, pool: list, news: list[int]):
    """Each count of ``news`` written, updated in a new process, and taken out again."""
    engine = make_engine(url, timeout=3600)
    posting, opening = highest(engine)
    with engine.connect() as connection:
        openings = connection.execute(select(func.count()).select_from(OPENINGS)).scalar_one()
    engine.dispose()
    for new in news:
        engine = make_engine(url, timeout=3600)
        _write(engine, _rows(pool[:: len(pool) // new][:new], DAY_2))
        engine.dispose()
        name = f"{label}: {new:,} new against {openings:,} openings ({posting:,} postings)"
        try:
            result = timed_update(url)
        except subprocess.CalledProcessError as failed:  # as `farm openings update` fails: say why, then
            # again with a statement deadline long enough for the waiting postings' scan
            print(f"{name}: failed under FARM_DB_TIMEOUT's default: {failed.stderr.strip().splitlines()[-1]}")
            name += f" (FARM_DB_TIMEOUT={LONG_DEADLINE})"
            os.environ["FARM_DB_TIMEOUT"] = LONG_DEADLINE
            try:
                result = timed_update(url)
            finally:
                del os.environ["FARM_DB_TIMEOUT"]
        take_out(url, posting, opening)
        yield name, result["seconds"], "s"
        yield f"{name}: peak memory", result["peak_mb"], "MB"


def databases(backend: str, folder: Path):
    """A context giving a new, empty database of ``backend`` (dropped or deleted afterwards) and whether it
    is a file to copy the million's into."""
    if backend == "mariadb":
        return mariadb_database(), False
    if backend == "postgresql":
        return postgresql_database(), False
    return _sqlite(folder), True


class _sqlite:
    def __init__(self, folder: Path):
        self.path = folder / "stored.db"

    def __enter__(self) -> str:
        return f"sqlite:///{self.path}"

    def __exit__(self, *exc) -> None:
        for suffix in ("", "-wal", "-shm"):
            Path(f"{self.path}{suffix}").unlink(missing_ok=True)


def run(
    sizes=(MILLION, 3 * MILLION), news=(1000, POOL), backends=("sqlite",), cache: Path = CACHE, unit: int = MILLION
):
    million_file, pool, seconds = the_million(cache, unit, max(*news, min(POOL, unit // 10)))
    if seconds:
        yield "the million stored made (postings, openings, updates)", seconds, "s"
    if seconds := migrated_million(million_file):
        yield "the million stored migrated to farm's newest schema (its postings waiting, its keys)", seconds, "s"
    for backend in backends:
        context, is_file = databases(backend, cache)
        with context as url:
            made = 0
            if is_file:  # the million's file is the store's first copy
                shutil.copyfile(million_file, url.removeprefix("sqlite:///"))
                made = 1
            for size in sorted(sizes):  # the store grows from one size to the next
                copies = max(1, math.ceil(size / unit))
                started = time.perf_counter()
                grow(url, million_file, copies, made)
                made = copies
                yield f"{backend}: {copies} × {unit:,} postings stored made", time.perf_counter() - started, "s"
                yield from updates(url, backend, pool, list(news))


def everywhere():
    """`make bench`'s: 1 and 3 million stored on SQLite, 1 million on MariaDB and PostgreSQL."""
    yield from run((MILLION, 3 * MILLION), backends=("sqlite",))
    yield from run((MILLION,), backends=("mariadb", "postgresql"))


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--stored", default=f"{MILLION},{3 * MILLION}")
    parser.add_argument("--new", default=f"1000,{POOL}")
    parser.add_argument("--backend", default="sqlite", help="sqlite, mariadb, postgresql (comma-separated)")
    parser.add_argument("--cache", type=Path, default=CACHE, help="where the million is kept between runs")
    parser.add_argument("--unit", type=int, default=MILLION, help="the postings of one copy (a smaller one to try)")
    args = parser.parse_args()
    sizes, news = ([int(n) for n in text.split(",")] for text in (args.stored, args.new))
    for name, value, unit in run(sizes, news, args.backend.split(","), args.cache, args.unit):
        print(f"{name:<96} {value:>10.2f}  {unit}", flush=True)


if __name__ == "__main__":
    main()
