"""A project's own site (docs/examples/tinyjobs, a LeaseSpider of its SPIDER_MODULES) is a source as
farm's three are: to the `farm` command's --source, to `farm doctor` and to the API's source field."""

import json
import os
import re
import subprocess
import sys

import pytest

from tests.integration.api_harness import REPO, ApiServer

EXAMPLE = REPO / "docs/examples/tinyjobs"


def project_env() -> dict:
    """The example project's own settings (its scrapy.cfg), none of farm's from the environment."""
    env = {name: value for name, value in os.environ.items() if not name.startswith(("FARM_", "SCRAPY_"))}
    env["PYTHONPATH"] = str(REPO)
    return env


def farm(db_url, *args, code=0):
    """``python -m farm --db-url DB_URL ARGS`` in the example project; its output."""
    proc = subprocess.run(
        [sys.executable, "-m", "farm", "--db-url", db_url, *args],
        cwd=EXAMPLE,
        env=project_env(),
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert proc.returncode == code, f"farm {' '.join(args)}:\n{proc.stdout}\n{proc.stderr}"
    assert "Traceback" not in proc.stderr, proc.stderr
    return proc


@pytest.fixture
def project_db(sqlite_url):
    """The example's database, upgraded, with its four tinyjobs keywords."""
    farm(sqlite_url, "db", "upgrade")
    assert "imported 4 new keywords" in farm(sqlite_url, "keywords", "import", "keywords.csv").stdout
    return sqlite_url


def test_keywords_list_and_stats_take_a_site_of_the_projects_own_as_source(project_db):
    listed = farm(project_db, "keywords", "list", "--source", "tinyjobs").stdout.splitlines()
    rows = [line.split() for line in listed[2:]]
    assert [(row[1], row[2], row[3]) for row in rows] == [
        ("tinyjobs", "Springfield", "python"),
        ("tinyjobs", "Springfield", "java"),
        ("tinyjobs", "Shelbyville", "python"),
        ("tinyjobs", "Ogdenville", "rust"),
    ]
    [stats] = json.loads(farm(project_db, "stats", "--source", "tinyjobs", "--json").stdout)
    assert (stats["source"], stats["total"], stats["unused"]) == ("tinyjobs", 4, 4)
    every_site = json.loads(farm(project_db, "stats", "--json").stdout)  # without --source: every site
    assert [(row["source"], row["total"]) for row in every_site] == [
        ("boss", 0),
        ("qcwy", 0),
        ("zhilian", 0),
        ("tinyjobs", 4),
    ]

    unknown = farm(project_db, "stats", "--source", "lagou", code=2).stderr
    assert "'lagou' is not one of 'boss', 'qcwy', 'zhilian', 'tinyjobs'" in unknown


def test_doctor_checks_the_base_url_of_a_site_of_the_projects_own(project_db):
    proc = subprocess.run(
        [sys.executable, "-m", "farm", "--db-url", project_db, "doctor", "--timeout", "1"],
        cwd=EXAMPLE,
        env=project_env(),
        capture_output=True,
        text=True,
        timeout=60,
    )
    sites = re.findall(r"^(?:ok|warn|fail)\s+site (\w+): (\S+)", proc.stdout, re.MULTILINE)
    assert [name for name, _ in sites] == ["boss", "qcwy", "zhilian", "tinyjobs"], proc.stdout
    assert dict(sites)["tinyjobs"] == "http://127.0.0.1:8765"  # FARM_TINYJOBS_BASE_URL of its settings


def test_the_api_claims_a_keyword_of_a_site_of_the_projects_own(project_db, tmp_path):
    env = {"PYTHONPATH": str(REPO), "SCRAPY_SETTINGS_MODULE": "tinyjobs.settings"}
    with ApiServer(project_db, tmp_path / "api.log", cwd=EXAMPLE, env=env) as server, server.client() as http:
        document = http.get("/openapi.json").json()
        parameters = document["paths"]["/api/v1/keyword/available"]["get"]["parameters"]
        [source] = [parameter["schema"] for parameter in parameters if parameter["name"] == "source"]
        assert source["enum"] == ["boss", "qcwy", "zhilian", "tinyjobs"]

        claim = http.post("/api/v1/keyword/available", json={"source": "tinyjobs", "limit": 4})
        assert claim.status_code == 200, claim.text
        claimed = {(kw["source"], kw["city"], kw["job"]) for kw in claim.json()["keywords"]}
        assert claimed == {
            ("tinyjobs", "Springfield", "python"),
            ("tinyjobs", "Springfield", "java"),
            ("tinyjobs", "Shelbyville", "python"),
            ("tinyjobs", "Ogdenville", "rust"),
        }
        unknown = http.post("/api/v1/keyword/available", json={"source": "lagou"})
        assert unknown.status_code == 422
