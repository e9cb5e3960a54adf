"""``farm check``'s thresholds, the ``FARM_CHECK_*`` settings (docs/checks.md)."""

from typing import Annotated

from farm.config.base import Group, setting
from farm.config.kinds import SHARE, number, whole


class Thresholds(Group):
    """``farm check``'s thresholds: the ``FARM_CHECK_*`` settings."""

    PREFIX = "FARM_CHECK_"

    history_days: Annotated[
        int,
        setting(
            whole(1, 366, "a whole number of days from 1 to 366, e.g. 7"),
            "the days before the checked one that make its history",
        ),
    ] = 7
    postings_drop: Annotated[
        float, setting(SHARE, "the share of its median a keyword's postings may fall by before the check fails")
    ] = 0.4
    min_postings: Annotated[
        int,
        setting(
            whole(0, 10**9, "a whole number of postings from 0, e.g. 10"),
            "the smallest median judged: a keyword whose median is below it is too small to judge",
        ),
    ] = 10
    coverage_drop: Annotated[
        float, setting(SHARE, "how far (absolute) a field's share of the postings may fall below its median")
    ] = 0.1
    min_coverage: Annotated[
        float, setting(SHARE, "the least share of a run's postings carrying company, city and salary")
    ] = 0.8
    refusals_rise: Annotated[
        float, setting(SHARE, "how far (absolute) the refused share of a site's requests may rise above its median")
    ] = 0.2
    max_refusals: Annotated[float, setting(SHARE, "the most a run may be refused")] = 0.5
    run_hours: Annotated[
        float,
        setting(
            number(0, 24 * 366, takes="a number of hours from 0 to 8784, e.g. 12"),
            "hours after its start after which a run with no end never finished",
        ),
    ] = 12.0
