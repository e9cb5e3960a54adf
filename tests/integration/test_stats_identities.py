"""`farm stats` (and --json) shows each site's identities as its latest crawl holds them, a running one
included: pages, refusals drawn, sessions earned, pages a session, learned pace and state, a proxy's
password masked."""

import json
from datetime import UTC, datetime, timedelta

from click.testing import CliRunner
from sqlalchemy import insert

from farm.cli import farm as farm_command
from farm.crawl.proxies import Proxy
from farm.state.db import make_engine
from farm.state.migrate import upgrade
from farm.state.models import CrawlRun

PROXY = Proxy.of("http://alice:s3cret@10.0.0.1:3128")


def run_row(run_id, ended, stats, started=datetime(2026, 12, 5, 8, tzinfo=UTC)):
    return {
        "id": run_id,
        "source": "qcwy",
        "crawler_id": f"host:{run_id}",
        "machine": "host",
        "started_at": started,
        "ended_at": ended,
        "status": "finished" if ended else "running",
        "refusals": "{}",
        "coverage": "{}",
        "stats": json.dumps(stats),
    }


def test_stats_show_each_sites_identities_from_its_last_finished_crawl(sqlite_url):
    engine = make_engine(sqlite_url)
    upgrade(engine)
    label = PROXY.label
    last = {
        f"farm/identity/{label}/pages": 40,
        f"farm/identity/{label}/blocks": 3,
        f"farm/identity/{label}/pace": 0.25,
        f"farm/identity/{label}/state": "cooling",
        "farm/identity/http://10.0.0.2:3128/pages": 90,
        "farm/identity/http://10.0.0.2:3128/pace": 0.5,
        "farm/identity/http://10.0.0.2:3128/state": "working",
    }
    with engine.begin() as conn:
        conn.execute(
            insert(CrawlRun.__table__),
            [
                run_row(1, datetime(2026, 12, 5, 9, tzinfo=UTC), {f"farm/identity/{label}/pages": 1}),
                run_row(2, datetime(2026, 12, 5, 10, tzinfo=UTC), last),
                run_row(3, None, {}),  # still running: nothing to show yet
            ],
        )
    engine.dispose()
    runner = CliRunner(catch_exceptions=False)
    text = runner.invoke(farm_command, ["--db-url", sqlite_url, "stats", "--source", "qcwy"]).output
    assert "identities as each site's latest crawl holds them" in text
    assert "http://alice:***@10.0.0.1:3128" in text and "s3cret" not in text
    line = next(line for line in text.splitlines() if "10.0.0.1" in line)
    assert line.split()[2:] == ["40", "3", "0", "-", "0.25", "cooling", "ended"]
    [row] = json.loads(
        runner.invoke(farm_command, ["--db-url", sqlite_url, "stats", "--json", "--source", "qcwy"]).output
    )
    assert row["identities"]["run"] == 2
    nothing = {"sessions": 0, "session_pages": 0, "pages_a_session": None}
    assert row["identities"]["identities"] == [
        {"identity": label, "pages": 40, "blocks": 3, "pace": 0.25, "state": "cooling", **nothing},
        {"identity": "http://10.0.0.2:3128", "pages": 90, "blocks": 0, "pace": 0.5, "state": "working", **nothing},
    ]


def test_stats_show_a_running_crawls_identities_with_their_sessions_and_pages_a_session(sqlite_url):
    engine = make_engine(sqlite_url)
    upgrade(engine)
    label = PROXY.label
    # the numbers a running crawl's row holds (farm.extensions.walls writes them every second)
    running = {
        f"farm/identity/{label}/pages": 12,
        f"farm/identity/{label}/sessions": 3,
        f"farm/identity/{label}/session_pages": 11,
        f"farm/identity/{label}/pace": 0.5,
        f"farm/identity/{label}/state": "working",
    }
    with engine.begin() as conn:
        conn.execute(
            insert(CrawlRun.__table__),
            [
                run_row(1, datetime(2026, 12, 5, 9, tzinfo=UTC), {f"farm/identity/{label}/pages": 1}),
                run_row(2, None, running, started=datetime.now(UTC) - timedelta(minutes=1)),  # alive: too young
            ],
        )
    engine.dispose()
    runner = CliRunner(catch_exceptions=False)
    text = runner.invoke(farm_command, ["--db-url", sqlite_url, "stats", "--source", "qcwy"]).output
    line = next(line for line in text.splitlines() if "10.0.0.1" in line)
    assert line.split()[2:] == ["12", "0", "3", "3.7", "0.5", "working", "running"] and "s3cret" not in text
    [row] = json.loads(
        runner.invoke(farm_command, ["--db-url", sqlite_url, "stats", "--json", "--source", "qcwy"]).output
    )
    assert row["identities"]["run"] == 2 and row["identities"]["ended_at"] is None
    assert row["identities"]["status"] == "running"
    assert row["identities"]["identities"] == [
        {
            "identity": label,
            "pages": 12,
            "blocks": 0,
            "sessions": 3,
            "session_pages": 11,
            "pages_a_session": 3.7,
            "pace": 0.5,
            "state": "working",
        }
    ]


def test_a_crawl_killed_before_its_end_is_shown_gone_with_what_it_noted_last(sqlite_url):
    engine = make_engine(sqlite_url)
    upgrade(engine)
    with engine.begin() as conn:  # no end, started hours ago, no keyword heartbeating: its crawler is gone
        conn.execute(insert(CrawlRun.__table__), [run_row(1, None, {"farm/identity/direct/pages": 7})])
    engine.dispose()
    text = CliRunner(catch_exceptions=False).invoke(farm_command, ["--db-url", sqlite_url, "stats"]).output
    line = next(line for line in text.splitlines() if "direct" in line)
    assert line.split() == ["qcwy", "direct", "7", "0", "0", "-", "-", "-", "gone"]
