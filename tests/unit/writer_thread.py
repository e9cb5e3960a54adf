"""The state writer on a thread of the test's process, for unit tests, which start no process.

``spawn_on_a_thread`` stands in for ``StateWriter.spawn``: the crawl's end is the real StateWriter
(a ProcessProtocol), its frames are encoded as the crawl sends them and read by the writer's own
serve loop (farm.writer.serve.serve) against the same database, on a store of its own as the child
builds; the answers reach the protocol on the reactor thread, as a child's stdout would. Only the
pipe and the process are left out: tests/integration/test_state_writer.py and the e2e crawls
cover those.
"""

import queue
import threading

from twisted.internet import reactor
from twisted.internet.error import ProcessDone, ProcessTerminated
from twisted.python.failure import Failure

from farm.state.db import make_engine
from farm.state.engine import deadlines
from farm.state.store import KeywordStore
from farm.writer.frames import READY
from farm.writer.process import StateWriter
from farm.writer.serve import serve


class _Input:
    """The child's stdin: what the protocol writes, read in the sizes the serve loop asks for."""

    def __init__(self):
        self._chunks: queue.SimpleQueue[bytes | None] = queue.SimpleQueue()
        self._buffer = b""
        self._ended = False

    def feed(self, data: bytes | None) -> None:
        self._chunks.put(data)  # None: the end of input

    def read(self, size: int) -> bytes:
        while len(self._buffer) < size and not self._ended:
            chunk = self._chunks.get()
            if chunk is None:
                self._ended = True
            else:
                self._buffer += chunk
        data, self._buffer = self._buffer[:size], self._buffer[size:]
        return data


class _Output:
    """The child's stdout: each write handed to the protocol on the reactor thread."""

    def __init__(self, writer: StateWriter):
        self._writer = writer

    def write(self, data: bytes) -> None:
        reactor.callFromThread(self._writer.outReceived, bytes(data))

    def flush(self) -> None:
        pass


class ThreadTransport:
    """What StateWriter asks of its process transport, served by a thread."""

    pid = None  # no process

    def __init__(self, writer: StateWriter, store: KeywordStore):
        self.pipes: dict = {}  # no pipe to enlarge
        self._input = _Input()
        self._thread = threading.Thread(target=self._serve, args=(writer, store), name="farm-state-writer", daemon=True)

    def start(self) -> None:
        self._thread.start()

    def write(self, data: bytes) -> None:
        self._input.feed(bytes(data))

    def closeStdin(self) -> None:
        self._input.feed(None)

    def _serve(self, writer: StateWriter, store: KeywordStore) -> None:
        output = _Output(writer)
        ended = Failure(ProcessDone(0))
        try:
            output.write(READY)
            serve(store, self._input, output)
        except Exception as exc:  # as the child: one error line, then it ends
            output.write(b"error " + f"{type(exc).__name__}: {exc}".replace("\n", " ").encode() + b"\n")
            ended = Failure(ProcessTerminated(1))
        finally:
            store.close()
            reactor.callFromThread(writer.processEnded, ended)


def spawn_on_a_thread(cls, store: KeywordStore) -> StateWriter:
    """StateWriter.spawn, the writer served on a thread: its store built as the child builds its own."""
    writer = cls()
    url = store.engine.url.render_as_string(hide_password=False)
    own = KeywordStore(make_engine(url, **deadlines(store.engine)), **store.options())
    transport = ThreadTransport(writer, own)
    writer.makeConnection(transport)
    transport.start()
    return writer
