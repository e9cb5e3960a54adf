"""One crawl per JOBDIR (farm.crawl.backends.joblock): a holder killed with SIGKILL releases it."""

import signal
import subprocess
import sys
import time

import pytest

from farm.crawl.backends.joblock import JobdirInUse, JobdirLock

HOLDER = """
import sys, time
from farm.crawl.backends.joblock import JobdirLock
lock = JobdirLock.take(sys.argv[1])
lock.note("killed-one")
print("held", flush=True)
time.sleep(60)
"""


def test_a_kill_9_of_the_holder_releases_the_jobdir(tmp_path):
    holder = subprocess.Popen([sys.executable, "-c", HOLDER, str(tmp_path)], stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout.readline().strip() == "held"
        with pytest.raises(JobdirInUse, match=f"pid {holder.pid} .*crawler id killed-one"):
            JobdirLock.take(tmp_path)
        holder.send_signal(signal.SIGKILL)
        holder.wait(10)
    finally:
        holder.kill()
        holder.wait(10)
    deadline = time.monotonic() + 5
    while True:  # the kernel drops the lock as the process ends
        try:
            lock = JobdirLock.take(tmp_path)
            break
        except JobdirInUse:
            assert time.monotonic() < deadline, "the killed holder's lock was not released"
            time.sleep(0.02)
    lock.release()
