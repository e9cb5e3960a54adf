"""farm's own signals, between the spider, the lease middleware and the progress extension.

Each is an ``object()`` like Scrapy's; handlers take the keyword arguments named here.
"""

# The keyword is to end: keyword_end(lease, kind, reason, page).
# ``kind`` is one of farm.state.lease.ENDS ("completed", "failed", "blocked",
# "released"); ``page`` is the page that was given up with it, or None. The end is
# written after the progress of the pages the keyword already took from the queue.
keyword_end = object()

# The progress extension has written a lease's end: lease_ended(lease, outcome),
# outcome one of "completed", "failed", "blocked", "released", "lost".
lease_ended = object()
