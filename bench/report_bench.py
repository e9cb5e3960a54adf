"""`farm report` and `farm export` on a database of a million postings over 30 days.

Builds a SQLite database at the current schema (``farm db upgrade``) holding 600
keywords crawled on the day and POSTINGS postings first seen over the 30 days
up to it, all seen on the day but one in twenty (gone a week before), with the
sandbox's salary forms and their numbers; then runs each command as its own
process and reports its wall time and peak resident memory (the process's own
maximum RSS, from wait4).

    python -m bench.report_bench [--postings 1000000] [--keep DIR]
"""

import argparse
import os
import random
import sqlite3
import subprocess
import sys
import tempfile
import time
from datetime import UTC, date, datetime, timedelta
from datetime import time as clock
from pathlib import Path
from zoneinfo import ZoneInfo

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from farm.salary import columns  # noqa: E402
from farm.state.migrate import upgrade  # noqa: E402

POSTINGS = 1_000_000
DAY = date(2026, 12, 2)
TZ = ZoneInfo("Asia/Shanghai")
BATCH = 50_000
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


def _text_time(moment: datetime) -> str:
    # SQLAlchemy's SQLite DATETIME text, naive UTC
    return moment.astimezone(UTC).replace(tzinfo=None).isoformat(" ", "microseconds")


def build(path: Path, postings: int = POSTINGS, seed: int = 29) -> float:
    """Write the database; the seconds it took."""
    started = time.monotonic()
    upgrade(f"sqlite:///{path}")
    rng = random.Random(seed)
    start = datetime.combine(DAY, clock(), tzinfo=TZ)
    keywords = [(source, city, job) for source in SALARIES for city in CITIES for job in JOBS]
    conn = sqlite3.connect(path)
    try:
        now = _text_time(start + timedelta(hours=8))
        conn.executemany(
            "INSERT INTO keyword (source, city, job, last_requested_date, last_requested_at, crawl_status, "
            "last_completed_page, jobs_found, blocked_claims, retry_count, lease_token, pages_ahead, created_at, "
            "updated_at, error_message) VALUES (?, ?, ?, ?, ?, ?, ?, ?, 0, 0, 1, '', ?, ?, ?)",
            [
                (
                    source,
                    city,
                    job,
                    DAY.isoformat(),
                    now,
                    status,
                    3,
                    90,
                    now,
                    _text_time(start + timedelta(hours=8, minutes=at % 90)),
                    "timeout" if status == "failed" else None,
                )
                for at, (source, city, job) in enumerate(keywords)
                for status in (("failed", "partial", "completed")[min(at % 17, 2)],)
            ],
        )
        numbers = {(s, t): columns(s, t) for s, texts in SALARIES.items() for t in texts}
        companies = [f"公司{n:04d}" for n in range(4000)]
        seen = _text_time(start + timedelta(hours=9))
        gone = _text_time(start - timedelta(days=7) + timedelta(hours=9))
        sql = (
            "INSERT INTO job_posting (source, job_id, title, salary, company, city, area, experience, degree, "
            "tags, published_at, url, keyword_id, first_seen_at, last_seen_at, raw, salary_min, salary_max, "
            "salary_months, salary_unit) VALUES (?, ?, ?, ?, ?, ?, NULL, '3-5年', '本科', ?, NULL, ?, ?, ?, ?, "
            "NULL, ?, ?, ?, ?)"
        )
        first_seen = [
            _text_time(start - timedelta(days=back, seconds=-s)) for back in range(30) for s in range(0, 86400, 600)
        ]
        for low in range(0, postings, BATCH):
            rows = []
            for at in range(low, min(low + BATCH, postings)):
                keyword_id = rng.randrange(len(keywords)) + 1
                source, city, job = keywords[keyword_id - 1]
                salary = rng.choice(SALARIES[source])
                first = rng.choice(first_seen)
                rows.append(
                    (
                        source,
                        str(at),
                        f"{job}工程师",
                        salary,
                        rng.choice(companies),
                        city,
                        '["五险一金","带薪年假"]',
                        f"https://example.invalid/{at}",
                        keyword_id,
                        first,
                        gone if at % 20 == 0 and first < gone else seen,
                        *numbers[(source, salary)],
                    )
                )
            conn.executemany(sql, rows)
        conn.commit()
    finally:
        conn.close()
    return time.monotonic() - started


def measure(command: list[str], cwd: Path) -> tuple[float, float]:
    """(seconds, peak RSS in MiB) of one run of ``command``."""
    started = time.monotonic()
    process = subprocess.Popen(command, cwd=cwd, stdout=subprocess.DEVNULL)
    _, status, usage = os.wait4(process.pid, 0)
    process.returncode = os.waitstatus_to_exitcode(status)
    if process.returncode:
        raise RuntimeError(f"{' '.join(command)} exited with {process.returncode}")
    return time.monotonic() - started, usage.ru_maxrss / 1024


def run(postings: int = POSTINGS, keep: Path | None = None):
    directory = keep or Path(tempfile.mkdtemp(prefix="farm-report-bench-"))
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / "farm.db"
    if not path.exists():
        yield f"build the database ({postings:,} postings, executemany)", build(path, postings), "s"
    farm = [sys.executable, "-m", "farm", "--db-url", f"sqlite:///{path}"]
    commands = {
        "farm report": [*farm, "report", "--date", str(DAY), "--out", str(directory / "report.html")],
        "farm export --format csv": [
            *farm,
            "export",
            "--date",
            str(DAY),
            "--format",
            "csv",
            "--out",
            str(directory / "day.csv"),
        ],
        "farm export --format parquet": [
            *farm,
            "export",
            "--date",
            str(DAY),
            "--format",
            "parquet",
            "--out",
            str(directory / "day.parquet"),
        ],
    }
    for name, command in commands.items():
        seconds, peak = measure(command, directory)
        yield f"{name}: time", seconds, "s"
        yield f"{name}: peak memory", peak, "MiB"


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--postings", type=int, default=POSTINGS)
    parser.add_argument("--keep", type=Path, help="build (once) and keep the database in this directory")
    args = parser.parse_args()
    for name, value, unit in run(args.postings, args.keep):
        print(f"{name:<60} {value:>10.2f}  {unit}", flush=True)


if __name__ == "__main__":
    main()
