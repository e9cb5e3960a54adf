"""A local imitation of the sites farm crawls (their search interfaces), for the demo, tests and benchmarks.

One HTTP server (``farm sandbox``) serves every registered site that has an imitation at its real paths
and in its real formats (docs/sites.md), from postings generated deterministically out of a seed, so a
spider pointed at it by its base URL runs unchanged. This package is the machinery and names no site: each
site's own part (its paths, formats, caps, words, ids, hostile fields, faults and wall) is in its package
(``farm/sites/<site>/sandbox.py`` and ``wall.py``, docs/addon.md), found through the registry (farm.sites).

Choices where the contract is silent, for every site alike (each site's own are in its sandbox.py):

- Unknown city codes (and a missing city) give a *successful, empty* search, in the site's own form of
  one. Known codes: the site's record's map, for the cities of cities.py.
- Each site reaches only so many pages (its imitation's ``MAX_PAGES``); past the last page every site
  answers a successful empty page. Junk page numbers mean 1.
- Filters and sort orders are accepted and ignored: one keyword has one result order.
- Publish times count back up to 30 days from today's midnight (UTC+8), so they hold for the day.

- With ``--walls`` each site stands behind its wall (walls.py, each site package's wall.py; docs/sites.md
  §4.6); sessions belong to one User-Agent and end by time and by count; slider pages no client passes.
- With ``--strange-walls`` each site stands behind walls in shapes no spider names (strangewalls.py): pages in
  place of the data, redirect chains, forms, cookies of a new name every time.

Modules: cities (the cities), vocab (word lists), data (the deterministic world), imitation (what a site's
imitation adds to it: its words, ids, cross-posts, hostile fields, faults), results (paging), sites (each
site package's sandbox.py and wall.py, by the registry), faults (fault draws and generic faults), stale
(stale page-1 totals), hostile (hostile postings), crossposts (one opening on several sites), outage
(dropping every connection), walls (sessions, counts and config every wall shares), wallshape (one site's
wall: each site package's wall.py), walltoken (the hash the wall scripts compute, in Python and
JavaScript), strangewalls (the walls in shapes no spider names), control (/_sandbox/), server, cli, testing
(SandboxProcess and SandboxThread for tests).
"""
