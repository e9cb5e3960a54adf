"""A fixed database for the report and export tests: a day's crawl of every kind and postings
seen, new and gone over a month, written straight into the tables."""

import random
from datetime import UTC, date, datetime, time, timedelta
from zoneinfo import ZoneInfo

from sqlalchemy import insert

from farm.salary import COLUMNS as SALARY
from farm.salary import columns
from farm.state.models import JobPostingRow, Keyword

TZ = ZoneInfo("Asia/Shanghai")
DAY = date(2026, 12, 2)
GONE_AFTER = 7
CITIES = ("北京", "上海", "深圳", "广州")
COMPANIES = ("某科技有限公司", "Acme <Data> & Co", "云端网络", "星辰软件", "蓝海数据", "</script><b>x</b>")
SALARIES = {
    "boss": ("15-25K·13薪", "8-13K", "25-50K·16薪", "面议", "150-200元/天", "10K以上"),
    "qcwy": ("7-9千", "8千-1.2万", "1.5-2.5万·13薪", "10-20万/年", "20-30元/小时", "薪资保密"),
    "zhilian": ("8000-16000元", "1.5-2.5万·20薪", "**-**元", "6001-8000元", "1-1.5万", "4000元以下"),
}
# source, city, job, date requested, status, pages, jobs, blocked claims, error, minutes from 08:00 to its end
KEYWORDS = [
    ("boss", "北京", "python", DAY, "completed", 3, 45, 0, None, 30),
    ("boss", "上海", "java", DAY, "failed", 1, 15, 0, "the site answered 500 three times", 42),
    ("boss", "深圳", "golang", DAY, "failed", 0, 0, 5, "blocked 5 times today", 95),
    ("boss", "广州", "python", DAY, "failed", 0, 0, 0, "the site answered 500 three times", 12),
    ("qcwy", "北京", "python", DAY, "partial", 7, 140, 2, None, 64),
    ("qcwy", "上海", "java", DAY, "completed", 12, 240, 0, None, 50),
    ("qcwy", "深圳", "golang", DAY, "crawling", 2, 40, 0, None, 70),
    ("zhilian", "北京", "python", DAY, "completed", 4, 80, 0, None, 20),
    ("zhilian", "广州", "java", DAY, "failed", 0, 0, 0, "<timeout> & gone", 25),
    ("zhilian", "上海", "golang", DAY - timedelta(days=1), "completed", 5, 100, 0, None, 40),
]


def utc(day: date, hour: int = 0, minute: int = 0) -> datetime:
    return datetime.combine(day, time(hour, minute), tzinfo=TZ).astimezone(UTC)


def fill(engine, postings: int = 240, seed: int = 29) -> None:
    """Write the keywords and ``postings`` postings into the (upgraded, empty) database."""
    rng = random.Random(seed)
    keyword_rows = []
    for at, (source, city, job, day, status, pages, jobs, blocks, error, minutes) in enumerate(KEYWORDS, 1):
        claimed = utc(day, 8, at)
        keyword_rows.append(
            {
                "id": at,
                "source": source,
                "city": city,
                "job": job,
                "last_requested_date": day,
                "last_requested_at": claimed,
                "crawl_status": status,
                "last_completed_page": pages,
                "jobs_found": jobs,
                "blocked_claims": blocks,
                "error_message": error,
                "crawl_started_at": claimed,
                "created_at": utc(DAY - timedelta(days=40)),
                "updated_at": claimed + timedelta(minutes=minutes),
            }
        )
    rows = []
    for at in range(postings):
        keyword = keyword_rows[rng.randrange(len(keyword_rows))]
        source = keyword["source"]
        first = utc(DAY - timedelta(days=rng.randrange(0, 30)), rng.randrange(24), rng.randrange(60))
        # last seen: on DAY (still listed), on the gone day, or some day between
        last_day = rng.choice((DAY, DAY, DAY - timedelta(days=GONE_AFTER), DAY - timedelta(days=rng.randrange(0, 30))))
        last = max(first, utc(last_day, rng.randrange(24), rng.randrange(60)))
        salary = rng.choice(SALARIES[source])
        rows.append(
            {
                "source": source,
                "job_id": f"{source}-{at}",
                "title": f"{keyword['job']} 工程师",
                "salary": salary,
                "company": rng.choice(COMPANIES),
                "city": rng.choice((keyword["city"], *CITIES)),
                "tags": ["Python", "带薪年假"] if at % 3 else None,
                "url": f"https://example.invalid/{at}",
                "keyword_id": keyword["id"],
                "first_seen_at": first,
                "last_seen_at": last,
                "published_at": first - timedelta(hours=3) if at % 4 else None,
                "raw": {"n": at},
                **dict(zip(SALARY, columns(source, salary))),
            }
        )
    with engine.begin() as conn:
        conn.execute(insert(Keyword.__table__), keyword_rows)
        conn.execute(insert(JobPostingRow.__table__), rows)
