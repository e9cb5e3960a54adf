"""docs/addon.md's section "From `scrapy startproject` to a crawl", run as written: a fresh Scrapy project,
the files of the section's code blocks, the commands of its shell blocks, against the example's tiny site.

The same project shows what the add-on does in a project of any shape: the template's own settings named
in a warning where they override farm's tuning, no signing middleware for a spider that signs nothing,
no process-wide change unless listed, and a crawl that cannot start says why in one line."""

import os
import re
import shlex
import subprocess
import sys
import threading
from http.server import ThreadingHTTPServer
from pathlib import Path

import pytest
from sqlalchemy import select

from farm.state.db import make_engine
from farm.state.models import JobPostingRow, Keyword
from tests.e2e.harness import REPO
from tests.e2e.test_addon import _example_site

DOC = REPO / "docs/addon.md"
SECTION = "## From `scrapy startproject` to a crawl"
DOC_PORT = "8765"  # the port the doc's settings name; the test's site has one of its own
CRAWL_TIMEOUT = 120
COMMAND_TIMEOUT = 60
UNREACHABLE = "mysql+pymysql://farm@127.0.0.1:1/farm"  # no server listens on port 1


def doc_blocks() -> list[tuple[str, str | None, str]]:
    """The section's fenced blocks, in order: (language, the file it is, its text)."""
    text = DOC.read_text(encoding="utf-8")
    section = text[text.index(SECTION) :]
    section = section[: section.find("\n## ", len(SECTION))]
    return [
        (language, path or None, body)
        for language, path, body in re.findall(r"^```(\w*)(?: (\S+))?\n(.*?)^```$", section, re.M | re.S)
    ]


def env() -> dict:
    """The project's own settings alone: none of farm's from the environment, farm importable."""
    clean = {name: value for name, value in os.environ.items() if not name.startswith(("FARM_", "SCRAPY_"))}
    clean["PYTHONPATH"] = str(REPO)
    return clean


def run(line: str, cwd: Path, *extra: str, timeout: float = COMMAND_TIMEOUT, code: int = 0):
    """A shell block's line (`farm ...` or `scrapy ...`), with this interpreter; ends by itself or fails."""
    program, *args = shlex.split(line)
    assert program in ("farm", "scrapy"), line
    command = [sys.executable, "-m", program, *args, *extra]
    try:
        proc = subprocess.run(command, cwd=cwd, env=env(), capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired as exc:
        pytest.fail(f"{line} did not end within {timeout}s:\n{(exc.stderr or b'')[-3000:]}")
    assert proc.returncode == code, f"{line}: exit {proc.returncode}\n{proc.stdout[-2000:]}\n{proc.stderr[-4000:]}"
    return proc


@pytest.fixture(scope="module")
def site():
    """The example's site on a free port: (its module, its port)."""
    module = _example_site()
    server = ThreadingHTTPServer(("127.0.0.1", 0), module.Search)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield module, server.server_port
    finally:
        server.shutdown()
        server.server_close()


@pytest.fixture(scope="module")
def project(tmp_path_factory, site):
    """`scrapy startproject` as the doc's first shell block says, then the doc's files; the project's
    directory, and the commands of the doc's last shell block."""
    _, port = site
    blocks = doc_blocks()
    shells = [body.split("\n") for language, _, body in blocks if language == "sh"]
    start, commands = [line for line in shells[0] if line], [line for line in shells[-1] if line]
    assert start[0].startswith("scrapy startproject ") and start[1].startswith("cd ")
    root = tmp_path_factory.mktemp("startproject")
    run(start[0], root)
    directory = root / start[1].split()[1]
    for _, path, body in (block for block in blocks if block[1]):
        target = directory / path
        body = body.replace(DOC_PORT, str(port))
        if target.exists():  # a file the template made: the doc's lines go at its end
            body = target.read_text(encoding="utf-8") + "\n" + body
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(body, encoding="utf-8")
    return directory, commands


def test_the_docs_fourth_site_crawls_from_a_fresh_startproject(project, site):
    module, _ = site
    directory, commands = project
    assert [line.split()[:2] for line in commands] == [
        ["farm", "db"],
        ["farm", "keywords"],
        ["scrapy", "crawl"],
        ["farm", "stats"],
    ]
    outputs = [run(line, directory, timeout=CRAWL_TIMEOUT if "crawl" in line else COMMAND_TIMEOUT) for line in commands]
    crawl, stats = outputs[2].stderr, outputs[3].stdout
    assert "Traceback" not in crawl, crawl[-4000:]
    # the template's settings that override farm's tuning: one warning line each, naming the setting
    for name, value in (("CONCURRENT_REQUESTS_PER_DOMAIN", 1), ("DOWNLOAD_DELAY", 1)):
        warned = [line for line in crawl.splitlines() if "WARNING" in line and f"{name}={value}" in line]
        assert len(warned) == 1, crawl[-4000:]
    # farm's components are there, the signing middleware (qcwy's) and the lean process are not
    assert "farm.crawl.parts.CrawlParts" in crawl and "farm.crawl.leases.KeywordLeaseMiddleware" in crawl
    assert "RequestSigningMiddleware" not in crawl and "LeanProcess" not in crawl
    assert re.search(r"^tinyjobs\s+2\s", stats, re.M), stats

    engine = make_engine(f"sqlite:///{directory / 'demo.db'}")
    try:
        with engine.connect() as conn:
            keywords = conn.execute(select(Keyword.city, Keyword.job, Keyword.crawl_status)).all()
            postings = conn.execute(select(JobPostingRow.source, JobPostingRow.job_id)).all()
    finally:
        engine.dispose()
    assert sorted(keywords) == [("Shelbyville", "rust", "completed"), ("Springfield", "python", "completed")]
    pairs = (("spr", "python"), ("shb", "rust"))
    expected = [f"{code}-{job}-{i}" for code, job in pairs for i in range(module.postings(code, job))]
    assert sorted(job_id for _, job_id in postings) == sorted(expected)  # each once, none missing
    assert {source for source, _ in postings} == {"tinyjobs"}


@pytest.mark.parametrize(
    "setting, named",
    [
        ("FARM_LEASES_IN_FLIGHT=abc", "FARM_LEASES_IN_FLIGHT='abc'"),  # farm.config's SettingError
        (f"FARM_DB_URL={UNREACHABLE}", "cannot reach the database"),  # a FarmStartError
    ],
)
def test_a_crawl_that_cannot_start_says_why_in_one_line_without_commands_module(project, setting, named):
    directory, _ = project
    proc = run("scrapy crawl tinyjobs", directory, "-s", setting, "-s", "LOG_LEVEL=INFO", code=1)
    assert "COMMANDS_MODULE" not in (directory / "demo/settings.py").read_text(encoding="utf-8")
    assert "Traceback" not in proc.stderr, proc.stderr[-4000:]
    lines = [line for line in proc.stderr.splitlines() if named in line]
    assert len(lines) == 1 and "ERROR: farm: " in lines[0], proc.stderr[-4000:]


def test_under_twisteds_crawler_process_farm_leaves_the_reactor_to_scrapy(project):
    # the add-on names farm's components without importing them: they import Twisted's reactor, and
    # CrawlerProcess installs the one the settings name only after the add-ons ran
    directory, _ = project
    # (at DEBUG, as the template logs; the crawl stops at its parts, after the reactor is installed)
    extra = ("-s", "FORCE_CRAWLER_PROCESS=True", "-s", f"FARM_DB_URL={UNREACHABLE}")
    proc = run("scrapy crawl tinyjobs", directory, *extra, code=1)
    assert "Using reactor: twisted.internet.asyncioreactor.AsyncioSelectorReactor" in proc.stderr, proc.stderr[-4000:]
    assert "does not match the requested one" not in proc.stderr
    assert "ERROR: farm: cannot reach the database" in proc.stderr
