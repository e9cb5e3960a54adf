"""A local imitation of Boss直聘, 51job and 智联招聘's search interfaces, for the demo, tests and benchmarks.

One HTTP server (``farm sandbox``) serves all three sites at their real paths and in their real formats
(sites/docs/sites.md), from postings generated deterministically out of a seed, so a spider pointed at it by
its base URL runs unchanged.

Choices where the contract is silent:

- Unknown city codes (and a missing city) give a *successful, empty* search: boss ``code 0`` with an empty
  ``jobList`` and ``totalCount 0``; qcwy ``status "1"`` with ``totalCount 0``; zhilian a page with an empty
  ``positionList`` and a "暂无符合条件的职位" tip (no 登录 text, so it is not mistaken for the login wall).
  A comma-joined qcwy ``jobArea`` is treated as one unknown code. Known codes: cities.py.
- Reachable caps: boss 10 pages (``totalCount`` ≤ 10 × pageSize, ``resCount`` the real total), qcwy 50
  pages (``totalCount`` the real total, pages past 50 empty), zhilian 15 pages (``positionCount`` the real
  total, ``pages`` ≤ 15). Past the last page every site answers a successful empty page.
- Page sizes: boss and qcwy honour ``pageSize`` up to 100; zhilian is always 20. Junk page numbers mean 1.
- Filters and ``sortType`` / ``order`` are accepted and ignored: one keyword has one result order.
- qcwy's ``sign`` header is checked only when sent (wrong → ``status "1004"``); zhilian ``/kw{token}/``
  paths get the 登录之后再搜索 wall.
- Publish times count back up to 30 days from today's midnight (UTC+8), so they hold for the day.

- With ``--walls`` each site stands behind its wall (walls.py, each site package's wall.py; docs/sites.md
  §4.6): Boss's code 37 and security page, 51job's ``acw_sc__v2`` WAF challenge, 智联's verification
  redirect; sessions belong to one User-Agent and end by time and by count; slider pages no client passes.
- With ``--strange-walls`` each site stands behind walls in shapes no spider names (strangewalls.py): pages in
  place of the data, redirect chains, forms, cookies of a new name every time.

Modules: cities (codes), vocab (word lists), data (the deterministic world), results (paging), sites (each
site package's sandbox.py: formats and own faults, farm/sites/<site>/), faults (fault draws and generic
faults), stale (stale page-1 totals), hostile (hostile postings), outage (dropping every connection), walls
(sessions, counts and config every wall shares), wallshape (one site's wall: each site package's wall.py),
walltoken (the hash the wall scripts compute, in Python and JavaScript), strangewalls (the walls in shapes no
spider names), control (/_sandbox/), server, cli, testing (SandboxProcess and SandboxThread for tests).
"""
