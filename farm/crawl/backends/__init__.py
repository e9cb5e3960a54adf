"""Where the crawl's work waits: the WorkBackend contract, the local backend and the Redis backend."""
