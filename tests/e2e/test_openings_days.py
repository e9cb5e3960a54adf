"""Two days of real crawls: the sandbox retires some openings and adds others on day 2; `farm openings days`
counts the new and the gone exactly, and a keyword that did not complete on day 2 proves nothing gone."""

import json

import pytest
from click.testing import CliRunner

from farm.cli import farm
from farm.sandbox import crossposts
from farm.sandbox.cities import city_named
from farm.sandbox.data import World
from farm.sandbox.market import ENVIRONMENT
from farm.sandbox.testing import SandboxProcess
from tests.e2e.days import move_a_day_back
from tests.e2e.harness import prepare_db, run_crawl

pytestmark = pytest.mark.e2e

SITES, JOBS, SEED, POSTINGS = ("qcwy", "zhilian"), ("python", "java", "测试"), 0, (30, 30)
DAY_2 = {"retire": {"python": 4, "测试": 4}, "hire": {"python": 3}}


def listed(monkeypatch, market, jobs=JOBS):
    """The sandbox's (site, id) -> true opening for the jobs in 北京 under the market's changes."""
    monkeypatch.setenv(ENVIRONMENT, json.dumps(market))
    world, city = World(seed=SEED, postings=POSTINGS), city_named("北京")
    return {
        (site, slot[0]): crossposts.opening_of(site, "北京", job, slot)
        for site in SITES
        for job in jobs
        for slot in world.slots(site, city, job)
    }


def crawl_day(db_url, fail_keywords=None):
    """The day's crawls, then the day's postings into the openings stored."""
    with SandboxProcess(seed=SEED, postings=POSTINGS, fail_keywords=fail_keywords) as sandbox:
        for site in SITES:
            proc = run_crawl(site, db_url, sandbox.url)
            assert proc.returncode == 0, proc.output[-3000:]
    updated = CliRunner().invoke(farm, ["--db-url", db_url, "openings", "update"])
    assert updated.exit_code == 0, updated.output


def test_new_and_gone_openings_over_two_days_and_a_keyword_not_completed_proves_nothing(sqlite_url, monkeypatch):
    first, second = listed(monkeypatch, {}), listed(monkeypatch, DAY_2)
    retired = listed(monkeypatch, {}, ["python"]).keys() - listed(monkeypatch, DAY_2, ["python"]).keys()
    assert len(retired) == 8 and not retired & listed(monkeypatch, {}, ["java", "测试"]).keys()
    prepare_db(sqlite_url, [(site, "北京", job) for site in SITES for job in JOBS])
    monkeypatch.delenv(ENVIRONMENT)
    crawl_day(sqlite_url)
    move_a_day_back(sqlite_url)
    monkeypatch.setenv(ENVIRONMENT, json.dumps(DAY_2))
    crawl_day(sqlite_url, fail_keywords={"测试": "http500"})  # 测试 ends failed: its 4 retired prove nothing

    result = CliRunner().invoke(
        farm, ["--db-url", sqlite_url, "openings", "days", "--days", "2", "--gone-after", "1", "--json"]
    )
    assert result.exit_code == 0, result.output
    day_1, day_2 = json.loads(result.output)["days"]
    assert (day_1["new_postings"], day_1["new_openings"]) == (len(first), len(set(first.values())))
    assert (day_1["gone_postings"], day_1["gone_openings"]) == (0, 0)
    python_gone = {first[key] for key in retired} - set(second.values())
    assert (day_2["gone_postings"], day_2["gone_openings"]) == (len(retired), len(python_gone))
    new = second.keys() - first.keys()
    assert (day_2["new_postings"], day_2["new_openings"]) == (len(new), len(set(second.values()) - set(first.values())))
    assert day_2["new_postings"] > 0 and day_2["gone_openings"] > 0
