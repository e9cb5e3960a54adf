"""The order the tests run in: the longest first, so that the last test each worker runs is a short one.

pytest-xdist's worksteal scheduler hands each worker a share of the tests in collection order, and a
worker that runs out takes the end of another's queue. A long test near the end of the order is a
tail in which one worker runs alone while the other has nothing left; ordered longest first, the
queues end in tests of a fraction of a second.

A test's cost is the seconds it took in a recorded run (``tests/costs.json``: the tests of a second
or more); a test not recorded costs its tier's guess. Tests that share a fixture of a module's (or
class's) scope stay together at their summed cost, so the fixture is still set up once. The sort is
stable: tests of equal cost keep their collection order, and every xdist worker sorts alike.

Recording the costs again, after a run with ``--junitxml=report.xml``::

    python -m tests.order report.xml
"""

import json
import sys
import xml.etree.ElementTree as ET
from collections.abc import Sequence
from pathlib import Path

import pytest

COSTS = Path(__file__).with_name("costs.json")
RECORDED_FROM = 1.0  # seconds: a test quicker than this is left to its tier's guess
# a test not in the record: what tests of its tier mostly cost
TIER_GUESS = {"tests/e2e/": 5.0, "tests/integration/": 0.3}
SHARED_SCOPES = ("module", "class", "package")


def load_costs(path: Path = COSTS) -> dict[str, float]:
    """The recorded seconds of each test by node id; none when there is no record."""
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return {}


def cost(nodeid: str, costs: dict[str, float]) -> float:
    if nodeid in costs:
        return costs[nodeid]
    return next((guess for tier, guess in TIER_GUESS.items() if nodeid.startswith(tier)), 0.0)


def _group(item: pytest.Item) -> str:
    """The module's node id for a test that shares a fixture wider than itself, else its own."""
    fixtures = getattr(item, "_fixtureinfo", None)
    definitions = fixtures.name2fixturedefs.values() if fixtures is not None else ()
    if any(d.scope in SHARED_SCOPES for defs in definitions for d in defs):
        return item.nodeid.split("::", 1)[0]
    return item.nodeid


def longest_first(items: Sequence[pytest.Item], costs: dict[str, float]) -> list[pytest.Item]:
    """``items`` ordered by cost, the longest first; a group sharing a module's fixture kept whole."""
    groups: dict[str, list[pytest.Item]] = {}
    for item in items:
        groups.setdefault(_group(item), []).append(item)
    totals = {key: sum(cost(item.nodeid, costs) for item in group) for key, group in groups.items()}
    ordered = sorted(groups, key=lambda key: -totals[key])  # stable: ties keep the collection order
    return [item for key in ordered for item in groups[key]]


def record(report: Path, path: Path = COSTS) -> dict[str, float]:
    """The costs of a JUnit XML report's tests of ``RECORDED_FROM`` seconds or more, written to ``path``."""
    costs = {}
    for case in ET.parse(report).iter("testcase"):
        seconds = float(case.get("time", 0))
        if seconds >= RECORDED_FROM:
            module = case.get("classname", "").replace(".", "/")
            costs[f"{module}.py::{case.get('name')}"] = round(seconds, 1)
    path.write_text(json.dumps(dict(sorted(costs.items())), indent=0, ensure_ascii=False) + "\n", encoding="utf-8")
    return costs


if __name__ == "__main__":
    print(f"{len(record(Path(sys.argv[1])))} tests recorded in {COSTS}")
