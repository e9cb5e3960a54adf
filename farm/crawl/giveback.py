"""The give-back at close, as the keyword registry waits for it (KeywordRegistry.release): one
deadline over the whole write, what the database said when it failed, in one line, and the moment
it is over (``Once``), which the run table waits for."""

from typing import TypeVar

from twisted.internet import reactor
from twisted.internet.defer import Deferred
from twisted.python.failure import Failure

T = TypeVar("T")


def within(d: Deferred[T], seconds: float) -> Deferred[T | None]:
    """A Deferred of ``d``'s result, or of None once ``seconds`` pass first (``d`` is not cancelled:
    a write whose answer comes late is not answered twice)."""
    out: Deferred[T | None] = Deferred()

    def timed_out() -> None:
        if not out.called:
            out.callback(None)

    timer = reactor.callLater(seconds, timed_out)

    def fired(result: T | Failure) -> None:
        if timer.active():
            timer.cancel()
        if not out.called:
            out.callback(result)

    d.addBoth(fired)
    return out


def first_line(failure: object) -> str:
    """What a failed database call said, in one line."""
    error = getattr(failure, "value", failure)
    error = getattr(error, "orig", None) or error
    return (str(error).strip().splitlines() or [type(error).__name__])[0]


class Once:
    """Something that happens once: ``wait()`` is a Deferred fired when ``happened()`` is called, at once
    if it was."""

    def __init__(self) -> None:
        self.done = False
        self._waiting: list[Deferred[None]] = []

    def happened(self) -> None:
        self.done = True
        waiting, self._waiting = self._waiting, []
        for d in waiting:
            d.callback(None)

    def wait(self) -> Deferred[None]:
        d: Deferred[None] = Deferred()
        if self.done:
            d.callback(None)
        else:
            self._waiting.append(d)
        return d
