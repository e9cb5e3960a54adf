"""farm's own signals, between the spider, the lease middleware and the progress extension.

Each is an ``object()`` like Scrapy's; handlers take the keyword arguments named here.
"""

# The spider parsed one page: page_parsed(lease, page, postings, last_page).
# ``postings`` is how many items the page yielded; ``last_page`` the keyword's
# last page when known (capped by FARM_*_MAX_PAGES), else None.
page_parsed = object()

# The keyword cannot go on, through its own fault: keyword_failed(lease, reason).
keyword_failed = object()

# The site kept blocking a page after the retries: keyword_blocked(lease, reason).
keyword_blocked = object()

# A resumed keyword has no page left to fetch: keyword_exhausted(lease).
keyword_exhausted = object()

# The progress extension has written a lease's end: lease_ended(lease, outcome),
# outcome one of "completed", "failed", "blocked", "lost".
lease_ended = object()
