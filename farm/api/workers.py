"""`farm api --workers N`: N server processes on the one socket the command bound.

Each worker is a whole server (its own event loop, database threads and connection pool),
forked from the command once the socket listens, so the kernel hands connections to all of
them and N cores serve requests. Several are safe: every claim and every write is fenced in
the database, as several crawlers are. The command says it listens once every worker serves.
SIGTERM or SIGINT to the command stops the workers gracefully, each once (they run in their own
process group: a terminal's Ctrl-C reaches the command alone). A worker that dies is replaced;
one that dies before it ever served stops the command, since it would die again. A worker
whose command is gone (killed) stops by itself: it watches a pipe only the command holds open.
"""

import logging
import os
import select
import signal
import sys
import threading
import time
from collections.abc import Callable

logger = logging.getLogger(__name__)

RESPAWN_PAUSE = 1.0  # seconds before replacing a worker that lived less than this
START_TIMEOUT = 120  # seconds every worker has to serve
STOPS = (signal.SIGTERM, signal.SIGINT)


class WorkerFailed(Exception):
    """A worker exited before it served."""


# serve(index, ready, watch): run worker ``index``; ``ready()`` once it serves; ``watch(server)``
# makes the uvicorn server stop when the command is gone
Serve = Callable[[int, Callable[[], None], Callable[[object], None]], None]


def run_workers(count: int, serve: Serve, started: Callable[[], None]) -> None:
    """Fork ``count`` workers running ``serve``; ``started()`` once all serve; return when all stopped."""
    ready_r, ready_w = os.pipe()
    alive_r, alive_w = os.pipe()  # only the command holds alive_w: EOF at alive_r is its end
    children: dict[int, tuple[int, float]] = {}  # pid: (index, forked at)
    stopping = False

    def spawn(index: int) -> None:
        signal.pthread_sigmask(signal.SIG_BLOCK, STOPS)  # the child resets the handlers before any runs
        pid = os.fork()
        if pid == 0:
            _worker(index, serve, ready_r, ready_w, alive_r, alive_w)
        signal.pthread_sigmask(signal.SIG_UNBLOCK, STOPS)
        children[pid] = (index, time.monotonic())

    def stop(signum, frame) -> None:
        nonlocal stopping
        if not stopping:
            stopping = True
            logger.info("stopping %d workers (%s)", len(children), signal.Signals(signum).name)
            for pid in children:
                _signal(pid, signal.SIGTERM)

    previous = {sig: signal.signal(sig, stop) for sig in STOPS}
    try:
        for index in range(count):
            spawn(index)
        _wait_ready(count, ready_r, children, lambda: stopping)
        if not stopping:
            started()
        while children:
            pid, status = os.waitpid(-1, 0)  # a signal's handler runs, then the wait goes on
            if pid not in children:
                continue
            index, forked = children.pop(pid)
            if stopping:
                continue
            logger.warning("worker %d (pid %d) exited (%s); starting another", index, pid, _how(status))
            if time.monotonic() - forked < RESPAWN_PAUSE:
                time.sleep(RESPAWN_PAUSE)
            spawn(index)
    except BaseException:
        for pid in children:
            _signal(pid, signal.SIGTERM)
        for pid in list(children):
            try:
                os.waitpid(pid, 0)
            except ChildProcessError:
                pass
        raise
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)
        for fd in (ready_r, ready_w, alive_r, alive_w):
            os.close(fd)


def _wait_ready(count: int, ready_r: int, children: dict, stopping: Callable[[], bool]) -> None:
    """Until ``count`` workers said they serve; WorkerFailed when one exits first."""
    deadline = time.monotonic() + START_TIMEOUT
    ready = 0
    while ready < count and not stopping():
        readable, _, _ = select.select([ready_r], [], [], 0.1)
        if readable:
            ready += len(os.read(ready_r, count))
        pid, status = os.waitpid(-1, os.WNOHANG)
        if pid in children:
            index, _ = children.pop(pid)
            raise WorkerFailed(f"worker {index} exited before it served ({_how(status)}); see the log above")
        if time.monotonic() > deadline:
            raise WorkerFailed(f"{count - ready} of {count} workers did not serve within {START_TIMEOUT}s")


def _worker(index: int, serve: Serve, ready_r: int, ready_w: int, alive_r: int, alive_w: int) -> None:
    """The forked worker: serve, then exit without running the command's own ends."""
    code = 1
    try:
        os.setpgid(0, 0)
        for sig in STOPS:
            signal.signal(sig, signal.SIG_DFL)  # uvicorn installs its own once it runs
        signal.pthread_sigmask(signal.SIG_UNBLOCK, STOPS)
        os.close(ready_r)
        os.close(alive_w)
        serve(index, lambda: os.write(ready_w, b"."), lambda server: _watch(alive_r, server))
        code = 0
    except BaseException:
        logger.exception("worker %d failed", index)
    finally:
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(code)


def _watch(alive_r: int, server) -> None:
    """Stop ``server`` (gracefully, as a SIGTERM does) when the command's end of the pipe closes."""

    def wait():
        while os.read(alive_r, 1):
            pass
        server.should_exit = True

    threading.Thread(target=wait, name="farm-api-command", daemon=True).start()


def _signal(pid: int, sig: int) -> None:
    try:
        os.kill(pid, sig)
    except ProcessLookupError:  # exited meanwhile
        pass


def _how(status: int) -> str:
    if os.WIFSIGNALED(status):
        return f"signal {signal.Signals(os.WTERMSIG(status)).name}"
    return f"exit code {os.waitstatus_to_exitcode(status)}"
