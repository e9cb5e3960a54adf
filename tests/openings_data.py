"""A small known database of three days: openings posted on one site or two, gone, new, still open, one
gone and back, and a keyword partial on the last day; written straight into the tables. The figures it
must give are worked out by hand in the tests that read it."""

from datetime import UTC, date, datetime, time, timedelta
from zoneinfo import ZoneInfo

from sqlalchemy import insert

from farm.state.models import JobPostingRow, Keyword, KeywordDay, PostingDay
from farm.state.posting_fields import POSTING_FIELDS

TZ = ZoneInfo("Asia/Shanghai")
DAY_1 = date(2026, 12, 1)
DAY_2, DAY_3 = DAY_1 + timedelta(days=1), DAY_1 + timedelta(days=2)
GONE_AFTER = 1
# id, source, city, job; then its status and postings found on each of the three days
KEYWORDS = [
    (1, "boss", "北京", "python", ("completed", 20), ("completed", 20), ("completed", 20)),
    (2, "qcwy", "北京", "python", ("completed", 40), ("completed", 40), ("completed", 10)),
    (3, "zhilian", "北京", "python", ("completed", 20), ("completed", 20), ("completed", 20)),
    (4, "qcwy", "上海", "java", ("completed", 20), ("completed", 20), ("partial", 20)),
]
# source, job id, keyword, title, company, salary (min, max), the days it was seen (first, last)
POSTINGS = [
    ("boss", "b1", 1, "Python开发工程师", "字节跳动", (20000, 30000), (DAY_1, DAY_3)),
    ("qcwy", "q1", 2, "【急招】Python开发工程师", "北京字节跳动科技有限公司", (25000, 35000), (DAY_1, DAY_3)),
    ("boss", "b2", 1, "Java工程师", "美团", (15000, 25000), (DAY_1, DAY_1)),
    ("qcwy", "q2", 2, "测试工程师（双休）", "北京京东世纪贸易有限公司", (10000, 15000), (DAY_1, DAY_2)),
    ("zhilian", "z1", 3, "测试工程师", "京东", (12000, 18000), (DAY_1, DAY_2)),
    ("zhilian", "z2", 3, "数据分析师", "百度", (18000, 28000), (DAY_3, DAY_3)),
    ("qcwy", "q3", 4, "Java开发", "携程", (15000, 20000), (DAY_1, DAY_1)),
    ("qcwy", "q4", 4, "Java架构师", "拼多多", (40000, 60000), (DAY_1, DAY_2)),
    ("boss", "b3", 1, "Go工程师", "阿里巴巴", (30000, 40000), (DAY_1, DAY_3)),
]
NOT_SEEN = {("boss", "b3"): DAY_2}  # gone on day 2 (its keyword completed without it), back on day 3
CITY = {1: "北京", 2: "北京", 3: "北京", 4: "上海"}


def at(day: date, hour: int) -> datetime:
    return datetime.combine(day, time(hour), tzinfo=TZ).astimezone(UTC)


def fill(engine) -> None:
    now = at(DAY_3, 12)
    keywords, days = [], []
    for keyword_id, source, city, job, *statuses in KEYWORDS:
        status, found = statuses[-1]
        keywords.append(
            dict(
                id=keyword_id,
                source=source,
                city=city,
                job=job,
                last_requested_date=DAY_3,
                crawl_status=status,
                jobs_found=found,
                created_at=now,
                updated_at=now,
            )
        )
        for day, (status, found) in zip((DAY_1, DAY_2, DAY_3), statuses, strict=True):
            days.append(
                dict(keyword_id=keyword_id, day=day, source=source, city=city, job=job, crawl_status=status,
                     jobs_found=found)
            )  # fmt: skip
    postings, sightings = [], []
    for posting_id, (source, job_id, keyword_id, title, company, (low, high), (first, last)) in enumerate(POSTINGS, 1):
        row = dict.fromkeys(POSTING_FIELDS)
        row.update(source=source, job_id=job_id, keyword_id=keyword_id, title=title, company=company, tags=[])
        row.update(city=CITY[keyword_id], salary_min=low, salary_max=high, salary_unit="month", raw={})
        postings.append({**row, "id": posting_id, "first_seen_at": at(first, 9), "last_seen_at": at(last, 10)})
        for day in (DAY_1, DAY_2, DAY_3):
            if first <= day <= last and NOT_SEEN.get((source, job_id)) != day:
                sightings.append({"posting_id": posting_id, "day": day, "source": source})
    with engine.begin() as connection:
        connection.execute(insert(Keyword), keywords)
        connection.execute(insert(KeywordDay), days)
        connection.execute(insert(JobPostingRow.__table__), postings)
        connection.execute(insert(PostingDay), sightings)
