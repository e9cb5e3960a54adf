"""`farm probe`: one real search per site from this machine, through the same stack as a crawl.

For each site, a real Scrapy crawl of the site's spider runs in a child process (farm.probe.child) with
the user's settings (the project's, or farm's own; FARM_<SITE>_BASE_URL, FARM_PROXIES, the impersonation,
the browser) and a few changed so that it is one search and ends soon (farm.probe.plan): one keyword in a
throwaway SQLite database in a temporary folder, one page, short retries, no Redis, no JOBDIR, no metrics.
The user's database, Redis and keywords are never touched. The child writes what the crawl met (its stats,
the keyword's end, the walls the browser passed) to a report file; farm.probe.verdict reads it as one line
(ok with N postings, a wall passed by the browser, a slider, no network, a refusal) with the setting that
changes it. farm.probe.runner starts the children together and ends each by its deadline (``--timeout``).

See docs/operations.md.
"""
