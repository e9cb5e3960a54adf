"""Runs remembered: a row a crawl in ``crawl_run`` and each keyword's end of day in ``keyword_day``.

farm.extensions.runs writes them from every crawl, local or Redis (farm.runs.record); `farm check`,
the report and the monitors read them (farm.runs.history). See docs/checks.md.
"""
