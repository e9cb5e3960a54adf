"""The JOBDIR checkpoint's file (farm.crawl.backends.checkpoint): what it keeps and bad files (a kill inside a
save: tests/integration/test_checkpoint_kill.py)."""

import logging
import os
import sqlite3

import pytest

from farm.crawl.backends.checkpoint import FILE_NAME, CheckpointFile, OtherSpider, open_checkpoint

TODAY, YESTERDAY = "2026-12-01", "2026-11-30"


def opened(jobdir, spider="qcwy", day=TODAY, crawler_id="host:1"):
    return open_checkpoint(jobdir, spider, day, crawler_id)


def rows(jobdir, table):
    conn = sqlite3.connect(jobdir / FILE_NAME)
    try:
        return set(conn.execute(f"SELECT * FROM {table}"))
    finally:
        conn.close()


def test_what_was_flushed_is_what_the_next_open_resumes_with_its_crawler_id(tmp_path):
    checkpoint = opened(tmp_path)
    assert checkpoint.saved is None and checkpoint.crawler_id == "host:1"
    checkpoint.hold((7, 3))
    for page in (1, 2, 3):
        checkpoint.queued((7, 3), page)
    checkpoint.settled((7, 3), 1)
    assert checkpoint.flush() == 4
    checkpoint.file.close()

    resumed = opened(tmp_path, crawler_id="host:2")
    assert resumed.crawler_id == "host:1"  # the same holder as before
    assert resumed.saved.leases == {(7, 3)} and resumed.saved.pages == {(7, 3): {2, 3}}
    assert resumed.saved.day == TODAY and resumed.saved.spider == "qcwy"


def test_a_tick_writes_only_what_changed_and_the_last_change_of_a_page_wins(tmp_path):
    checkpoint = opened(tmp_path)
    checkpoint.hold((1, 1))
    checkpoint.queued((1, 1), 1)
    checkpoint.flush()
    checkpoint.queued((1, 1), 2)
    checkpoint.settled((1, 1), 2)  # queued and recorded between two ticks
    checkpoint.settled((1, 1), 1)
    assert checkpoint.changes == 2
    assert checkpoint.flush() == 2 and checkpoint.flush() == 0
    assert rows(tmp_path, "page") == set() and rows(tmp_path, "lease") == {(1, 1)}


def test_a_lease_that_ends_takes_its_pages_with_it(tmp_path):
    checkpoint = opened(tmp_path)
    checkpoint.hold((1, 1))
    checkpoint.hold((2, 5))
    checkpoint.queued((1, 1), 1)
    checkpoint.queued((2, 5), 1)
    checkpoint.flush()
    checkpoint.queued((1, 1), 2)  # buffered, not yet saved
    checkpoint.release((1, 1))
    checkpoint.flush()
    assert rows(tmp_path, "lease") == {(2, 5)} and rows(tmp_path, "page") == {(2, 5, 1)}


def _saved_checkpoint(tmp_path, spider="qcwy", day=TODAY):
    checkpoint = opened(tmp_path, spider=spider, day=day)
    checkpoint.hold((1, 1))
    checkpoint.queued((1, 1), 1)
    checkpoint.flush()
    checkpoint.file.close()
    return tmp_path / FILE_NAME


@pytest.mark.parametrize("damage", ["truncated", "garbage", "empty", "version"])
def test_a_checkpoint_that_cannot_be_used_is_moved_aside_and_the_crawl_starts_afresh(tmp_path, caplog, damage):
    path = _saved_checkpoint(tmp_path)
    if damage == "truncated":
        with sqlite3.connect(path) as conn:
            conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        os.truncate(path, path.stat().st_size // 2)
    elif damage == "garbage":
        path.write_bytes(b"\x00not a database\xff" * 300)
    elif damage == "empty":
        path.write_bytes(b"")
    else:
        with sqlite3.connect(path) as conn:
            conn.execute("UPDATE meta SET value = '99' WHERE name = 'version'")
    with caplog.at_level(logging.ERROR):
        checkpoint = opened(tmp_path, crawler_id="host:2")
    assert checkpoint.saved is None and checkpoint.crawler_id == "host:2"
    [record] = [r for r in caplog.records if r.levelno >= logging.ERROR]
    assert f"JOBDIR={tmp_path}" in record.getMessage() and "moved aside" in record.getMessage()
    assert (tmp_path / (FILE_NAME + ".bad")).exists()
    checkpoint.hold((3, 1))
    checkpoint.flush()
    assert rows(tmp_path, "lease") == {(3, 1)}  # a sound new one


def test_another_spiders_checkpoint_is_refused_and_left_as_it_is(tmp_path):
    path = _saved_checkpoint(tmp_path, spider="boss")
    before = rows(tmp_path, "lease"), rows(tmp_path, "page"), rows(tmp_path, "meta")
    with pytest.raises(OtherSpider, match=r"holds the checkpoint of spider 'boss', not 'qcwy': give each crawl"):
        opened(tmp_path)
    assert (rows(tmp_path, "lease"), rows(tmp_path, "page"), rows(tmp_path, "meta")) == before
    assert path.exists() and not (tmp_path / (FILE_NAME + ".bad")).exists()


def test_yesterdays_checkpoint_resumes_nothing_and_is_started_anew(tmp_path, caplog):
    _saved_checkpoint(tmp_path, day=YESTERDAY)
    with caplog.at_level(logging.WARNING):
        checkpoint = opened(tmp_path, crawler_id="host:2")
    assert checkpoint.saved is None and checkpoint.crawler_id == "host:2"
    assert any(f"the checkpoint is of {YESTERDAY}, not today ({TODAY})" in r.getMessage() for r in caplog.records)
    assert rows(tmp_path, "lease") == set() and rows(tmp_path, "page") == set()
    assert ("day", TODAY) in rows(tmp_path, "meta")


def test_a_finished_crawl_removes_its_checkpoint(tmp_path):
    checkpoint = opened(tmp_path)
    checkpoint.hold((1, 1))
    checkpoint.flush()
    checkpoint.file.remove()
    assert not any(name.startswith(FILE_NAME) for name in os.listdir(tmp_path))


def test_the_file_is_in_wal_mode(tmp_path):
    path = _saved_checkpoint(tmp_path)
    file = CheckpointFile(path)
    file.read()
    assert file.conn.execute("PRAGMA journal_mode").fetchone() == ("wal",)
    file.close()
