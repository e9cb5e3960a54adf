"""Running a coroutine to its end from a test."""

import asyncio
import threading


def run_loop(coroutine_function):
    """``asyncio.run`` on a thread of its own: the test process's thread may have a loop running."""
    results = []
    thread = threading.Thread(target=lambda: results.append(asyncio.run(coroutine_function())))
    thread.start()
    thread.join(timeout=60)
    assert results, "the loop did not finish"
    return results[0]
