"""One crawl per JOBDIR (farm.crawl.backends.joblock): the lock, its refusal, and what releases it."""

import os
import socket

import pytest

from farm.crawl.backends.joblock import FILE_NAME, JobdirInUse, JobdirLock
from farm.crawl.parts import CrawlParts
from farm.errors import FarmStartError
from tests.unit.components import make_crawler

ROWS = [("qcwy", "北京", "python")]


def test_a_held_jobdir_is_refused_with_one_line_naming_the_holder(tmp_path):
    lock = JobdirLock.take(tmp_path / "job")
    lock.note("worker-a")
    try:
        with pytest.raises(JobdirInUse) as refused:
            JobdirLock.take(tmp_path / "job")
        message = str(refused.value)
        assert "\n" not in message
        assert message.startswith(
            f"JOBDIR={tmp_path / 'job'} is in use by pid {os.getpid()} on host "
            f"{socket.gethostname()} (crawler id worker-a, since "
        )
        assert "one crawl per JOBDIR" in message
    finally:
        lock.release()


def test_a_holder_that_has_not_noted_itself_yet_is_still_refused(tmp_path):
    lock = JobdirLock.take(tmp_path)
    try:
        with pytest.raises(JobdirInUse, match="in use by another crawl"):
            JobdirLock.take(tmp_path)
    finally:
        lock.release()


def test_a_released_lock_is_taken_again_and_its_file_stays(tmp_path):
    first = JobdirLock.take(tmp_path)
    first.note("a")
    first.release()
    first.release()  # twice is harmless
    assert not first.held and (tmp_path / FILE_NAME).exists()
    second = JobdirLock.take(tmp_path)
    assert second.held
    second.release()


def test_a_crawl_on_a_held_jobdir_does_not_start_and_leaves_the_checkpoint_alone(sqlite_url, tmp_path):
    jobdir = tmp_path / "job"
    first = make_crawler(sqlite_url, ROWS, JOBDIR=str(jobdir), FARM_CRAWLER_ID="first")
    try:
        runtime = first.get_extension(CrawlParts)
        runtime.checkpoint.hold((1, 1))
        runtime.checkpoint.flush()
        with pytest.raises(FarmStartError, match=r"is in use by pid \d+ .*\(crawler id first, since"):
            make_crawler(sqlite_url, [], JOBDIR=str(jobdir), FARM_CRAWLER_ID="second")
        assert runtime.jobdir_lock.held
        runtime.checkpoint.file.close()
        assert runtime.checkpoint.file.read().leases == {(1, 1)}  # the second never touched it
    finally:
        first.get_extension(CrawlParts).close()
    assert not runtime.jobdir_lock.held
    second = make_crawler(sqlite_url, [], JOBDIR=str(jobdir), FARM_CRAWLER_ID="second")
    try:
        assert second.get_extension(CrawlParts).checkpoint.saved.leases == {(1, 1)}  # resumable once the first is gone
    finally:
        second.get_extension(CrawlParts).close()
