"""A bad setting, or a crawl that cannot start, as the operator meets it: the real `farm` and
`scrapy crawl` commands, each one line on stderr naming the problem, never a traceback."""

import os
import socket
import subprocess
import sys

import pytest

BAD = [
    ("FARM_LEASE_TIMEOUT", "30m"),
    ("FARM_MAX_RETRIES", "1.5"),
    ("FARM_RETRY_DELAY", "nan"),
    ("FARM_RETRY_DELAY", "inf"),
    ("FARM_METRICS_PORT", "abc"),
]


def run(tmp_path, argv, **settings):
    env = {name: value for name, value in os.environ.items() if not name.startswith("FARM_")}
    env.update(
        {"FARM_DB_URL": f"sqlite:///{tmp_path / 'farm.db'}", "SCRAPY_SETTINGS_MODULE": "farm.settings", **settings}
    )
    return subprocess.run(
        [sys.executable, "-m", *argv], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=60
    )


def one_line(proc) -> str:
    assert proc.returncode != 0
    assert "Traceback" not in proc.stderr + proc.stdout
    lines = proc.stderr.splitlines()
    assert len(lines) == 1, proc.stderr
    return lines[0]


@pytest.mark.parametrize("name, value", BAD)
def test_farm_names_a_bad_setting_in_one_line(tmp_path, name, value):
    proc = run(tmp_path, ["farm", "reap"], **{name: value})
    line = one_line(proc)
    assert proc.returncode == 2
    assert line.startswith(f"Error: {name}={value!r} cannot be used: it takes ")


@pytest.mark.parametrize("name, value", BAD[::2])
def test_scrapy_crawl_names_a_bad_setting_in_one_line(tmp_path, name, value):
    proc = run(tmp_path, ["scrapy", "crawl", "qcwy"], **{name: value})
    line = one_line(proc)
    assert proc.returncode == 2
    assert line.startswith(f"farm: {name}={value!r} cannot be used: it takes ")


@pytest.mark.parametrize(
    "argv, value",
    [(["farm", "reap"], "-60"), (["farm", "api", "--port", "0"], "0"), (["scrapy", "crawl", "boss"], "0")],
)
def test_a_lease_timeout_that_is_not_positive_is_refused_everywhere(tmp_path, argv, value):
    line = one_line(run(tmp_path, argv, FARM_LEASE_TIMEOUT=value))
    assert f"FARM_LEASE_TIMEOUT={value!r}" in line and "at least 1" in line


@pytest.mark.parametrize(
    "argv, option", [(["farm", "db", "upgrade"], "charset=bogus"), (["scrapy", "crawl", "boss"], "connect_timeout=abc")]
)
def test_a_bad_driver_option_is_one_line(tmp_path, argv, option):
    url = f"mysql+pymysql://root:pw123456@127.0.0.1:3306/farm?{option}"
    line = one_line(run(tmp_path, argv, FARM_DB_URL=url))
    assert "FARM_DB_URL=" in line and option.split("=")[0] in line and "pw123456" not in line


@pytest.mark.parametrize("argv", [["farm", "reap"], ["scrapy", "crawl", "boss"]])
def test_a_proxies_file_is_never_echoed(tmp_path, argv):
    secret = tmp_path / "shadow"
    secret.write_text("operator:$6$s4ltys4lt$h4shh4shh4sh:19000:0:99999:7:::\n")
    line = one_line(run(tmp_path, argv, FARM_PROXIES=str(secret)))
    assert "FARM_PROXIES" in line and "line 1" in line
    assert "operator" not in line and "s4lt" not in line and "h4sh" not in line


def test_a_crawl_that_cannot_reach_its_database_says_so_once(tmp_path):
    with socket.socket() as sock:  # a port nobody listens on
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    proc = run(
        tmp_path, ["scrapy", "crawl", "boss"], FARM_DB_URL=f"mysql+pymysql://root:pw123456@127.0.0.1:{port}/farm"
    )
    assert proc.returncode == 1
    assert "cannot reach the database at FARM_DB_URL='mysql+pymysql://root:***@127.0.0.1:" in proc.stderr
    assert "Task exception was never retrieved" not in proc.stderr
    assert "Traceback" not in proc.stderr and "pw123456" not in proc.stderr


@pytest.mark.parametrize("scheduler", ["scrapy.core.scheduler.Scheduler", "farm.no_such.Scheduler"])
def test_a_farm_spider_under_another_scheduler_is_refused_in_one_line(tmp_path, scheduler):
    # farm's scheduler starts the crawl's parts when it opens: under another the crawl would claim
    # keywords and never write them
    proc = run(tmp_path, ["scrapy", "crawl", "qcwy", "-s", f"SCHEDULER={scheduler}"])
    assert proc.returncode == 1
    said = [line for line in proc.stderr.splitlines() if f"farm: SCHEDULER={scheduler!r}" in line]
    assert len(said) == 1 and ("is not farm's" in said[0] or "cannot be loaded" in said[0]), proc.stderr
    assert "Traceback" not in proc.stderr and "Task exception was never retrieved" not in proc.stderr


@pytest.mark.parametrize("under, why", [("a-file", "Not a directory"), ("n" * 300, "File name too long")])
def test_a_jobdir_that_cannot_be_created_is_one_line_naming_it(tmp_path, under, why):
    (tmp_path / "a-file").write_text("")
    jobdir = f"{tmp_path}/{under}/job"
    proc = run(tmp_path, ["scrapy", "crawl", "qcwy", "-s", f"JOBDIR={jobdir}"])
    line = one_line(proc)
    assert proc.returncode == 2
    assert line.startswith(f"farm: JOBDIR={jobdir!r} cannot be created: {why}"), line


def test_a_setting_given_with_s_beats_the_environment_which_beats_the_default(tmp_path):
    def value(name, *argv, **env):
        proc = run(tmp_path, ["scrapy", "settings", "--get", name, *argv], **env)
        assert proc.returncode == 0, proc.stderr
        return proc.stdout.strip()

    assert value("FARM_LEASE_TIMEOUT") == "1800"
    assert value("FARM_LEASE_TIMEOUT", FARM_LEASE_TIMEOUT="60") == "60"
    assert value("FARM_LEASE_TIMEOUT", "-s", "FARM_LEASE_TIMEOUT=90", FARM_LEASE_TIMEOUT="60") == "90"
    assert value("CONCURRENT_REQUESTS", FARM_CONCURRENT_REQUESTS="7") == "7"  # Scrapy's own, from FARM_


def test_a_bad_value_in_the_environment_is_not_read_when_s_gives_another(tmp_path):
    proc = run(
        tmp_path,
        ["scrapy", "crawl", "qcwy", "-s", "FARM_LEASE_TIMEOUT=60", "-s", "FARM_MAX_RETRIES=oops"],
        FARM_LEASE_TIMEOUT="30m",
    )
    assert one_line(proc) == (
        "farm: FARM_MAX_RETRIES='oops' cannot be used: it takes a whole number from 0 to 1000, e.g. 3"
    )  # FARM_LEASE_TIMEOUT's bad environment value, under -s's, is never read
