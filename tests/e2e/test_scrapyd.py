"""farm deployed to a real scrapyd with the real scrapyd-deploy, and run from its egg.

One scrapyd serves the module (see tests/e2e/scrapyd_server.py for how it is set up so that farm
can only be imported from the egg); each test has its own database, sandbox and job ids.
"""

import subprocess
import textwrap
from collections import Counter

import pytest

from farm.sandbox.testing import SandboxProcess
from tests.e2e.harness import (
    BASE_URL_SETTING,
    CRAWL_SETTINGS,
    expected_crawl,
    fetched_pages,
    keywords,
    prepare_db,
    served,
    state_writer_of,
    stored_postings,
    wait_until,
)
from tests.e2e.scrapyd_server import Scrapyd, last_stat

pytestmark = pytest.mark.e2e

CITIES = ("北京", "上海", "广州", "深圳")
JOBS = ("python", "java", "前端")
MAX_PAGES = 10


@pytest.fixture(scope="module")
def scrapyd_server(tmp_path_factory):
    server = Scrapyd(tmp_path_factory.mktemp("scrapyd"))
    try:
        server.start()
        server.deploy()
        yield server
    finally:
        server.stop()


@pytest.fixture
def scrapyd(scrapyd_server):
    """The module's scrapyd; a test that leaves a job running fails, and the job is ended."""
    yield scrapyd_server
    lingering = scrapyd_server.end_jobs()
    assert not lingering, f"job processes still running after the test: {lingering}"
    assert not scrapyd_server.impostor_imported(), "a process imported farm from scrapyd's working directory"


def job_settings(db_url, sandbox_url, source, **extra):
    """What schedule.json passes as setting=NAME=value: the database, the sandbox, no pace."""
    return {
        **CRAWL_SETTINGS,
        "FARM_DB_URL": db_url,
        BASE_URL_SETTING[source]: sandbox_url,
        f"FARM_{source.upper()}_MAX_PAGES": MAX_PAGES,
        **extra,
    }


def test_deploy_lists_the_three_spiders_of_the_egg(scrapyd):
    assert scrapyd.get("listversions.json", project="farm")["versions"] == [scrapyd.version]
    assert scrapyd.get("listspiders.json", project="farm")["spiders"] == ["boss", "qcwy", "zhilian"]


def test_two_sites_scheduled_with_settings_crawl_every_keyword_once(scrapyd, mariadb_url):
    rows = [(source, city, job) for source in ("qcwy", "zhilian") for city in CITIES[:2] for job in JOBS]
    prepare_db(mariadb_url, rows)
    with SandboxProcess(seed=21, postings=(60, 200)) as sandbox:
        for source in ("qcwy", "zhilian"):
            scrapyd.schedule(source, f"both-{source}", job_settings(mariadb_url, sandbox.url, source))
        scrapyd.wait_finished(["both-qcwy", "both-zhilian"], timeout=180)

        for source in ("qcwy", "zhilian"):
            log = scrapyd.job_log(source, f"both-{source}")
            assert not scrapyd.died(f"both-{source}"), log[-3000:]
            assert "Traceback" not in log and "Spider closed (finished)" in log, log[-3000:]
            assert f"farm: no {source} keyword left to claim for today" in log
            assert scrapyd.job_dir(source, f"both-{source}").is_dir()  # jobs_dir gave the job its JOBDIR
            pages, ids, per_keyword = expected_crawl(sandbox, source, rows, MAX_PAGES)
            progress = {
                (k["city"], k["job"]): (k["crawl_status"], k["last_completed_page"], k["total_pages"], k["jobs_found"])
                for k in keywords(mariadb_url)
                if k["source"] == source
            }
            assert progress == {key: ("completed", last, last, jobs) for key, (last, jobs) in per_keyword.items()}
            stored = stored_postings(mariadb_url, source)
            assert len(stored) == len(set(stored)) and set(stored) == ids
            assert fetched_pages(sandbox, source) == {page: 1 for page in pages}


def test_cancel_pauses_a_job_and_the_same_jobid_resumes_it_to_completion(scrapyd, mariadb_url):
    rows = [("qcwy", city, job) for city in CITIES for job in JOBS]
    prepare_db(mariadb_url, rows)
    jobid = "pause-qcwy"
    with SandboxProcess(seed=4, postings=(200, 200)) as sandbox:
        # slowed down, so that the keywords held at the cancel still have pages to fetch
        settings = job_settings(
            mariadb_url, sandbox.url, "qcwy", DOWNLOAD_DELAY=0.05, CONCURRENT_REQUESTS=4, FARM_LEASES_IN_FLIGHT=2
        )
        scrapyd.schedule("qcwy", jobid, settings)
        wait_until(lambda: served(sandbox) >= 25 or scrapyd.jobs("finished", jobid), 60, "25 pages served")
        running = scrapyd.jobs("running", jobid)
        assert running, "the job ended before it could be cancelled"

        # the state writer was started on the egg's farm, not on anything in scrapyd's directory
        writer = state_writer_of(running[0]["pid"])
        assert writer is not None
        environ = dict(item.split("=", 1) for item in open(f"/proc/{writer}/environ").read().split("\0") if "=" in item)
        assert environ["PYTHONPATH"].split(":")[0] == str(scrapyd.egg())

        assert scrapyd.cancel(jobid)["prevstate"] == "running"  # SIGINT
        scrapyd.wait_finished([jobid], timeout=60)
        assert not scrapyd.died(jobid), scrapyd.job_log("qcwy", jobid)[-3000:]
        log = scrapyd.job_log("qcwy", jobid)
        assert "Closing spider (shutdown)" in log and "releasing" in log
        assert "farm: paused; to resume, run the same command with the same JOBDIR=" in log
        held = {row["id"] for row in keywords(mariadb_url) if row["crawl_status"] == "partial"}
        states = Counter(row["crawl_status"] for row in keywords(mariadb_url))
        assert "crawling" not in states and held, states
        # JOBDIR: farm's checkpoint, not Scrapy's disk queues (unsafe after a kill)
        assert last_stat(log, "scheduler/enqueued/disk") == 0
        assert (scrapyd.job_dir("qcwy", jobid) / "farm-checkpoint.sqlite").exists()
        at_cancel = fetched_pages(sandbox, "qcwy")

        scrapyd.schedule("qcwy", jobid, settings)  # the same jobid: the same JOBDIR
        scrapyd.wait_finished([jobid], timeout=180, times=2)
        assert not scrapyd.died(jobid), scrapyd.job_log("qcwy", jobid)[-3000:]
        resumed = scrapyd.job_log("qcwy", jobid)[len(log) :]
        # the keywords held at the cancel are taken back at once, with their pages
        assert f"took back {len(held)} keyword(s) at once" in resumed
        assert last_stat(resumed, "farm/checkpoint/taken_back") == len(held)
        assert "farm: no qcwy keyword left to claim for today" in resumed and "Spider closed (finished)" in resumed

        pages, ids, per_keyword = expected_crawl(sandbox, "qcwy", rows, MAX_PAGES)
        counts = fetched_pages(sandbox, "qcwy")
    assert set(counts) == pages
    # a page in flight at the cancel may be fetched again, once, and only such a page
    again = {page for page, count in counts.items() if count > 1}
    assert max(counts.values()) <= 2 and again <= set(at_cancel), again
    assert len(again) <= settings["CONCURRENT_REQUESTS"], again
    assert {row["crawl_status"] for row in keywords(mariadb_url)} == {"completed"}
    stored = stored_postings(mariadb_url, "qcwy")
    assert len(stored) == len(set(stored)) and set(stored) == ids


def test_a_running_jobid_scheduled_again_is_refused_and_the_running_job_finishes_alone(scrapyd, mariadb_url):
    rows = [("qcwy", city, job) for city in CITIES[:2] for job in JOBS[:2]]
    prepare_db(mariadb_url, rows)
    jobid = "twice-qcwy"
    # every page answers after 2 s until the second job is refused: the first is still running then
    with SandboxProcess(
        seed=5, postings=(60, 200), fault_rate=1, fault_kinds=["slow"], fault_seed=1, slow_ms=2000
    ) as sandbox:
        settings = job_settings(mariadb_url, sandbox.url, "qcwy", CONCURRENT_REQUESTS=4, FARM_LEASES_IN_FLIGHT=2)
        scrapyd.schedule("qcwy", jobid, settings)
        wait_until(lambda: served(sandbox) >= 2 or scrapyd.jobs("finished", jobid), 60, "2 pages served")
        (first,) = scrapyd.jobs("running", jobid)

        scrapyd.schedule("qcwy", jobid, settings)  # the same jobid: the same JOBDIR, while the first runs
        scrapyd.wait_finished([jobid], timeout=60)
        assert [job["pid"] for job in scrapyd.jobs("running", jobid)] == [first["pid"]]
        assert scrapyd.died(jobid)  # the second exited non-zero
        refusals = [line for line in scrapyd.job_log("qcwy", jobid).splitlines() if "ERROR: farm: JOBDIR=" in line]
        assert len(refusals) == 1 and f"is in use by pid {first['pid']} on host " in refusals[0], refusals
        assert (scrapyd.job_dir("qcwy", jobid) / "farm-checkpoint.sqlite").exists()

        sandbox.set_faults()
        scrapyd.wait_finished([jobid], timeout=120, times=2)
        log = scrapyd.job_log("qcwy", jobid)
        assert "Spider closed (finished)" in log and last_stat(log, "farm/checkpoint/taken_back") == 0
        pages, ids, _ = expected_crawl(sandbox, "qcwy", rows, MAX_PAGES)
        assert fetched_pages(sandbox, "qcwy") == {page: 1 for page in pages}
    assert {row["crawl_status"] for row in keywords(mariadb_url)} == {"completed"}
    stored = stored_postings(mariadb_url, "qcwy")
    assert len(stored) == len(set(stored)) and set(stored) == ids
    assert not (scrapyd.job_dir("qcwy", jobid) / "farm-checkpoint.sqlite").exists()


def test_a_job_on_a_database_not_upgraded_fails_at_start_naming_farm_db_upgrade(scrapyd, mariadb_url):
    with SandboxProcess(seed=1) as sandbox:
        scrapyd.schedule("qcwy", "not-upgraded", job_settings(mariadb_url, sandbox.url, "qcwy"))
        scrapyd.wait_finished(["not-upgraded"], timeout=60)
        assert served(sandbox) == 0
    log = scrapyd.job_log("qcwy", "not-upgraded")
    assert "is empty (no farm schema)" in log and "run `farm db upgrade`" in log, log[-3000:]


def test_package_data_is_read_from_the_egg_and_upgrading_from_it_says_where_to_run_it(scrapyd):
    """What a crawl reads of farm's package data works from the zip (the Lua scripts of the shared
    queue: a shared crawl is not run here); migrating from it fails with the way out."""
    script = textwrap.dedent(
        f"""
        import sys
        from types import SimpleNamespace
        sys.path.insert(0, {str(scrapyd.egg())!r})
        import farm
        assert farm.__file__.startswith({str(scrapyd.egg())!r}), farm.__file__
        from farm.crawl.backends.redis.calls import SCRIPTS
        from farm.crawl.backends.redis.queue import SharedQueue
        from farm.demo import KEYWORDS_FILE

        class Server:
            def register_script(self, text):
                return text

        queue = SharedQueue(Server(), SimpleNamespace(name="qcwy"), "farm:%(spider)s", "w", None)
        assert all(queue.scripts[name].strip() for name in SCRIPTS), queue.scripts
        assert KEYWORDS_FILE.read_text(encoding="utf-8").startswith("source,city,job")
        from farm.state.migrate import MigrationsNotOnDisk, upgrade
        try:
            upgrade("sqlite://")
        except MigrationsNotOnDisk as exc:
            print(exc)
        """
    )
    result = subprocess.run(
        [scrapyd.python, "-P", "-c", script], cwd=scrapyd.home, capture_output=True, text=True, timeout=60
    )
    assert result.returncode == 0, result.stderr
    assert "run `farm db upgrade` from an installed farm" in result.stdout
