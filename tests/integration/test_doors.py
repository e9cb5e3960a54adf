"""farm.state.doors: how each site's door stood on a day, from the keyword table and the day's runs."""

import json
from datetime import UTC, date, datetime
from zoneinfo import ZoneInfo

import pytest
from sqlalchemy import insert, update

from farm.state.db import make_engine
from farm.state.doors import doors, waiting
from farm.state.models import CrawlRun, Keyword
from farm.state.store import KeywordStore
from farm.state.tallies import Limits
from tests.migrated import migrated

TZ = ZoneInfo("Asia/Shanghai")
DAY = date(2026, 12, 4)


def at(hour, minute):
    return datetime(2026, 12, 4, hour, minute, tzinfo=TZ).astimezone(UTC)


@pytest.mark.parametrize("db", ["sqlite", "mariadb"])
def test_a_wall_that_holds_keywords_sessions_earned_and_a_refused_crawl_are_told(db, request):
    url = request.getfixturevalue(f"{db}_url")
    migrated(url)
    KeywordStore(make_engine(url)).add_keywords(
        [("boss", "北京", j) for j in ("a", "b", "c")] + [("qcwy", "上海", "d")]
    )
    engine = make_engine(url)
    k = Keyword.__table__.c
    with engine.begin() as conn:
        for job, minute in (("a", 12), ("b", 30)):
            conn.execute(
                update(Keyword)
                .where(k.job == job)
                .values(
                    crawl_status="partial",
                    last_requested_date=DAY,
                    updated_at=at(9, minute),
                    error_message=f"blocked: boss_security_check_slider (boss_37 x) at http://x/{job} (still blocked)",
                )
            )
        runs = [
            (
                "boss",
                "farm_site_refused",
                at(9, 40),
                {"boss_37": 11},
                {"farm/session/earned": 2, "farm/wall/met/boss_security_check": 9},
            ),
            ("qcwy", "finished", at(10, 0), {}, {"farm/session/earned": 1, "farm/wall/met/qcwy_acw_sc__v2": 3}),
            ("qcwy", "finished", at(11, 0), {}, {"farm/session/earned": 2, "farm/wall/met/qcwy_acw_sc__v2": 2}),
        ]
        for source, status, ended, refusals, stats in runs:
            conn.execute(
                insert(CrawlRun).values(
                    source=source,
                    crawler_id="h:1",
                    machine="h",
                    started_at=at(9, 0),
                    ended_at=ended,
                    status=status,
                    refusals=json.dumps(refusals),
                    coverage="{}",
                    stats=json.dumps(stats),
                )
            )
        # failed with no claim left today: done, as farm stats counts it; failed with one left: waiting
        conn.execute(
            update(Keyword).where(k.job == "c").values(crawl_status="failed", retry_count=3, last_requested_date=DAY)
        )
        conn.execute(
            update(Keyword).where(k.job == "d").values(crawl_status="failed", retry_count=1, last_requested_date=DAY)
        )
    with engine.connect() as conn:
        found = doors(conn, ["boss", "qcwy", "zhilian"], DAY, TZ)
        left = waiting(conn, ["boss", "qcwy", "zhilian"], DAY, Limits(max_retries=3, max_blocked_claims=5))
    engine.dispose()
    assert found["boss"].lines(waiting=14, tz=TZ) == [
        "boss: blocked by slider since 09:12 (boss_security_check_slider: 2 keywords partial), 14 keywords waiting",
        "boss: the site refused the crawl at 09:40 (boss_37 ×11); 14 keywords waiting",
        "boss: boss_security_check passed in the browser: 2 sessions earned, pages fetched plain with them",
    ]
    assert found["qcwy"].lines(waiting=0, tz=TZ) == [
        "qcwy: qcwy_acw_sc__v2 passed in the browser: 3 sessions earned, pages fetched plain with them"
    ]
    assert found["qcwy"].walls == {"qcwy_acw_sc__v2": 5}
    assert found["zhilian"].lines(waiting=3, tz=TZ) == []
    assert left == {"boss": 2, "qcwy": 1, "zhilian": 0}  # no run, no wall: nothing to say
