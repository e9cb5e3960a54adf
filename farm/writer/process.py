"""The crawl's end of the state writer process (see farm.writer).

Frames go to the child's stdin through the reactor (no thread, no blocking);
each gets a Deferred that fires, in order, when the child says its transaction
is committed. An error the child reports, or its exit, fails every frame not
yet committed.
"""

import logging
import os
import sys
from collections import deque
from pathlib import Path

import orjson
from twisted.internet import protocol, reactor
from twisted.internet.defer import Deferred, fail

import farm
from farm.errors import WriteLost
from farm.sites import packages
from farm.state.engine import deadlines
from farm.writer.frames import CONFIG_VARIABLE, READY, frame, read_answer

logger = logging.getLogger(__name__)

# A frame is a few hundred kB. Through a pipe of Linux's default 64 kB it crosses in as
# many turns of the crawl's reactor, which is busy, and its pages wait that long in the
# page window: the pipe to the child is made to hold a whole frame.
PIPE_SIZE = 1 << 20


class StateWriter(protocol.ProcessProtocol):
    def __init__(self):
        self._replies: deque[Deferred] = deque()
        self._out = b""
        self.error: str | None = None
        self._closed = False
        self.ready = False  # the child has started and answers at once (its first line)
        self.ended = Deferred()

    @classmethod
    def spawn(cls, store) -> "StateWriter":
        """A writer for the KeywordStore ``store``'s database, writing as it does."""
        writer = cls()
        # the store's settings by FarmConfig's field names: the child builds its store from them
        config = {
            "db_url": store.engine.url.render_as_string(hide_password=False),
            **{f"db_{name}": seconds for name, seconds in deadlines(store.engine).items()},
            **store.options(),
            "site_packages": list(packages()),  # a site package's salary forms (farm.sites)
        }
        # farm's own directory first, and -P so that the working directory is not on the path:
        # the child imports farm from wherever this crawl did (a checkout, site-packages, a
        # scrapyd egg), whatever the directory it runs in holds
        path = [str(Path(farm.__file__).resolve().parents[1]), os.environ.get("PYTHONPATH", "")]
        env = {
            **os.environ,
            CONFIG_VARIABLE: orjson.dumps(config).decode(),
            "PYTHONPATH": os.pathsep.join(filter(None, path)),
        }
        argv = [sys.executable, "-P", "-m", "farm.writer.serve"]
        reactor.spawnProcess(writer, sys.executable, argv, env=env)
        return writer

    def write(self, postings: list[bytes], pages, ends=(), claims=()) -> Deferred:
        """KeywordStore.write_batch of postings (each a JSON object), pages done (lease, page,
        jobs, total_pages) and keyword ends (lease, kind, message), then the claims (source,
        crawler_id, n, ids to skip, keys held); fires with its BatchResult once committed."""
        if self.error is not None or self._closed:
            return fail(WriteLost(self.error or "the state writer was closed"))
        reply = Deferred()
        self._replies.append(reply)
        self.transport.write(frame(postings, pages, ends, claims))
        return reply

    def close(self) -> Deferred:
        """End the input; fires once the child has committed what it had and exited."""
        self._closed = True
        if self.transport is not None and not self.ended.called:
            self.transport.closeStdin()
        return self.ended

    def connectionMade(self):
        _enlarge_pipe(self.transport.pipes.get(0))

    def outReceived(self, data: bytes):
        self._out += data
        *lines, self._out = self._out.split(b"\n")
        for line in lines:
            if line + b"\n" == READY and not self.ready:
                self.ready = True
                continue
            kind, _, detail = line.partition(b" ")
            if kind == b"ok" and self._replies:
                self._replies.popleft().callback(read_answer(detail))
            else:
                self._fail(f"the state writer failed: {line.decode('utf-8', 'replace')}")

    def errReceived(self, data: bytes):
        for line in data.decode("utf-8", "replace").splitlines():
            if line.strip():
                logger.warning("state writer: %s", line)

    def processEnded(self, reason):
        code, killer = getattr(reason.value, "exitCode", None), getattr(reason.value, "signal", None)
        how = f"was killed by signal {killer}" if killer else f"exited with code {code}"
        self._fail(f"the state writer {how}, {len(self._replies)} write(s) not committed")
        self.ended.callback(code)

    def _fail(self, message: str):
        if self.error is None:
            self.error = message
            if self._replies:
                logger.error("farm: %s", message)
        while self._replies:
            self._replies.popleft().errback(WriteLost(self.error))


def _enlarge_pipe(pipe) -> None:
    """Make ``pipe`` (the child's stdin) hold PIPE_SIZE bytes, or as many as the system allows."""
    try:
        import fcntl

        size = min(PIPE_SIZE, int(Path("/proc/sys/fs/pipe-max-size").read_text()))
        fcntl.fcntl(pipe.fileno(), fcntl.F_SETPIPE_SZ, size)
    except (ImportError, AttributeError, OSError, ValueError):  # not Linux: the default pipe, a little slower
        pass
