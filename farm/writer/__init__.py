"""The state writer: a child process that does a crawl's hot writes, in order; its two ends.

- process.py: the crawl's end, a Twisted ProcessProtocol that spawns the child and sends it frames;
- serve.py: the child's end, its serve loop (``python -P -m farm.writer.serve``);
- frames.py: what goes between them, both ways.


Scrapy runs a crawl on one core. A crawl that also encoded and wrote every
posting and every page's progress on that core (a thread shares the GIL) spent
a fifth of it there. So the crawl hands those writes, already JSON, to this
process, which does them on another core: ``python -P -m farm.writer.serve``
with ``FARM_STATE_WRITER`` set to a JSON object: the database URL and the
crawl's store options (KeywordStore.options).

The crawl's keyword claims are made here too, after the frame's writes. On
the crawl's database thread each claim cost the crawl's own thread 1.4 to 4.5 ms
(bench/claim_thread_bench.py): the two threads handing the GIL back and forth
around every SQLite call. Here they cost it nothing.

The protocol, over the child's stdin and stdout. In: frames of a 4-byte
big-endian length and a JSON object, ``{"postings": [row, ...], "pages":
[[lease, page, jobs, total_pages], ...], "ends": [[lease, kind, message], ...],
"claims": [[source, crawler_id, n, [keyword id to skip, ...], [[id, token] held,
...]], ...]}`` with ``lease`` as :meth:`Lease.wire`; each frame's writes are one
transaction (KeywordStore.write_batch), its postings first fitted to their
columns (farm.state.normalise.fit_rows), and each claim then one more
(KeywordStore.claim). Out: a line per frame once it is committed, ``ok <JSON>``
with the frame's BatchResult (``{"postings": n, "pages": [PageWrite fields, ...],
"ends": [status or null, ...], "rejected": [[source, job_id, reason], ...],
"normalised": {field: postings changed}, "claims": [[[lease as Lease.to_json,
...], [claimable, next retry or null] or null], ...]}``); or ``error <message>``,
after which the writer exits. A posting that cannot be stored is rejected, not
an error: an error is a write lost whole.

The writer's first line, ``ready``, says it has started: until then the crawl
makes its claims on its database thread rather than wait for it.

Frames are committed in the order they arrive. End of input (the crawl closed,
or was killed) makes the writer exit once what it has read is committed;
SIGINT and SIGTERM do not, so a Ctrl+C in the crawl's terminal lets the crawl
finish its own graceful close.
"""
