"""The API's database threads: as many as the pool keeps connections, and a bounded wait for one."""

import asyncio
import threading

import pytest
from sqlalchemy.exc import TimeoutError as PoolTimeout

pytest.importorskip("fastapi")

from farm.api.dbthreads import DbThreads
from farm.state.db import make_engine
from tests.unit.loop_helpers import run_loop


class Clock:
    def __init__(self):
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def test_as_many_threads_as_the_pool_keeps_connections(tmp_path):
    engine = make_engine(f"sqlite:///{tmp_path / 'farm.db'}")
    threads = DbThreads(engine, wait_limit=5)
    try:
        assert threads.size == engine.pool.size() == 5
        seen = set()

        async def calls():
            gate = threading.Barrier(threads.size, timeout=30)  # every thread busy at once

            def call():
                seen.add(threading.get_ident())
                gate.wait()

            await asyncio.gather(*(threads.run(call) for _ in range(threads.size * 3)))

        run_loop(calls)
        assert len(seen) == threads.size
    finally:
        threads.close()
        engine.dispose()


def test_a_call_that_waited_past_the_limit_for_a_thread_is_a_pool_timeout(tmp_path):
    engine = make_engine(f"sqlite:///{tmp_path / 'farm.db'}")
    clock = Clock()
    threads = DbThreads(engine, wait_limit=5, clock=clock)
    try:

        async def calls():
            busy, release = threading.Barrier(threads.size + 1, timeout=30), threading.Event()

            def hold():
                busy.wait()
                release.wait(timeout=30)
                return "held"

            holders = [asyncio.ensure_future(threads.run(hold)) for _ in range(threads.size)]
            await asyncio.to_thread(busy.wait)  # every thread is taken
            queued = asyncio.ensure_future(threads.run(lambda: "ran"))
            late = asyncio.ensure_future(threads.run(lambda: "ran"))
            await asyncio.sleep(0)  # both are queued now, at clock 0
            clock.now = 5.5
            release.set()
            return await asyncio.gather(*holders), await asyncio.gather(queued, late, return_exceptions=True)

        held, waited = run_loop(calls)
        assert held == ["held"] * threads.size
        assert all(isinstance(result, PoolTimeout) for result in waited), waited
        assert "FARM_DB_POOL_TIMEOUT" in str(waited[0])
    finally:
        threads.close()
        engine.dispose()
