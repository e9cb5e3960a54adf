"""A fourth site added as a package (tests/sites/hirehub/) crawled as farm's own are: `scrapy crawl hirehub`
against the sandbox, with FARM_SITE_PACKAGES naming the package to the crawl and --site-package to the
sandbox; every posting stored once, its salary read by the site's own forms."""

import pytest
from sqlalchemy import select

from farm import sites
from farm.sandbox.testing import SandboxProcess
from farm.state.db import make_engine
from farm.state.models import JobPostingRow
from tests.e2e.harness import keywords, prepare_db, run_crawl, stored_postings

pytestmark = pytest.mark.e2e

PACKAGE = "tests.sites.hirehub"
ROWS = [("hirehub", "北京", "python"), ("hirehub", "sh", "java")]


def test_a_fourth_site_package_is_crawled_and_its_postings_stored(sqlite_url, monkeypatch):
    monkeypatch.setattr(sites, "_REGISTRY", dict(sites._REGISTRY))
    sites.register_package(PACKAGE)  # the keywords are checked in this process as `farm keywords add` checks them
    prepare_db(sqlite_url, ROWS)
    with SandboxProcess(seed=5, postings=(23, 23), site_packages=[PACKAGE]) as sandbox:
        proc = run_crawl(
            "hirehub",
            sqlite_url,
            sandbox.url,
            FARM_SITE_PACKAGES=PACKAGE,
            FARM_HIREHUB_BASE_URL=sandbox.url,
            FARM_HIREHUB_RATE=0,
        )
        assert proc.returncode == 0, proc.output[-3000:]
        expected = [posting for _, city, job in ROWS for posting in sandbox.truth("hirehub", city, job)["ids"]]

    assert "farm hirehub: keywords 2 done, 0 in flight | pages 6 (" in proc.output
    assert sorted(stored_postings(sqlite_url, "hirehub")) == sorted(expected) and len(expected) == 46
    assert {(k["city"], k["job"]): (k["crawl_status"], k["jobs_found"]) for k in keywords(sqlite_url)} == {
        ("北京", "python"): ("completed", 23),
        ("上海", "java"): ("completed", 23),
    }
    engine = make_engine(sqlite_url)
    with engine.connect() as conn:
        pay = conn.execute(select(JobPostingRow.salary, JobPostingRow.salary_min, JobPostingRow.salary_max)).all()
    engine.dispose()
    assert len(pay) == 46 and all(f"{low}-{high}" == text for text, low, high in pay)  # bare yuan: its own form
