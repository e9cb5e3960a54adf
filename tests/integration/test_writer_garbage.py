"""The state writer over many frames: nothing it leaves behind grows with the pages it writes.

Its garbage collector runs rarely (farm.heap): garbage in reference cycles, which only the
collector frees, piles up between two collections. A frame that left even one such cycle made
the writer's memory grow with the pages done, by megabytes before each collection.
"""

import gc
import io
from datetime import UTC, datetime

import orjson
import pytest

from farm.state.db import make_engine
from farm.state.store import KeywordStore
from farm.writer.frames import frame, read_answer
from farm.writer.serve import serve
from tests.integration.strict import strict
from tests.migrated import migrated

PAGES = 40  # pages of each keyword, as a qcwy keyword of 800 postings


@pytest.fixture
def store(every_db_url):
    url = strict(every_db_url)
    migrated(url)
    store = KeywordStore(make_engine(url))
    store.add_keywords([("qcwy", "北京", f"job{n}") for n in range(8)])
    yield store
    store.close()


def posting(job_id: str, keyword_id: int) -> bytes:
    return orjson.dumps(
        {
            "source": "qcwy",
            "job_id": job_id,
            "keyword_id": keyword_id,
            "title": f"title {job_id}",
            "salary": "1-1.5万",
            "published_at": datetime(2026, 11, 30, 9, 30, tzinfo=UTC),
            "raw": {"jobId": job_id, "jobTags": ["a", "b"]},
        }
    )


def written(store, frames: list[bytes]) -> list:
    """The writer's answers to ``frames``, each committed by farm.writer.serve's own loop."""
    out = io.BytesIO()
    serve(store, io.BytesIO(b"".join(frames)), out)
    return [read_answer(line.removeprefix(b"ok ")) for line in out.getvalue().splitlines()]


def page_frames(lease, pages: range) -> list[bytes]:
    """A frame a page: its postings and its progress, as a crawl's outbox sends them."""
    return [
        frame(
            [posting(f"{lease.id}-{page}-{n}", lease.id) for n in range(3)],
            [(lease, page, 3, PAGES if page == 1 else None)],
        )
        for page in pages
    ]


def garbage_of(store, lease, pages: range) -> int:
    """The objects in reference cycles left by writing ``pages`` of ``lease``'s keyword."""
    gc.collect()
    gc.disable()
    try:
        results = written(store, page_frames(lease, pages))
        assert all(result.pages[0].applied for result in results)
        return gc.collect()
    finally:
        gc.enable()


def test_frames_of_postings_and_pages_leave_no_garbage_that_grows_with_them(store):
    claim = ("qcwy", "test", 2, frozenset(), frozenset())
    [answer] = written(store, [frame([], [], [], [claim])])
    [(first, second), _] = answer.claims[0]
    written(store, page_frames(first, range(1, 3)))  # the statements compiled and cached once
    few, many = garbage_of(store, first, range(3, 8)), garbage_of(store, second, range(1, 31))
    assert many <= few, f"{many} objects in cycles after 30 frames, {few} after 5"
    # the keyword's end and the next claim, in one frame, as the crawl sends them
    [done] = written(store, [frame([], [], [(second, "completed", None)], [claim])])
    assert done.ends == ["completed"] and len(done.claims[0][0]) == 2
