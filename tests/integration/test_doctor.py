"""`farm doctor`, run as the real command (`python -m farm doctor`) with the settings in its environment."""

import http.server
import os
import shutil
import socket
import subprocess
import sys
import threading
from datetime import UTC, date, datetime, timedelta
from pathlib import Path
from zoneinfo import ZoneInfo

import pytest

from farm.state.migrate import HEAD, upgrade
from tests.integration.test_cli import key, run, set_rows, upgraded

CHECKS = [
    "settings",
    "database",
    "schema",
    "stale leases",
    "failing keywords",
    "timezone",
    "work backend",
    "browser",
    "browser passes as a person",
    "site boss",
    "site qcwy",
    "site zhilian",
]
SITES = ("BOSS", "QCWY", "ZHILIAN")


@pytest.fixture
def site_url():
    """A local web server standing in for the three sites (doctor only asks whether they answer)."""

    class Quiet(http.server.BaseHTTPRequestHandler):
        def do_GET(self):
            self.send_response(200)
            self.end_headers()

        def log_message(self, *args):
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Quiet)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()
        thread.join(10)


def closed_port():
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def doctor(tmp_path, db_url, site_url, **settings):
    """Run `farm doctor`; (exit code, {check name: (status, message)}, output)."""
    env = {name: value for name, value in os.environ.items() if not name.startswith("FARM_")}
    env.update({f"FARM_{site}_BASE_URL": site_url for site in SITES})
    env["FARM_BROWSER_PAGES"] = "0"  # no browser started but where a test asks for it: seconds each
    env.update(FARM_DB_URL=db_url, **settings)
    proc = subprocess.run(
        [sys.executable, "-m", "farm", "doctor", "--timeout", "3"],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert "Traceback" not in proc.stdout + proc.stderr, proc.stderr
    lines = proc.stdout.splitlines()
    checks = {}
    for line in lines[:-1]:
        status, rest = line[:4].strip(), line[6:]  # "warn  name: message"
        name, message = rest.split(": ", 1)
        checks[name] = (status, message)
    return proc.returncode, checks, proc.stdout


def test_healthy_sqlite_setup_is_all_ok(sqlite_url, tmp_path, site_url):
    upgraded(sqlite_url)
    code, checks, output = doctor(tmp_path, sqlite_url, site_url)
    assert code == 0, output
    assert list(checks) == CHECKS
    assert {name: status for name, (status, _) in checks.items()} == {name: "ok" for name in CHECKS}
    assert checks["database"][1] == f"{sqlite_url} answers"
    assert checks["schema"][1] == f"at revision {HEAD} (head)"
    assert checks["site qcwy"][1] == f"{site_url} answers (HTTP 200)"
    assert checks["timezone"][1].startswith("FARM_TIMEZONE=Asia/Shanghai: today there is ")
    assert output.splitlines()[-1] == "0 failures, 0 warnings"


@pytest.mark.skipif(
    shutil.which("chromium") is None, reason="no Chromium on the PATH (Debian: apt-get install chromium)"
)
def test_the_machine_s_browser_passes_botd_as_a_person(sqlite_url, tmp_path, site_url):
    upgraded(sqlite_url)
    code, checks, output = doctor(tmp_path, sqlite_url, site_url, FARM_BROWSER_PAGES="2")
    status, message = checks["browser passes as a person"]
    assert code == 0 and status == "ok", output
    assert message.startswith("BotD says not a bot, no tell found; Chromium at ")


def test_unreachable_site_with_keywords_fails_where_its_crawl_would_fail(sqlite_url, tmp_path, site_url):
    upgraded(sqlite_url)
    run(sqlite_url, "keywords", "add", "boss", "北京", "python")
    down = f"http://127.0.0.1:{closed_port()}"
    code, checks, output = doctor(tmp_path, sqlite_url, site_url, FARM_BOSS_BASE_URL=down)
    assert code == 1, output
    status, message = checks["site boss"]
    assert status == "fail" and "crawls of boss on this machine will fail" in message
    assert output.splitlines()[-1] == "1 failure, 0 warnings"
    # through proxies, doctor cannot tell: a warning that says so
    code, checks, output = doctor(tmp_path, sqlite_url, site_url, FARM_BOSS_BASE_URL=down, FARM_PROXIES=site_url)
    assert code == 0, output
    assert checks["site boss"][0] == "warn" and "FARM_PROXIES" in checks["site boss"][1]


def test_the_browser_is_found_and_started_and_a_bad_one_fails_naming_the_setting(sqlite_url, tmp_path, site_url):
    upgraded(sqlite_url)
    code, checks, output = doctor(tmp_path, sqlite_url, site_url, FARM_BROWSER_PAGES="2")
    status, message = checks["browser"]
    assert code == 0 and status == "ok" and "starts headless (version " in message, output
    browser = {"FARM_BROWSER_PAGES": "2"}
    code, checks, output = doctor(tmp_path, sqlite_url, site_url, **browser, FARM_BROWSER_EXECUTABLE="/opt/no/chromium")
    assert code == 1, output
    status, message = checks["browser"]
    assert status == "fail" and message.startswith("FARM_BROWSER_EXECUTABLE='/opt/no/chromium' is not found")
    code, checks, output = doctor(tmp_path, sqlite_url, site_url, **browser, FARM_BROWSER_EXECUTABLE="/bin/true")
    assert code == 1, output
    status, message = checks["browser"]
    assert status == "fail" and message.startswith("FARM_BROWSER_EXECUTABLE='/bin/true' (/bin/true) did not start")
    code, checks, output = doctor(tmp_path, sqlite_url, site_url, FARM_BROWSER_PAGES="0")
    assert checks["browser"][0] == "ok" and "no browser" in checks["browser"][1]


def test_unreachable_site_with_no_keywords_is_a_warning_not_a_failure(sqlite_url, tmp_path, site_url):
    upgraded(sqlite_url)
    down = f"http://127.0.0.1:{closed_port()}"
    code, checks, output = doctor(tmp_path, sqlite_url, site_url, FARM_BOSS_BASE_URL=down)
    assert code == 0, output
    status, message = checks["site boss"]
    assert status == "warn"
    assert message.startswith(f"{down} cannot be reached from here (") and "FARM_BOSS_BASE_URL" in message
    assert checks["site qcwy"][0] == "ok"
    assert output.splitlines()[-1] == "0 failures, 1 warning"


@pytest.mark.parametrize("driver", ["mysql+pymysql", "postgresql+psycopg"])
def test_unreachable_database_fails_and_skips_what_needs_it(driver, tmp_path, site_url):
    url = f"{driver}://root:s3cret@127.0.0.1:{closed_port()}/farm"
    code, checks, output = doctor(tmp_path, url, site_url)
    assert code == 1
    status, message = checks["database"]
    assert status == "fail"
    assert message.startswith(f"cannot connect to {driver}://root:***@127.0.0.1:")
    assert "start the database, or fix FARM_DB_URL" in message
    assert "s3cret" not in output
    assert "schema" not in checks and "stale leases" not in checks
    assert checks["timezone"][0] == "ok" and checks["site boss"][0] == "ok"  # the rest is still checked


def test_missing_sqlite_file_fails_and_is_not_created(tmp_path, site_url):
    path = tmp_path / "nope" / "farm.db"
    code, checks, _ = doctor(tmp_path, f"sqlite:///{path}", site_url)
    assert code == 1
    assert checks["database"] == ("fail", checks["database"][1])
    assert f"no SQLite file at {path}: run `farm db upgrade`" in checks["database"][1]
    assert not path.exists() and not path.parent.exists()


def test_healthy_postgresql_setup_is_all_ok(postgresql_url, tmp_path, site_url):
    upgraded(postgresql_url)
    code, checks, output = doctor(tmp_path, postgresql_url, site_url)
    assert code == 0, output
    assert {name: status for name, (status, _) in checks.items()} == {name: "ok" for name in CHECKS}
    assert checks["database"][1] == f"{postgresql_url} answers"
    assert checks["schema"][1] == f"at revision {HEAD} (head)"


def test_database_behind_the_schema_fails_with_the_fix(every_db_url, tmp_path, site_url):
    db_url = every_db_url
    upgrade(db_url, "0002")
    code, checks, _ = doctor(tmp_path, db_url, site_url)
    assert code == 1
    assert checks["schema"] == (
        "fail",
        f"at revision 0002, behind this farm's {HEAD}: run `farm db upgrade` (crawls refuse to start until then)",
    )


def test_empty_database_has_no_schema(sqlite_url, tmp_path, site_url):
    Path(sqlite_url.removeprefix("sqlite:///")).touch()
    code, checks, _ = doctor(tmp_path, sqlite_url, site_url)
    assert code == 1
    assert checks["schema"][0] == "fail" and "no farm schema" in checks["schema"][1]


def test_stale_lease_is_a_warning_naming_its_crawler(db_url, tmp_path, site_url):
    upgraded(db_url)
    run(db_url, "keywords", "add", "boss", "北京", "python")
    run(db_url, "keywords", "add", "boss", "北京", "java")
    now = datetime.now(UTC)
    set_rows(
        db_url,
        key("boss", "北京", "python"),
        crawl_status="crawling",
        crawler_id="dead:1",
        heartbeat_at=now - timedelta(hours=2, minutes=5),
    )
    set_rows(db_url, key("boss", "北京", "java"), crawl_status="crawling", crawler_id="alive:2", heartbeat_at=now)
    code, checks, _ = doctor(tmp_path, db_url, site_url)
    assert code == 0
    status, message = checks["stale leases"]
    assert status == "warn"
    assert message.startswith("1 keyword(s) crawling with no heartbeat for over 1800s (oldest heartbeat 2h0")
    assert "held by dead:1)" in message and "alive:2" not in message
    assert "`farm reap`" in message
    # judged by FARM_LEASE_TIMEOUT: with 3 hours, a heartbeat of 2 hours ago is not stale
    _, checks, _ = doctor(tmp_path, db_url, site_url, FARM_LEASE_TIMEOUT="10800")
    assert checks["stale leases"][0] == "ok"


def test_keywords_failed_for_the_day_are_a_warning_with_an_example(sqlite_url, tmp_path, site_url):
    from zoneinfo import ZoneInfo

    upgraded(sqlite_url)
    for job in ("python", "java", "go"):
        run(sqlite_url, "keywords", "add", "qcwy", "上海", job)
    today = datetime.now(ZoneInfo("Asia/Shanghai")).date()
    set_rows(
        sqlite_url,
        key("qcwy", "上海", "python"),
        crawl_status="failed",
        last_requested_date=today,
        retry_count=3,
        error_message="HTTP 500 at https://we.51job.com/api/job/search-pc?x=1",
    )
    set_rows(
        sqlite_url,
        key("qcwy", "上海", "java"),
        crawl_status="failed",
        last_requested_date=today,
        retry_count=1,
        error_message="HTTP 500",
    )  # retries left: not failed for the day
    set_rows(
        sqlite_url,
        key("qcwy", "上海", "go"),
        crawl_status="failed",
        last_requested_date=date(2024, 5, 1),
        error_message="blocked 5 times today; last: waf",
    )
    code, checks, _ = doctor(tmp_path, sqlite_url, site_url)
    assert code == 0
    status, message = checks["failing keywords"]
    assert status == "warn"
    assert message.startswith(
        "1 failed today with no claim left (0 of them blocked 5 times, the others after 3 retries); "
        "1 failed on their last day before today and have not been claimed since; "
        f"e.g. qcwy 上海/python (#1, {today}): HTTP 500 at https://we.51job.com/api/job/search-pc?x=1; "
        "see `farm keywords list --status failed`"
    )


def test_bad_timezone_fails(sqlite_url, tmp_path, site_url):
    upgraded(sqlite_url)
    code, checks, _ = doctor(tmp_path, sqlite_url, site_url, FARM_TIMEZONE="Mars/Olympus")
    assert code == 1
    assert checks["timezone"] == (
        "fail",
        "FARM_TIMEZONE='Mars/Olympus' is not a known time zone (try 'Asia/Shanghai'): "
        "set FARM_TIMEZONE to an IANA zone name",
    )
    assert "failing keywords" not in checks  # "today" cannot be told


def test_redis_down_when_set_fails_and_up_is_ok(sqlite_url, tmp_path, site_url):
    upgraded(sqlite_url)
    down = f"redis://127.0.0.1:{closed_port()}/0"
    code, checks, _ = doctor(tmp_path, sqlite_url, site_url, FARM_REDIS_URL=down)
    assert code == 1
    status, message = checks["work backend"]
    assert status == "fail" and message.startswith(f"RedisBackend: {down} does not answer: ")
    assert message.endswith("start Redis there, or fix or unset FARM_REDIS_URL")

    code, checks, _ = doctor(tmp_path, sqlite_url, site_url, FARM_REDIS_URL="redis://127.0.0.1:6379/0")
    assert code == 0
    assert checks["work backend"] == ("ok", "RedisBackend: redis://127.0.0.1:6379/0 answers")


def test_no_password_in_any_form_is_printed(tmp_path, site_url):
    db = f"mysql+pymysql://root@127.0.0.1:{closed_port()}/farm?password=topsecret1"
    redis_url = "redis://:top/secret2@127.0.0.1:6379/0"
    code, checks, output = doctor(tmp_path, db, site_url, FARM_REDIS_URL=redis_url)
    assert code == 1
    assert "topsecret1" not in output and "secret2" not in output and "top/" not in output
    assert checks["database"][0] == "fail" and "?password=***" in checks["database"][1]
    assert checks["work backend"][0] in ("fail", "warn")  # not reached, or the settings refuse the URL


def test_a_redis_password_given_as_a_query_parameter_is_masked(sqlite_url, tmp_path, site_url):
    upgraded(sqlite_url)
    code, checks, output = doctor(
        tmp_path, sqlite_url, site_url, FARM_REDIS_URL="redis://127.0.0.1:6379/0?password=topsecret3"
    )
    assert "topsecret3" not in output


def test_a_bad_setting_fails_the_settings_check_in_one_line(sqlite_url, tmp_path, site_url):
    upgraded(sqlite_url)
    code, checks, output = doctor(tmp_path, sqlite_url, site_url, FARM_LEASE_TIMEOUT="30m")
    assert code == 1
    status, message = checks["settings"]
    assert status == "fail" and message.startswith("FARM_LEASE_TIMEOUT='30m' cannot be used")
    assert checks["database"][0] == "ok"


def test_a_port_that_is_not_a_number_is_one_line(tmp_path, site_url):
    code, checks, output = doctor(tmp_path, "mysql+pymysql://root@127.0.0.1:abc/farm", site_url)
    assert code == 1
    assert checks["database"][0] == "fail" and "port that is not a number" in checks["database"][1]


def test_stored_control_characters_are_printed_escaped(sqlite_url, tmp_path, site_url):
    upgraded(sqlite_url)
    run(sqlite_url, "keywords", "add", "qcwy", "北京", "python")
    set_rows(
        sqlite_url,
        key("qcwy", "北京", "python"),
        crawl_status="failed",
        retry_count=9,
        last_requested_date=datetime.now(ZoneInfo("Asia/Shanghai")).date(),
        error_message="boom\x1b[2J\x1b]0;owned\x07",
    )
    code, checks, output = doctor(tmp_path, sqlite_url, site_url)
    assert "\x1b" not in output and "\x07" not in output
    assert "boom\\e[2J" in output
