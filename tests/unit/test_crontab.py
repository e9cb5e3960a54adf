"""deploy/crontab: well-formed lines that start each site's crawl and reap every 10 minutes."""

import re
import shlex
from pathlib import Path

from farm.sites import FARM_PACKAGES

SOURCES = [path.rpartition(".")[2] for path in FARM_PACKAGES]  # farm's own sites, each crawled by the crontab

CRONTAB = Path(__file__).resolve().parents[2] / "deploy" / "crontab"
FIELD = re.compile(r"^(\*|\d+(-\d+)?)(/\d+)?(,(\d+(-\d+)?)(/\d+)?)*$")
RANGES = [(0, 59), (0, 23), (1, 31), (1, 12), (0, 7)]


def entries(commented=False):
    """(schedule fields, command) of each job line; with ``commented``, of the lines commented out too."""
    jobs = []
    for line in CRONTAB.read_text().splitlines():
        if commented and line.startswith("#") and line[1:2].strip() and FIELD.match(line[1:].split()[0]):
            line = line[1:]
        elif not line.strip() or line.startswith("#") or re.match(r"^[A-Z_]+=", line):
            continue
        fields = line.split(None, 5)
        assert len(fields) == 6, line
        jobs.append((fields[:5], fields[5]))
    return jobs


def test_every_schedule_field_is_valid():
    for fields, command in entries(commented=True):
        for field, (low, high) in zip(fields, RANGES):
            assert FIELD.match(field), (field, command)
            for number in re.findall(r"\d+", field.split("/")[0]):
                assert low <= int(number) <= high, (field, command)
        assert "%" not in command  # cron would turn it into a newline


def test_each_site_is_started_and_reap_runs_every_10_minutes():
    jobs = entries()
    crawls = {}
    for fields, command in jobs:
        words = shlex.split(command.split("&&")[-1])
        if words[:2] == [".venv/bin/scrapy", "crawl"]:
            crawls[words[2]] = fields
    assert sorted(crawls) == sorted(SOURCES)
    reaps = [fields for fields, command in jobs if command.split("&&")[-1].split()[:2] == [".venv/bin/farm", "reap"]]
    assert reaps == [["*/10", "*", "*", "*", "*"]]
    variables = dict(line.split("=", 1) for line in CRONTAB.read_text().splitlines() if re.match(r"^[A-Z_]+=", line))
    assert {"FARM_DB_URL", "FARM_TIMEZONE"} <= set(variables)


def test_the_scrapyd_variant_schedules_each_site_with_url_encoded_settings():
    scheduled = {}
    for fields, command in entries(commented=True):
        if "schedule.json" not in command:
            continue
        words = shlex.split(command.split(">>")[0])
        data = [words[i + 1] for i, word in enumerate(words) if word in ("-d", "--data-urlencode")]
        assert "project=farm" in data
        assert any(
            word.startswith("setting=FARM_DB_URL=")
            for i, word in enumerate(words[1:])
            if words[i] == "--data-urlencode"
        )
        scheduled[next(d.split("=", 1)[1] for d in data if d.startswith("spider="))] = fields
    assert sorted(scheduled) == sorted(SOURCES)
