"""Unit tests start no process: every way Python, Twisted and multiprocessing start one is refused while
a test under tests/unit is set up, run and torn down, its fixtures included. A test that needs a process
(a sandbox served by a child, a `scrapy crawl`, the state writer's own process) belongs in
tests/integration or tests/e2e. A crawl built in a unit test gets its state writer on a thread of the
test's process instead (tests/unit/writer_thread.py).

The guard is a hook of this directory's, not an autouse fixture: a fixture of a wider scope (a module's
sandbox, say) is set up before any autouse fixture could patch, and would escape it.
"""

import multiprocessing.process
import os
import subprocess
from collections.abc import Iterator
from contextlib import contextmanager

import pytest

# (owner, attribute): subprocess (and asyncio's subprocesses, which use it), fork and exec of every kind
# (Twisted's spawnProcess uses fork or posix_spawnp), and multiprocessing whatever its start method.
SPAWNERS = (
    (subprocess.Popen, "__init__"),
    (os, "fork"),
    (os, "forkpty"),
    (os, "posix_spawn"),
    (os, "posix_spawnp"),
    (os, "system"),
    (os, "popen"),
    (multiprocessing.process.BaseProcess, "start"),
)


class ProcessStarted(AssertionError):
    """A unit test started a process."""


def _refusal(name: str):
    def refuse(*args, **kwargs):
        raise ProcessStarted(
            f"a unit test started a process ({name}): unit tests start none; "
            "move the test to tests/integration or tests/e2e, or test the code in this process"
        )

    return refuse


@contextmanager
def no_process() -> Iterator[None]:
    """Every process start refused inside the block, and the state writer served on a thread."""
    # imported here, not at the top: Twisted's reactor must not be installed before pytest-twisted's
    from farm.writer.process import StateWriter
    from tests.unit.writer_thread import spawn_on_a_thread

    with pytest.MonkeyPatch.context() as patch:
        for owner, attribute in SPAWNERS:
            if hasattr(owner, attribute):
                patch.setattr(owner, attribute, _refusal(f"{getattr(owner, '__name__', owner)}.{attribute}"))
        patch.setattr(StateWriter, "spawn", classmethod(spawn_on_a_thread))
        yield


@pytest.hookimpl(wrapper=True)
def pytest_runtest_setup(item):
    with no_process():
        return (yield)


@pytest.hookimpl(wrapper=True)
def pytest_runtest_call(item):
    with no_process():
        return (yield)


@pytest.hookimpl(wrapper=True)
def pytest_runtest_teardown(item, nextitem):
    with no_process():
        return (yield)
