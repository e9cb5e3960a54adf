"""The threads the keyword API's store calls run on: as many as the engine's pool keeps connections.

A store call blocks its thread for the database's round trips, so it runs off the event loop,
on threads of its own. Their number is the pool's size: with more threads than pooled
connections, the calls past the pool's size open overflow connections that the pool closes
again when they are returned, a TCP (and TLS) handshake for every such request under load.
A call that waits for a thread longer than FARM_DB_POOL_TIMEOUT fails as a wait for a pooled
connection does (503 with Retry-After): an overloaded server says so instead of queueing for ever.
"""

import asyncio
import functools
import inspect
import time
from concurrent.futures import ThreadPoolExecutor

from sqlalchemy.engine import Engine
from sqlalchemy.exc import TimeoutError as PoolTimeout
from sqlalchemy.pool import QueuePool

UNPOOLED_THREADS = 4  # an engine without a sized pool (a SQLite file serialises its writers anyway)


class DbThreads:
    """Runs store calls on ``size(engine)`` threads, each waiting at most ``wait_limit`` seconds to start."""

    def __init__(self, engine: Engine, wait_limit: float, clock=time.monotonic):
        self.size = size(engine)
        self.wait_limit = wait_limit
        self.clock = clock
        self._executor = ThreadPoolExecutor(self.size, thread_name_prefix="farm-db")

    async def run(self, fn, *args, **kwargs):
        """``fn(*args, **kwargs)`` on one of the threads; its result, or what it raised."""
        queued = self.clock()
        call = functools.partial(self._started, queued, functools.partial(fn, *args, **kwargs))
        return await asyncio.get_running_loop().run_in_executor(self._executor, call)

    def _started(self, queued: float, call):
        waited = self.clock() - queued
        if waited > self.wait_limit:
            raise PoolTimeout(f"waited {waited:.1f}s for a database thread (FARM_DB_POOL_TIMEOUT={self.wait_limit:g})")
        return call()

    def close(self) -> None:
        """Let the calls under way finish; those not started are dropped."""
        self._executor.shutdown(wait=True, cancel_futures=True)


def size(engine: Engine) -> int:
    """The connections ``engine``'s pool keeps between checkouts."""
    pool = engine.pool
    return pool.size() if isinstance(pool, QueuePool) else UNPOOLED_THREADS


def on_db_thread(fn):
    """The sync endpoint ``fn(request, ...)`` as an async one that runs it whole on the app's
    DbThreads: one thread hop a request, its answer checked and written on the event loop.
    FastAPI reads the endpoint's parameters, name and docstring, which stay ``fn``'s."""

    async def endpoint(request, **kwargs):
        return await request.app.state.db.run(fn, request, **kwargs)

    endpoint.__signature__ = inspect.signature(fn)
    endpoint.__name__, endpoint.__qualname__, endpoint.__doc__ = fn.__name__, fn.__qualname__, fn.__doc__
    endpoint.__module__ = fn.__module__
    return endpoint
