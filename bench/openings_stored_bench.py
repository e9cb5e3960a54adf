"""Openings stored: the time of `farm openings update` on a day's new postings against the openings
stored, beside a rebuild from every posting, and of reading the stored openings' lives (`farm openings
days`, the report).

The postings are bench.openings_bench's (the sandbox's, made without rendering), each (site, id) once,
written into a SQLite database: nine in ten first seen on day 1, every tenth on day 2. Day 1 is updated
from nothing, then day 2 against the openings stored; the rebuild clusters all of them again. One
process, SQLite on local disk.

    python -m bench.openings_stored_bench [--postings 200000]
"""

import argparse
import sys
import tempfile
import time
from datetime import UTC, date, datetime
from datetime import time as clock
from pathlib import Path
from zoneinfo import ZoneInfo

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from sqlalchemy import insert  # noqa: E402

from bench.openings_bench import million  # noqa: E402
from farm.openings.picture import picture  # noqa: E402
from farm.openings.stored import update_openings  # noqa: E402
from farm.state.db import make_engine  # noqa: E402
from farm.state.migrate import upgrade  # noqa: E402
from farm.state.models import JobPostingRow  # noqa: E402
from farm.state.posting_fields import POSTING_FIELDS  # noqa: E402

TZ = ZoneInfo("Asia/Shanghai")
DAY_1 = date(2026, 12, 1)
DAY_2 = date(2026, 12, 2)
BATCH = 20_000


def _rows(postings, day: date) -> list[dict]:
    seen = datetime.combine(day, clock(9), tzinfo=TZ).astimezone(UTC)
    rows = []
    for p in postings:
        row = dict.fromkeys(POSTING_FIELDS)
        row.update(source=p.source, job_id=p.job_id, title=p.title, company=p.company, city=p.city, area=p.area)
        row.update(degree=p.degree, salary_min=p.salary_min, salary_max=p.salary_max, tags=[], raw={})
        rows.append({**row, "first_seen_at": seen, "last_seen_at": seen})
    return rows


def _write(engine, rows: list[dict]) -> None:
    with engine.begin() as connection:
        for start in range(0, len(rows), BATCH):
            connection.execute(insert(JobPostingRow.__table__), rows[start : start + BATCH])


def _timed(fn):
    started = time.perf_counter()
    result = fn()
    return result, time.perf_counter() - started


def run(total: int = 200_000):
    postings = list({(p.source, p.job_id): p for p in million(total)}.values())  # a site's id once
    day_2 = postings[::10]
    day_1 = [p for at, p in enumerate(postings) if at % 10]
    with tempfile.TemporaryDirectory() as folder:
        url = f"sqlite:///{folder}/farm.db"
        upgrade(url)
        engine = make_engine(url)
        _write(engine, _rows(day_1, DAY_1))
        first, seconds = _timed(lambda: update_openings(engine))
        yield f"update, day 1: {first.postings:,} postings into {first.openings:,} openings", seconds, "s"
        _write(engine, _rows(day_2, DAY_2))
        second, seconds = _timed(lambda: update_openings(engine))
        yield f"update, day 2: {second.postings:,} new against {first.stored:,} stored", seconds, "s"
        again, seconds = _timed(lambda: update_openings(engine, rebuild=True))
        yield f"rebuild: {again.postings:,} postings into {again.stored:,} openings", seconds, "s"
        assert again.stored == second.stored  # no pair learnt on day 2 renames a day 1 company here
        seen, seconds = _timed(lambda: picture(engine, TZ, 2, DAY_2))
        yield f"lives of {len(seen.openings):,} stored openings read", seconds, "s"
        engine.dispose()


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--postings", type=int, default=200_000)
    args = parser.parse_args()
    for name, value, unit in run(args.postings):
        print(f"{name:<62} {value:>12.3f}  {unit}", flush=True)


if __name__ == "__main__":
    main()
