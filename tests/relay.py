"""A TCP relay a test owns, in front of a real server (MariaDB, Redis): stopping it is the server going away."""

import socket
import threading


class Relay:
    """Forwards 127.0.0.1:<port> to the target; stop() drops every connection and refuses new ones.

    stall() makes the server silent: connections stay open and new ones are accepted, but no byte
    (nor a close) passes either way until resume(), which then delivers what was held.
    """

    def __init__(self, target: tuple[str, int]):
        self.target = target
        self.port = 0
        self.listener: socket.socket | None = None
        self.sockets: list[socket.socket] = []
        self.lock = threading.Lock()
        self.flowing = threading.Event()
        self.flowing.set()

    def start(self) -> "Relay":
        listener = socket.socket()
        listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        listener.bind(("127.0.0.1", self.port))
        listener.listen(64)
        self.port = listener.getsockname()[1]
        self.listener = listener
        threading.Thread(target=self._accept, args=(listener,), daemon=True).start()
        return self

    def _accept(self, listener):
        while True:
            try:
                client, _ = listener.accept()
            except OSError:  # stopped
                return
            try:
                server = socket.create_connection(self.target)
            except OSError:
                client.close()
                continue
            with self.lock:
                self.sockets += [client, server]
            for a, b in ((client, server), (server, client)):
                threading.Thread(target=self._pump, args=(a, b), daemon=True).start()

    def _pump(self, source, sink):
        try:
            while data := source.recv(65536):
                self.flowing.wait()
                sink.sendall(data)
        except OSError:
            pass
        finally:
            self.flowing.wait()  # a close passes no sooner than the bytes would
            for s in (source, sink):
                try:
                    s.shutdown(socket.SHUT_RDWR)
                except OSError:
                    pass

    def stall(self):
        """The server goes silent: nothing passes, nothing is closed."""
        self.flowing.clear()

    def resume(self):
        """The server answers again; what it was sent meanwhile reaches it (a client that gave up on a
        connection has closed it: that close follows)."""
        self.flowing.set()

    def stop(self):
        self.flowing.set()  # stopped, not stalled: the held bytes go to sockets about to close
        if self.listener is not None:
            try:
                self.listener.shutdown(socket.SHUT_RDWR)  # wakes the accept() blocked on it (Linux)
            except OSError:
                pass
            self.listener.close()
            self.listener = None
        with self.lock:
            sockets, self.sockets = self.sockets, []
        for s in sockets:
            try:
                s.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
            s.close()

    def restart(self) -> "Relay":
        """The server is back, on the same port."""
        return self.start()


def relay_to_database(url: str) -> tuple[Relay, str]:
    """A started relay in front of the server of the database URL ``url``, and the URL through it."""
    credentials, rest = url.rsplit("@", 1)
    host, database = rest.split("/", 1)
    address, port = host.split(":")
    relay = Relay((address, int(port))).start()
    return relay, f"{credentials}@127.0.0.1:{relay.port}/{database}"


class ReplyDropper(Relay):
    """A relay that loses the reply to one command: the server runs it, and the connection drops as
    its reply comes back, as when Redis stalls past the client's socket timeout or a reset cuts it."""

    def __init__(self, target: tuple[str, int]):
        super().__init__(target)
        self.trigger: bytes | None = None
        self.dropped = threading.Event()
        self._doomed: set[socket.socket] = set()  # servers whose next reply is lost

    def drop_reply_to(self, trigger: bytes) -> None:
        """Lose the reply to the next command whose bytes contain ``trigger`` (a script's sha, a key)."""
        self.dropped.clear()
        self.trigger = trigger

    def _pump(self, source, sink):
        try:
            while data := source.recv(65536):
                if source in self._doomed:  # the reply to the command: lost, with the connection
                    self._doomed.discard(source)
                    self.dropped.set()
                    break
                if self.trigger is not None and self.trigger in data:
                    self.trigger = None
                    self._doomed.add(sink)  # before the command reaches the server: its reply comes after
                sink.sendall(data)
        except OSError:
            pass
        finally:
            for s in (source, sink):
                try:
                    s.shutdown(socket.SHUT_RDWR)
                except OSError:
                    pass
