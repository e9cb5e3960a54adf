"""Python's garbage collector for a process that handles a page's worth of objects at a time.

A full collection walks every live object, and a process keeps all it built at start
(Scrapy, Twisted, SQLAlchemy: some 120,000 objects in a crawl); frozen (``gc.freeze``),
they are skipped (Scrapy spent a fifth of a crawl's CPU on those walks). The youngest
generation is collected every 700 container objects allocated and not yet freed: a
page's parsed JSON, or a frame of postings decoded in the state writer, is thousands,
alive while it is handled, so every page ran several collections that found it alive
and moved it to the older generations, which then took some 25 full collections a
crawl, each for a few hundred objects freed. At YOUNG_COLLECTION_THRESHOLD a crawl runs
about one; garbage in reference cycles, the only kind a collection frees, is still
freed when that many have piled up. What the collections cost a crawl, and how it is
measured: docs/benchmarks.md.
"""

import gc

# container objects allocated and not yet freed before Python collects its youngest generation
YOUNG_COLLECTION_THRESHOLD = 50_000


def lean_heap() -> tuple[int, int, int]:
    """Freeze what the process built so far, and collect its young objects rarely. Returns
    Python's thresholds as they were (for ``restore``)."""
    gc.freeze()
    thresholds = gc.get_threshold()
    gc.set_threshold(max(YOUNG_COLLECTION_THRESHOLD, thresholds[0]), *thresholds[1:])
    return thresholds


def restore(thresholds: tuple[int, int, int]) -> None:
    gc.set_threshold(*thresholds)
