"""The report bench's database: a day among a million postings, on SQLite, MariaDB or PostgreSQL.

At the current schema (``farm db upgrade``): 600 keywords crawled on DAY, and POSTINGS
postings first seen over the 30 days up to it, all seen on the day but one in twenty
(gone a week before), with the sandbox's salary forms and their numbers. The postings go
in by each database's fastest bulk path: ``executemany`` on SQLite, PyMySQL's multi-row
``INSERT`` on MariaDB, ``COPY`` on PostgreSQL.

    python -m bench.report_data URL [--postings 1000000]
"""

import argparse
import json
import random
import sqlite3
import time
from collections.abc import Iterator
from datetime import UTC, date, datetime, timedelta
from datetime import time as clock
from zoneinfo import ZoneInfo

from sqlalchemy import insert, make_url, select

from farm.salary import columns
from farm.state.db import make_engine
from farm.state.migrate import upgrade
from farm.state.models import Keyword

POSTINGS = 1_000_000
DAY = date(2026, 12, 2)
TZ = ZoneInfo("Asia/Shanghai")
BATCH = 20_000
CITIES = ("北京", "上海", "深圳", "广州", "杭州", "成都", "南京", "武汉", "西安", "苏州")
JOBS = (
    "python",
    "java",
    "前端",
    "golang",
    "数据分析",
    "算法",
    "测试",
    "运维",
    "产品经理",
    "UI设计",
    "c++",
    "android",
    "ios",
    "嵌入式",
    "销售",
    "会计",
    "人事",
    "电工",
    "客服",
    "运营",
)
SALARIES = {
    "boss": ("8-13K", "15-25K·13薪", "25-50K·16薪", "12-20K", "150-200元/天", "面议"),
    "qcwy": ("7-9千", "8千-1.2万", "1-1.5万", "1.5-2.5万·13薪", "10-20万/年", "面议"),
    "zhilian": ("8000-16000元", "6001-8000元", "1-1.5万", "1.5-2.5万·20薪", "**-**元", "4000元以下"),
}
SALARY_NAMES = ("salary_min", "salary_max", "salary_months", "salary_unit")
NAMES = (
    "source",
    "job_id",
    "title",
    "salary",
    "company",
    "city",
    "experience",
    "degree",
    "tags",
    "url",
    "keyword_id",
    "first_seen_at",
    "last_seen_at",
    *SALARY_NAMES,
)
TAGS = json.dumps(["五险一金", "带薪年假"], ensure_ascii=False)


def fill(url: str, postings: int = POSTINGS, seed: int = 29) -> float:
    """Upgrade the empty database at ``url`` and fill it; the seconds it took."""
    started = time.monotonic()
    upgrade(url)
    engine = make_engine(url, timeout=3600)
    try:
        ids = _keywords(engine)
    finally:
        engine.dispose()
    rows = _postings(ids, postings, random.Random(seed))
    backend = make_url(url).get_backend_name()
    if backend == "sqlite":
        _sqlite(make_url(url).database, rows)
    elif backend == "postgresql":
        _postgresql(url, rows)
    else:
        _mysql(url, rows)
    return time.monotonic() - started


def _keywords(engine) -> list[tuple[int, str, str, str]]:
    """The 600 keywords, crawled on DAY, one in seventeen failed; their (id, source, city, job)."""
    start = datetime.combine(DAY, clock(), tzinfo=TZ)
    now = start + timedelta(hours=8)
    keywords = [(source, city, job) for source in SALARIES for city in CITIES for job in JOBS]
    values = []
    for at, (source, city, job) in enumerate(keywords):
        status = ("failed", "partial", "completed")[min(at % 17, 2)]
        values.append(
            {
                "source": source,
                "city": city,
                "job": job,
                "last_requested_date": DAY,
                "last_requested_at": now,
                "crawl_status": status,
                "last_completed_page": 3,
                "jobs_found": 90,
                "created_at": now,
                "updated_at": start + timedelta(hours=8, minutes=at % 90),
                "error_message": "timeout" if status == "failed" else None,
            }
        )
    with engine.begin() as conn:
        conn.execute(insert(Keyword), values)
        k = Keyword.__table__.c
        return [tuple(row) for row in conn.execute(select(k.id, k.source, k.city, k.job).order_by(k.id))]


def _postings(ids: list, postings: int, rng: random.Random) -> Iterator[tuple]:
    """Each posting's values in NAMES' order, its times naive UTC."""
    start = datetime.combine(DAY, clock(), tzinfo=TZ).astimezone(UTC).replace(tzinfo=None)
    numbers = {(s, t): columns(s, t) for s, texts in SALARIES.items() for t in texts}
    companies = [f"公司{n:04d}" for n in range(4000)]
    seen = start + timedelta(hours=9)
    gone = start - timedelta(days=7) + timedelta(hours=9)
    first_seen = [start - timedelta(days=back, seconds=-s) for back in range(30) for s in range(0, 86400, 600)]
    for at in range(postings):
        keyword_id, source, city, job = rng.choice(ids)
        salary = rng.choice(SALARIES[source])
        first = rng.choice(first_seen)
        yield (
            source,
            str(at),
            f"{job}工程师",
            salary,
            rng.choice(companies),
            city,
            "3-5年",
            "本科",
            TAGS,
            f"https://example.invalid/{at}",
            keyword_id,
            first,
            gone if at % 20 == 0 and first < gone else seen,
            *numbers[(source, salary)],
        )


def _batches(rows: Iterator[tuple]) -> Iterator[list[tuple]]:
    batch = []
    for row in rows:
        batch.append(row)
        if len(batch) == BATCH:
            yield batch
            batch = []
    if batch:
        yield batch


def _sqlite_time(moment: datetime) -> str:
    # SQLAlchemy's SQLite DATETIME text: the report compares times as this text
    return moment.isoformat(" ", "microseconds")


def _sqlite(path: str, rows: Iterator[tuple]) -> None:
    late = NAMES.index("first_seen_at")
    sql = f"INSERT INTO job_posting ({', '.join(NAMES)}) VALUES ({', '.join('?' * len(NAMES))})"
    conn = sqlite3.connect(path)
    try:
        for batch in _batches(rows):
            conn.executemany(
                sql, [(*r[:late], _sqlite_time(r[late]), _sqlite_time(r[late + 1]), *r[late + 2 :]) for r in batch]
            )
        conn.commit()
    finally:
        conn.close()


def _mysql(url: str, rows: Iterator[tuple]) -> None:
    engine = make_engine(url, timeout=3600)
    sql = f"INSERT INTO job_posting ({', '.join(NAMES)}) VALUES ({', '.join(['%s'] * len(NAMES))})"
    try:
        conn = engine.raw_connection()
        try:
            cursor = conn.cursor()
            for batch in _batches(rows):
                cursor.executemany(sql, batch)  # PyMySQL sends it as multi-row INSERTs
                conn.commit()
        finally:
            conn.close()
    finally:
        engine.dispose()


def _postgresql(url: str, rows: Iterator[tuple]) -> None:
    engine = make_engine(url, timeout=3600)
    try:
        conn = engine.raw_connection()
        try:
            with conn.cursor() as cursor, cursor.copy(f"COPY job_posting ({', '.join(NAMES)}) FROM STDIN") as copy:
                for row in rows:
                    copy.write_row(row)
            conn.commit()
        finally:
            conn.close()
    finally:
        engine.dispose()


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("url", help="an empty database's URL")
    parser.add_argument("--postings", type=int, default=POSTINGS)
    args = parser.parse_args()
    print(f"{args.postings:,} postings in {fill(args.url, args.postings):.1f} s")


if __name__ == "__main__":
    main()
