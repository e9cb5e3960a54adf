"""The state writer process, for real: frames in, one transaction each, in order; failures reported."""

import os
import signal
from datetime import datetime, timezone

import orjson
import pytest
import pytest_twisted
from sqlalchemy import select

from farm.state.db import make_engine
from farm.state.migrate import upgrade
from farm.state.models import JobPostingRow
from farm.state.store import KeywordStore
from farm.writer import StateWriter, WriteLost


@pytest.fixture
def store(db_url):
    upgrade(db_url)
    store = KeywordStore(make_engine(db_url))
    store.add_keywords([("qcwy", "北京", "python"), ("qcwy", "上海", "java")])
    yield store
    store.close()


@pytest.fixture
def writer(store):
    writer = StateWriter.spawn(store)
    yield writer
    if not writer.ended.called:
        writer.transport.signalProcess("KILL")


def posting(job_id, keyword_id, **fields):
    row = {"source": "qcwy", "job_id": job_id, "keyword_id": keyword_id, "title": f"title {job_id}",
           "published_at": datetime(2026, 11, 30, 9, 30, tzinfo=timezone.utc), "raw": {"jobId": job_id}}  # fmt: skip
    return orjson.dumps({**row, **fields})


def stored(store):
    with store.engine.connect() as conn:
        rows = conn.execute(select(JobPostingRow.job_id, JobPostingRow.title, JobPostingRow.published_at))
        return {job_id: (title, published) for job_id, title, published in rows}


@pytest_twisted.ensureDeferred
async def test_a_frame_stores_its_postings_and_records_its_pages_in_one_go(store, writer):
    [lease] = store.claim("qcwy", "test", 1)
    result = await (writer.write([posting("a", lease.id), posting("b", lease.id)], [(lease, 1, 2, 1)]))
    [page] = result.pages
    assert (result.postings, result.ends, result.rejected) == (2, [], [])
    assert (page.applied, page.counted, page.last_completed_page, page.completed) == (True, True, 1, True)
    assert stored(store)["a"][0] == "title a"
    row = next(k for k in store.list_keywords() if k["id"] == lease.id)
    assert (row["crawl_status"], row["jobs_found"]) == ("completed", 2)
    assert await (writer.close()) == 0


@pytest_twisted.ensureDeferred
async def test_frames_are_committed_in_the_order_they_were_sent(store, writer):
    [lease] = store.claim("qcwy", "test", 1)
    replies = [writer.write([posting("a", lease.id, title=f"v{n}")], [(lease, n, 1, 3)]) for n in (1, 2, 3)]
    results = [await (reply) for reply in replies]
    assert [result.pages[0].last_completed_page for result in results] == [1, 2, 3]
    assert stored(store)["a"][0] == "v3"  # the last frame's update is the one that stays
    await (writer.close())


@pytest_twisted.ensureDeferred
async def test_a_fenced_page_is_answered_not_applied(store, writer):
    [lease] = store.claim("qcwy", "test", 1)
    store.release(lease, "taken over")
    result = await (writer.write([], [(lease, 1, 0, 2)], [(lease, "failed", "too late")]))
    assert not result.pages[0].applied and result.ends == [None]
    await (writer.close())


@pytest_twisted.ensureDeferred
async def test_an_end_is_committed_after_the_pages_of_its_frame(store, writer):
    [lease] = store.claim("qcwy", "test", 1)
    result = await (writer.write([posting("a", lease.id)], [(lease, 1, 1, 3)], [(lease, "blocked", "qcwy_waf")]))
    assert result.pages[0].applied and result.ends == ["partial"]
    row = next(k for k in store.list_keywords() if k["id"] == lease.id)
    assert (row["crawl_status"], row["last_completed_page"], row["blocked_claims"]) == ("partial", 1, 1)
    assert row["error_message"] == "blocked: qcwy_waf"
    await (writer.close())


@pytest_twisted.ensureDeferred
async def test_a_write_that_fails_is_reported_and_everything_after_it_is_lost(store, writer):
    [lease] = store.claim("qcwy", "test", 1)
    bad = orjson.dumps({"source": "qcwy", "job_id": "x", "published_at": "not a time"})
    failed = writer.write([bad], [(lease, 1, 1, 1)])
    after = writer.write([posting("b", lease.id)], [])
    with pytest.raises(WriteLost, match="not a time"):
        await (failed)
    with pytest.raises(WriteLost):
        await (after)
    with pytest.raises(WriteLost):
        await (writer.write([posting("c", lease.id)], []))  # the writer is gone: fails at once
    assert await (writer.ended) == 1
    assert stored(store) == {}
    assert next(k for k in store.list_keywords() if k["id"] == lease.id)["last_completed_page"] == 0


@pytest_twisted.ensureDeferred
async def test_a_killed_writer_fails_what_it_had_not_committed(store, writer):
    [lease] = store.claim("qcwy", "test", 1)
    await (writer.write([posting("a", lease.id)], []))  # started and answering
    writer.transport.signalProcess("KILL")
    with pytest.raises(WriteLost, match="killed by signal 9"):
        await (writer.write([posting("b", lease.id)], []))
    await (writer.ended)


@pytest_twisted.ensureDeferred
async def test_ctrl_c_and_sigterm_do_not_stop_the_writer_only_the_end_of_its_input_does(store, writer):
    [lease] = store.claim("qcwy", "test", 1)
    await (writer.write([], []))  # its signal handlers are installed once it answers
    os.kill(writer.transport.pid, signal.SIGINT)
    os.kill(writer.transport.pid, signal.SIGTERM)
    assert (await (writer.write([posting("a", lease.id)], []))).postings == 1
    assert await (writer.close()) == 0
    assert "a" in stored(store)


@pytest_twisted.ensureDeferred
async def test_the_writer_imports_the_crawls_own_farm_whatever_the_working_directory_holds(store, tmp_path, monkeypatch):
    # scrapyd runs a crawl from its own directory, which may hold anything, a `farm` folder included
    impostor = tmp_path / "farm" / "state"
    impostor.mkdir(parents=True)
    (tmp_path / "farm" / "__init__.py").write_text("raise ImportError('the wrong farm')\n")
    (impostor / "__init__.py").write_text("")
    (impostor / "writer.py").write_text("import sys\nsys.exit(3)\n")
    monkeypatch.chdir(tmp_path)
    writer = StateWriter.spawn(store)
    try:
        [lease] = store.claim("qcwy", "test", 1)
        result = await (writer.write([posting("a", lease.id)], [(lease, 1, 1, 1)]))
        assert result.postings == 1 and result.pages[0].completed
        assert await (writer.close()) == 0
    finally:
        if not writer.ended.called:
            writer.transport.signalProcess("KILL")
