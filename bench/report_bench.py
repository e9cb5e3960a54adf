"""`farm report` on a million postings over 30 days on SQLite, MariaDB and PostgreSQL, within
its read deadline; `farm export` of that day on SQLite.

Each database is built by bench.report_data (600 keywords crawled on the day, POSTINGS
postings first seen over the 30 days up to it, all seen on the day but one in twenty, the
sandbox's salary forms), then statistics are gathered (ANALYZE; VACUUM ANALYZE on PostgreSQL:
the state its autovacuum reaches after a bulk load). Each command runs as its own process
under the default FARM_DB_TIMEOUT (5 s a statement: MariaDB's read timeout, PostgreSQL's
statement_timeout), its wall time and peak resident memory (the process's own maximum RSS,
from wait4) reported; a command that fails ends the bench.

    python -m bench.report_bench [--postings 1000000] [--keep DIR]
"""

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from sqlalchemy import make_url, text  # noqa: E402

from bench.mariadb import mariadb_database  # noqa: E402
from bench.postgresql import postgresql_database  # noqa: E402
from bench.report_data import DAY, POSTINGS, fill  # noqa: E402
from farm.state.db import make_engine  # noqa: E402

DEADLINE = "5"  # FARM_DB_TIMEOUT's default, seconds


def analyze(url: str) -> None:
    """Gather the planner's statistics, as the database does by itself after a bulk load."""
    engine = make_engine(url, timeout=3600)
    try:
        with engine.connect().execution_options(isolation_level="AUTOCOMMIT") as conn:
            backend = make_url(url).get_backend_name()
            statement = {"postgresql": "VACUUM ANALYZE job_posting", "sqlite": "ANALYZE"}.get(
                backend, "ANALYZE TABLE job_posting, keyword"
            )
            conn.execute(text(statement))
    finally:
        engine.dispose()


def measure(command: list[str], cwd: Path) -> tuple[float, float]:
    """(seconds, peak RSS in MiB) of one run of ``command``."""
    started = time.monotonic()
    env = {**os.environ, "FARM_DB_TIMEOUT": DEADLINE}
    process = subprocess.Popen(command, cwd=cwd, stdout=subprocess.DEVNULL, env=env)
    _, status, usage = os.wait4(process.pid, 0)
    process.returncode = os.waitstatus_to_exitcode(status)
    if process.returncode:
        raise RuntimeError(f"{' '.join(command)} exited with {process.returncode}")
    return time.monotonic() - started, usage.ru_maxrss / 1024


def report(url: str, directory: Path, postings: int, name: str, build: bool = True):
    """Fill the empty database at ``url`` (unless ``build`` is false: filled already) and time
    `farm report` on it."""
    if build:
        yield f"{name}: build ({postings:,} postings, bulk insert)", fill(url, postings), "s"
    analyze(url)
    out = directory / f"report-{name}.html"
    command = [sys.executable, "-m", "farm", "--db-url", url, "report", "--date", str(DAY), "--out", str(out)]
    seconds, peak = measure(command, directory)
    yield f"{name}: farm report: time (deadline {DEADLINE} s a statement)", seconds, "s"
    yield f"{name}: farm report: peak memory", peak, "MiB"


def run(postings: int = POSTINGS, keep: Path | None = None):
    directory = keep or Path(tempfile.mkdtemp(prefix="farm-report-bench-"))
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / "farm.db"
    url = f"sqlite:///{path}"
    yield from report(url, directory, postings, "SQLite", build=not path.exists())
    with mariadb_database() as mariadb:
        yield from report(mariadb, directory, postings, "MariaDB")
    with postgresql_database() as postgresql:
        yield from report(postgresql, directory, postings, "PostgreSQL")
    farm = [sys.executable, "-m", "farm", "--db-url", url]
    for fmt in ("csv", "parquet"):
        command = [*farm, "export", "--date", str(DAY), "--format", fmt, "--out", str(directory / f"day.{fmt}")]
        seconds, peak = measure(command, directory)
        yield f"SQLite: farm export --format {fmt}: time", seconds, "s"
        yield f"SQLite: farm export --format {fmt}: peak memory", peak, "MiB"


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--postings", type=int, default=POSTINGS)
    parser.add_argument("--keep", type=Path, help="build (once) and keep the database in this directory")
    args = parser.parse_args()
    for name, value, unit in run(args.postings, args.keep):
        print(f"{name:<60} {value:>10.2f}  {unit}", flush=True)


if __name__ == "__main__":
    main()
