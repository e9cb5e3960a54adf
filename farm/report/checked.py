"""The report's first section: the day's checks (farm.checks), the failed ones on top.

A reader must know whether the day's data holds before reading a figure drawn from it.
"""

from datetime import date, datetime
from zoneinfo import ZoneInfo

from sqlalchemy.engine import Engine

from farm.checks.day import check_day
from farm.checks.thresholds import Thresholds
from farm.report.markup import escape, table

# the page's own styles are farm.report.page's; these only mark the verdict and the failed rows
STYLE = (
    "<style>.verdict { font-weight: 600; color: #2b8a3e; } .verdict.fail, tr.fail td:first-child "
    "{ color: #b02a37; font-weight: 600; }</style>"
)


def read_checks(engine: Engine, day: date, tz: ZoneInfo, limits: Thresholds, now: datetime) -> list[dict]:
    """The day's checks as `farm check` runs them, the failed first (each group in the checks' order)."""
    checks = check_day(engine, day, tz, limits, now)
    return [check.as_dict() for check in sorted(checks, key=lambda check: check.ok)]


def checks_section(checks: list[dict], day: date) -> str:
    out = [STYLE, "<h2 id=checks>The day's checks</h2>"]
    if not checks:
        out.append(f"<p class=empty>No run and no keyword of {day} to check.</p>")
        return "".join(out)
    failed = [c for c in checks if not c["ok"]]
    held = [c for c in checks if c["ok"]]
    verdict = f"{len(failed)} of {len(checks)} checks failed" if failed else f"all {len(checks)} checks held"
    out.append(
        f"<p id=checks-verdict class='verdict{' fail' if failed else ''}'>{escape(verdict)}</p>"
        "<p class=note>As <code>farm check</code> runs them (docs/checks.md): each run's Spidermon monitors, "
        "then the day against each keyword's and each site's history.</p>"
    )
    if failed:
        out.append(
            table(
                ["", "check", "of", "what was found"],
                [["FAIL", c["name"], c["subject"], c["detail"]] for c in failed],
                row_class="fail",
            )
        )
    if held:
        out.append(
            f"<details><summary>{len(held)} checks held</summary>"
            + table(["check", "of", "what was found"], [[c["name"], c["subject"], c["detail"]] for c in held])
            + "</details>"
        )
    return "".join(out)
