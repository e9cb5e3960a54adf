"""The crawl's machinery: keyword leases, page progress, the scheduler and its work backends."""
