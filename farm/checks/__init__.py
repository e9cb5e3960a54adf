"""The day's data checked before anyone reads it (docs/checks.md).

Two kinds of check, each giving :class:`farm.checks.result.CheckResult` lines:

- per run (farm.checks.monitors): Spidermon monitors over one crawl's stats, as the run table keeps
  them; the same suite runs inside a crawl under Spidermon's extension;
- over history (farm.checks.history): the day against each keyword's and each site's recent days,
  read from ``keyword_day`` and ``crawl_run`` (farm.runs).

farm.checks.day gathers both for one day; farm.checks.alerts sends the failures through apprise.
"""
