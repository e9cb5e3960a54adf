"""Redis restarted from an older snapshot (RDB persistence, its default) under two workers: the shared
state comes back as it was at the snapshot, the queue it describes gone. The workers notice Redis went
back in time and rebuild from the keyword table, as after a flush."""

import signal
import subprocess

import pytest
import redis

from farm.sandbox.testing import SandboxProcess
from tests.e2e.harness import fetched_pages, prepare_db, served, wait_until
from tests.e2e.test_shared import (
    check_everything_once,
    finish,
    free_port,
    logs,
    rows_for,
    start_workers,
)

pytestmark = [pytest.mark.e2e, pytest.mark.redis]


class PersistentRedis:
    """A redis-server of the test's own whose state lives in a dump file in ``folder``: saved when the test
    says (SAVE), and read back by the server started again after a kill -9."""

    def __init__(self, folder):
        self.folder = folder
        self.port = free_port()
        self.url = f"redis://127.0.0.1:{self.port}/0"
        self.process = None

    def start(self) -> "PersistentRedis":
        command = ["redis-server", "--port", str(self.port), "--bind", "127.0.0.1", "--dir", str(self.folder)]
        self.process = subprocess.Popen([*command, "--save", "", "--appendonly", "no"], stdout=subprocess.DEVNULL)
        client = redis.Redis.from_url(self.url)

        def loaded():
            try:
                return client.info("persistence")["loading"] == 0
            except redis.ConnectionError:
                return False

        try:
            wait_until(lambda: loaded() or self.process.poll() is not None, 10, "the private redis-server to answer")
            assert self.process.poll() is None, "the private redis-server did not start"
        finally:
            client.close()
        return self

    def save(self) -> None:
        with redis.Redis.from_url(self.url) as client:
            client.save()

    def kill(self) -> None:
        if self.process is not None:
            self.process.send_signal(signal.SIGKILL)
            self.process.wait()


@pytest.fixture
def persistent_redis(tmp_path):
    folder = tmp_path / "redis"
    folder.mkdir()
    server = PersistentRedis(folder).start()
    try:
        yield server
    finally:
        server.kill()


def test_redis_restarted_from_an_older_snapshot_is_rebuilt_from_the_keyword_table(
    mariadb_url, persistent_redis, tmp_path
):
    # the snapshot holds an epoch the workers know, in-flight sets and a queue of requests long settled:
    # read as current, a worker's in-flight set of requests it acknowledged since kept every worker from
    # ending, and the old queue would have its pages fetched again
    rows = rows_for(16)
    prepare_db(mariadb_url, rows)
    with SandboxProcess(seed=11, postings=(200, 200)) as sandbox:
        slow = {"DOWNLOAD_DELAY": 0.02, "CONCURRENT_REQUESTS": 2}
        workers = start_workers(2, mariadb_url, sandbox, (persistent_redis.url, "farm"), tmp_path, **slow)
        try:
            wait_until(lambda: served(sandbox) >= 3, 60, "3 pages")
            persistent_redis.save()
            snapshot = served(sandbox)
            wait_until(lambda: served(sandbox) >= snapshot + 40, 60, "40 pages more")
            persistent_redis.kill()
            persistent_redis.start()  # from the snapshot
        except BaseException:
            for worker in workers:
                worker.kill()
                worker.wait()
            raise
        finish(workers, tmp_path, timeout=120)  # each ends by itself, or is killed and fails the test
        pages = check_everything_once(mariadb_url, sandbox, rows)
        fetches = fetched_pages(sandbox, "qcwy")
        # none twice: not the old queue's, nor those in a worker's hands as Redis restarted (fetched, or taken
        # from the queue to be), which the workers write back before the rebuild
        assert fetches == {page: 1 for page in pages}
    assert "Redis went back in time" in logs(tmp_path)
