"""A TCP relay a test owns, in front of a real server (MariaDB, Redis): stopping it is the server going away."""

import socket
import threading


class Relay:
    """Forwards 127.0.0.1:<port> to the target; stop() drops every connection and refuses new ones."""

    def __init__(self, target: tuple[str, int]):
        self.target = target
        self.port = 0
        self.listener: socket.socket | None = None
        self.sockets: list[socket.socket] = []
        self.lock = threading.Lock()

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

    @staticmethod
    def _pump(source, sink):
        try:
            while data := source.recv(65536):
                sink.sendall(data)
        except OSError:
            pass
        finally:
            for s in (source, sink):
                try:
                    s.shutdown(socket.SHUT_RDWR)
                except OSError:
                    pass

    def stop(self):
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
