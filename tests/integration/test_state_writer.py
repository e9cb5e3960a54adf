"""The state writer process, for real: frames in, one transaction each, in order; failures reported."""

import os
import signal
from datetime import UTC, datetime

import orjson
import pytest
import pytest_twisted
from scrapy.exceptions import DropItem
from scrapy.statscollectors import MemoryStatsCollector
from scrapy.utils.test import get_crawler
from sqlalchemy import select
from twisted.internet import reactor

from farm.crawl.outbox import Outbox
from farm.crawl.parts import CrawlParts
from farm.items import JobPosting
from farm.pipelines.sql import SqlPostingsPipeline
from farm.spiders.parsing import site_time
from farm.state.db import make_engine
from farm.state.models import JobPostingRow
from farm.state.posting_fields import JSON_DEPTH_MAX
from farm.state.store import KeywordStore
from farm.writer.process import PIPE_SIZE, StateWriter, WriteLost
from tests.integration.strict import strict
from tests.migrated import migrated
from tests.unit.components import make_crawler
from tests.unit.test_normalise import deep, depth  # JSON nested n levels, and how deep a value is

# A test of the writer's process alone, or of a fault, runs on one database in `make test`, the three shared
# out; `make soak` (FARM_SOAK=1) runs it on each. The writes themselves are tested on every database.
SOAK = bool(os.environ.get("FARM_SOAK"))


def one_database(kind: str):
    """The test on the database ``kind`` in `make test`, on each in `make soak`."""
    return pytest.mark.parametrize(
        "every_db_url", ["sqlite", "mariadb", "postgresql"] if SOAK else [kind], indirect=True
    )


@pytest.fixture
def store(every_db_url):
    url = strict(every_db_url)  # the writer process is made from the store's URL: strict too
    migrated(url)
    store = KeywordStore(make_engine(url))
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
    row = {
        "source": "qcwy",
        "job_id": job_id,
        "keyword_id": keyword_id,
        "title": f"title {job_id}",
        "published_at": datetime(2026, 11, 30, 9, 30, tzinfo=UTC),
        "raw": {"jobId": job_id},
    }
    return orjson.dumps({**row, **fields})


def stored(store):
    with store.engine.connect() as conn:
        rows = conn.execute(select(JobPostingRow.job_id, JobPostingRow.title, JobPostingRow.published_at))
        return {job_id: (title, published) for job_id, title, published in rows}


@pytest_twisted.ensureDeferred
async def test_a_frame_stores_its_postings_and_records_its_pages_in_one_go(store, writer):
    [lease] = store.claim("qcwy", "test", 1)
    result = await writer.write([posting("a", lease.id), posting("b", lease.id)], [(lease, 1, 2, 1)])
    [page] = result.pages
    assert (result.postings, result.ends, result.rejected) == (2, [], [])
    assert (page.applied, page.counted, page.last_completed_page, page.completed) == (True, True, 1, True)
    assert stored(store)["a"][0] == "title a"
    row = next(k for k in store.list_keywords() if k["id"] == lease.id)
    assert (row["crawl_status"], row["jobs_found"]) == ("completed", 2)
    assert await writer.close() == 0


@one_database("sqlite")
@pytest_twisted.ensureDeferred
async def test_the_pipe_to_the_writer_holds_a_whole_frame(store, writer):
    # a frame is a few hundred kB: through Linux's default 64 kB pipe it crossed in as many turns of
    # the crawl's busy reactor, and its pages waited that long in the page window
    fcntl = pytest.importorskip("fcntl")
    allowed = int(open("/proc/sys/fs/pipe-max-size").read())
    assert fcntl.fcntl(writer.transport.pipes[0].fileno(), fcntl.F_GETPIPE_SZ) == min(PIPE_SIZE, allowed)
    assert PIPE_SIZE >= 1 << 20
    [lease] = store.claim("qcwy", "test", 1)
    frame = [posting(f"j{n}", lease.id, title="职位" * 200) for n in range(400)]  # some 700 kB
    result = await writer.write(frame, [(lease, 1, 400, 1)])
    assert result.postings == 400 and result.pages[0].completed
    assert await writer.close() == 0


@pytest_twisted.ensureDeferred
async def test_frames_are_committed_in_the_order_they_were_sent(store, writer):
    [lease] = store.claim("qcwy", "test", 1)
    replies = [writer.write([posting("a", lease.id, title=f"v{n}")], [(lease, n, 1, 3)]) for n in (1, 2, 3)]
    results = [await reply for reply in replies]
    assert [result.pages[0].last_completed_page for result in results] == [1, 2, 3]
    assert stored(store)["a"][0] == "v3"  # the last frame's update is the one that stays
    await writer.close()


@pytest_twisted.ensureDeferred
async def test_a_fenced_page_is_answered_not_applied(store, writer):
    [lease] = store.claim("qcwy", "test", 1)
    store.release(lease, "taken over")
    result = await writer.write([], [(lease, 1, 0, 2)], [(lease, "failed", "too late")])
    assert not result.pages[0].applied and result.ends == [None]
    await writer.close()


@pytest_twisted.ensureDeferred
async def test_an_end_is_committed_after_the_pages_of_its_frame(store, writer):
    [lease] = store.claim("qcwy", "test", 1)
    result = await writer.write([posting("a", lease.id)], [(lease, 1, 1, 3)], [(lease, "blocked", "qcwy_waf")])
    assert result.pages[0].applied and result.ends == ["partial"]
    row = next(k for k in store.list_keywords() if k["id"] == lease.id)
    assert (row["crawl_status"], row["last_completed_page"], row["blocked_claims"]) == ("partial", 1, 1)
    assert row["error_message"] == "blocked: qcwy_waf"
    await writer.close()


def claim_of(crawler_id, n=1, skip=(), held=()):
    return ("qcwy", crawler_id, n, frozenset(skip), frozenset(held))


@pytest_twisted.ensureDeferred
async def test_the_writer_makes_the_crawls_claims_after_the_writes_of_their_frame(store, writer):
    [first] = (await writer.write([], [], [], [claim_of("me")]).addTimeout(30, reactor)).claims
    [a], outlook = first
    assert (a.source, a.from_status, outlook) == ("qcwy", "fresh", None)
    # the same frame releases a and claims: the claim comes after the release, and takes a back first
    result = await writer.write(
        [], [], [(a, "released", "crawl closed")], [claim_of("me", 2, held={a.key})]
    ).addTimeout(30, reactor)
    assert result.ends == ["partial"]
    [(leases, outlook)] = result.claims
    assert [(lease.id, lease.from_status) for lease in leases] == [(a.id, "partial"), (a.id + 1, "fresh")]
    assert leases[0].lease_token != a.lease_token and outlook is None
    # nothing left: the answer says what a claim could take now (nothing) for the crawl to decide
    [(leases, outlook)] = (await writer.write([], [], [], [claim_of("me")]).addTimeout(30, reactor)).claims
    assert leases == [] and (outlook.claimable, outlook.next_retry_at) == (0, None)
    await writer.close()


def test_a_claim_of_a_crawl_that_was_killed_is_not_made(store, monkeypatch):
    # the writer still commits a killed crawl's frames (its pages stay done), but claims nothing for it
    import io

    from farm.writer import serve as state_writer
    from farm.writer.frames import frame, read_answer
    from farm.writer.serve import serve

    crawl = os.getppid()
    parents = iter([crawl, crawl, 1])  # serve's start, the first frame's claim, then the crawl is gone
    monkeypatch.setattr(state_writer.os, "getppid", lambda: next(parents))
    frames = io.BytesIO(frame([], [], [], [claim_of("me")]) + frame([], [], [], [claim_of("me")]))
    out = io.BytesIO()
    serve(store, frames, out)
    first, second = (read_answer(line.removeprefix(b"ok ")) for line in out.getvalue().splitlines())
    assert len(first.claims[0][0]) == 1 and second.claims == [([], None)]
    assert [k["crawl_status"] for k in store.list_keywords()].count("crawling") == 1


def test_the_writer_freezes_its_heap_and_collects_its_young_objects_rarely(store, monkeypatch):
    # each frame decodes into thousands of objects: collected every 700, the writer's collections
    # slowed the crawl beside it by 8 % (the two share the machine's caches)
    import gc
    import io
    from types import SimpleNamespace

    from farm.heap import YOUNG_COLLECTION_THRESHOLD
    from farm.writer import serve as state_writer

    config = {"db_url": store.engine.url.render_as_string(hide_password=False), **store.options()}
    monkeypatch.setenv(state_writer.CONFIG_VARIABLE, orjson.dumps(config).decode())
    monkeypatch.setattr(state_writer.signal, "signal", lambda *args: None)  # this test process keeps its own
    out = io.BytesIO()
    monkeypatch.setattr(state_writer.sys, "stdin", SimpleNamespace(buffer=io.BytesIO()))  # no frames: it ends
    monkeypatch.setattr(state_writer.sys, "stdout", SimpleNamespace(buffer=out))
    thresholds = gc.get_threshold()
    try:
        assert state_writer.main() == 0 and out.getvalue() == state_writer.READY
        assert gc.get_threshold()[0] >= YOUNG_COLLECTION_THRESHOLD and gc.get_freeze_count() > 0
    finally:
        gc.unfreeze()
        gc.set_threshold(*thresholds)


def rename_postings_table(store, old, new):
    with store.engine.begin() as conn:
        conn.exec_driver_sql(f"ALTER TABLE {old} RENAME TO {new}")


@one_database("mariadb")
@pytest_twisted.ensureDeferred
async def test_a_write_that_fails_is_reported_and_everything_after_it_is_lost(store, writer):
    [lease] = store.claim("qcwy", "test", 1)
    await writer.write([], [])  # started and answering
    # not one row's fault (that would be a rejected posting): the table is gone from under the writer
    rename_postings_table(store, "job_posting", "job_posting_away")
    failed = writer.write([posting("a", lease.id)], [(lease, 1, 1, 1)])
    after = writer.write([posting("b", lease.id)], [])
    with pytest.raises(WriteLost, match="job_posting"):
        await failed
    with pytest.raises(WriteLost):
        await after
    with pytest.raises(WriteLost):
        await writer.write([posting("c", lease.id)], [])  # the writer is gone: fails at once
    assert await writer.ended == 1
    rename_postings_table(store, "job_posting_away", "job_posting")
    assert stored(store) == {}
    assert next(k for k in store.list_keywords() if k["id"] == lease.id)["last_completed_page"] == 0


@one_database("postgresql")
@pytest_twisted.ensureDeferred
async def test_a_killed_writer_fails_what_it_had_not_committed(store, writer):
    [lease] = store.claim("qcwy", "test", 1)
    await writer.write([posting("a", lease.id)], [])  # started and answering
    writer.transport.signalProcess("KILL")
    with pytest.raises(WriteLost, match="killed by signal 9"):
        await writer.write([posting("b", lease.id)], [])
    await writer.ended


@one_database("mariadb")
@pytest_twisted.ensureDeferred
async def test_ctrl_c_and_sigterm_do_not_stop_the_writer_only_the_end_of_its_input_does(store, writer):
    [lease] = store.claim("qcwy", "test", 1)
    await writer.write([], [])  # its signal handlers are installed once it answers
    os.kill(writer.transport.pid, signal.SIGINT)
    os.kill(writer.transport.pid, signal.SIGTERM)
    assert (await writer.write([posting("a", lease.id)], [])).postings == 1
    assert await writer.close() == 0
    assert "a" in stored(store)


@one_database("postgresql")
@pytest_twisted.ensureDeferred
async def test_the_writer_imports_the_crawls_own_farm_whatever_the_working_directory_holds(
    store, tmp_path, monkeypatch
):
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
        result = await writer.write([posting("a", lease.id)], [(lease, 1, 1, 1)])
        assert result.postings == 1 and result.pages[0].completed
        assert await writer.close() == 0
    finally:
        if not writer.ended.called:
            writer.transport.signalProcess("KILL")


@pytest_twisted.ensureDeferred
async def test_hostile_postings_are_stored_fitted_and_their_page_recorded(every_db_url):
    """Through the pipeline's encoding, the outbox and the real writer process, on a strict database."""
    crawler = make_crawler(strict(every_db_url), [("qcwy", "北京", "python")])
    pipeline = SqlPostingsPipeline.from_crawler(crawler)
    runtime = crawler.get_extension(CrawlParts)
    try:
        [lease] = runtime.store.claim("qcwy", "test", 1)
        ordinary = {
            "source": "qcwy",
            "keyword_id": lease.id,
            "title": "Python 工程师",
            "published_at": site_time("2026-11-30 09:30:00"),
            "tags": ["Python"],
        }
        hostile = {
            "long": {"title": "😀" * 300, "company": "𠀀" * 300, "salary": "职" * 100, "url": "u" * 600},
            "no-date": {"published_at": site_time("0001-01-01 00:00:00")},
            "far": {"published_at": site_time("9999-12-31 23:59:59"), "title": "a\x00b"},
            "garbage-date": {"published_at": "昨天"},
            "unencodable": {"raw": {"big": 2**70, "small": -(2**70), "nan": float("nan"), 1: "x", "deep": deep(1000)}},
            "deep": {"raw": deep(40)},
            "nul": {"raw": {"k\x00": "v\x00"}, "tags": ["a\x00"]},
            "plain": {},
        }
        for job_id, fields in hostile.items():
            pipeline.process_item(JobPosting(**{**ordinary, "job_id": job_id, "raw": {"jobId": job_id}, **fields}))
        with pytest.raises(DropItem, match="longer than its column"):
            pipeline.process_item(JobPosting(**{**ordinary, "job_id": "x" * 65}))
        page = await runtime.outbox.page_done(lease, 1, len(hostile), 1)
        assert page.applied and page.completed
        with runtime.store.engine.connect() as conn:
            rows = {row.job_id: row for row in conn.execute(select(JobPostingRow))}
        assert set(rows) == set(hostile)
        long = rows["long"]
        assert (long.title, long.company, long.salary) == ("😀" * 255, "𠀀" * 255, "职" * 64)
        assert long.url == "u" * 512
        assert [rows[job_id].published_at for job_id in ("no-date", "far", "garbage-date")] == [None] * 3
        assert rows["far"].title == "ab"
        assert rows["plain"].published_at == datetime(2026, 11, 30, 1, 30, tzinfo=UTC)
        assert (rows["plain"].title, rows["plain"].raw, rows["plain"].tags) == (
            "Python 工程师",
            {"jobId": "plain"},
            ["Python"],
        )
        raw = rows["unencodable"].raw
        assert (raw["big"], raw["small"], raw["nan"], raw["1"]) == (str(2**70), str(-(2**70)), None, "x")
        assert depth(raw) == JSON_DEPTH_MAX and depth(rows["deep"].raw) == JSON_DEPTH_MAX
        assert (rows["nul"].raw, rows["nul"].tags) == ({"k": "v"}, ["a"])
        row = next(k for k in runtime.store.list_keywords() if k["id"] == lease.id)
        assert (row["crawl_status"], row["last_completed_page"], row["jobs_found"]) == ("completed", 1, len(hostile))
        stats = crawler.stats.get_stats()
        assert {name: value for name, value in stats.items() if name.startswith("farm/posting/")} == {
            "farm/posting/normalised/encoding": 1,
            "farm/posting/normalised/title": 2,
            "farm/posting/normalised/company": 1,
            "farm/posting/normalised/salary": 1,
            "farm/posting/normalised/url": 1,
            "farm/posting/normalised/published_at": 3,
            "farm/posting/normalised/raw": 2,
            "farm/posting/normalised/tags": 1,
        }
        assert (stats.get("farm/sql/dropped"), stats.get("farm/sql/error")) == (1, None)
        assert stats["farm/sql/upserted"] == len(hostile)
        # the one salary text no rule knows ("职" * 64) is counted and stored without numbers
        assert stats["farm/salary/unparsed"] == 1
        assert (long.salary_min, long.salary_max, long.salary_unit) == (None, None, None)
    finally:
        runtime.close()
        await runtime.writer.ended


@pytest_twisted.ensureDeferred
async def test_postings_that_cannot_be_stored_are_counted_and_logged_and_the_rest_of_the_page_stored(
    store, writer, caplog
):
    [lease] = store.claim("qcwy", "test", 1)
    bad = [posting("x" * 65, lease.id)]  # a key the pipeline drops; a frame may still hold it
    if store.engine.dialect.name != "sqlite":
        # a column narrower than the list says (a table changed by hand): MariaDB refuses the row
        change = "ALTER COLUMN title TYPE" if store.engine.dialect.name == "postgresql" else "MODIFY title"
        with store.engine.begin() as conn:
            conn.exec_driver_sql(f"ALTER TABLE job_posting {change} VARCHAR(10)")
        bad.append(posting("long-title", lease.id))
    stats = MemoryStatsCollector(get_crawler())
    box = Outbox(writer, stats, batch_size=100, flush_interval=60, on_lost=pytest.fail)
    for row in [posting("a", lease.id, title="short"), *bad]:
        box.add_posting(row)
    page = await box.page_done(lease, 1, 1 + len(bad), 1)
    assert page.applied and page.completed
    assert stats.get_value("farm/posting/rejected") == len(bad)
    assert stats.get_value("farm/sql/upserted") == 1 and stats.get_value("farm/sql/error") is None
    assert "the database refused posting qcwy xxxx" in caplog.text
    if bad[1:]:
        too_long = "22001 value too long" if store.engine.dialect.name == "postgresql" else "1406 Data too long"
        assert f"qcwy long-title: {too_long}" in caplog.text
    assert set(stored(store)) == {"a"}
    await writer.close()
