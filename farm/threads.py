"""A one-thread pool that never keeps the process alive.

Made stopped: its owner starts it when the crawl starts (work queued before
waits for it). A crawl stops its pools itself when the engine stops (after
every write was answered); a pool left running by anything else (a tool, a test
that built a runtime and dropped it) must not keep the interpreter from exiting.
"""

from threading import Thread

from twisted.python.threadpool import ThreadPool


def single_thread_pool(name: str) -> ThreadPool:
    pool = ThreadPool(minthreads=1, maxthreads=1, name=name)
    pool.threadFactory = lambda *args, **kwargs: Thread(*args, daemon=True, **kwargs)
    return pool
