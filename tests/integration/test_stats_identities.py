"""`farm stats` (and --json) shows each site's identities as its last finished crawl left them: pages,
refusals drawn, learned pace and state, a proxy's password masked."""

import json
from datetime import UTC, datetime

from click.testing import CliRunner
from sqlalchemy import insert

from farm.cli import farm as farm_command
from farm.crawl.proxies import Proxy
from farm.state.db import make_engine
from farm.state.migrate import upgrade
from farm.state.models import CrawlRun

PROXY = Proxy.of("http://alice:s3cret@10.0.0.1:3128")


def run_row(run_id, ended, stats):
    return {
        "id": run_id,
        "source": "qcwy",
        "crawler_id": f"host:{run_id}",
        "machine": "host",
        "started_at": datetime(2026, 12, 5, 8, tzinfo=UTC),
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
    assert "identities as each site's last crawl left them" in text
    assert "http://alice:***@10.0.0.1:3128" in text and "s3cret" not in text
    line = next(line for line in text.splitlines() if "10.0.0.1" in line)
    assert line.split()[2:] == ["40", "3", "0.25", "cooling"]
    [row] = json.loads(
        runner.invoke(farm_command, ["--db-url", sqlite_url, "stats", "--json", "--source", "qcwy"]).output
    )
    assert row["identities"]["run"] == 2
    assert row["identities"]["identities"] == [
        {"identity": label, "pages": 40, "blocks": 3, "pace": 0.25, "state": "cooling"},
        {"identity": "http://10.0.0.2:3128", "pages": 90, "blocks": 0, "pace": 0.5, "state": "working"},
    ]
