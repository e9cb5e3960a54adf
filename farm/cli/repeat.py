"""Do something every few seconds until Ctrl+C (``farm stats --watch``).

Ctrl+C does not raise KeyboardInterrupt wherever it lands: one that lands in a
library's code can be caught there (a finaliser or a weakref callback, where
CPython only prints "Exception ignored", or an ``except BaseException`` around
a database call), and the loop would go on for good. It sets a flag instead,
which the loop reads after each turn; only the wait between turns is cut short
at once. A second Ctrl+C stops at once, wherever it lands.
"""

import signal
import time
from collections.abc import Callable


class _Stop(Exception):
    """Ctrl+C during the wait between turns."""


class _CtrlC:
    def __init__(self):
        self.pressed = False
        self.waiting = False  # in the wait between turns: ours to cut short

    def __call__(self, signum, frame):
        if self.pressed:
            raise KeyboardInterrupt  # the second: at once
        self.pressed = True
        if self.waiting:
            raise _Stop

    def wait(self, seconds: float) -> None:
        self.waiting = True
        try:
            if self.pressed:
                raise _Stop
            time.sleep(seconds)
        finally:
            self.waiting = False


def every(seconds: float, turn: Callable[[], None]) -> None:
    """Call ``turn`` every ``seconds`` until Ctrl+C, which returns (after the turn under way)."""
    ctrl_c = _CtrlC()
    previous = signal.signal(signal.SIGINT, ctrl_c)
    try:
        while not ctrl_c.pressed:
            turn()
            ctrl_c.wait(seconds)
    except (_Stop, KeyboardInterrupt):
        pass
    finally:
        # None: the handler before was not set from Python; the default stands in for it
        signal.signal(signal.SIGINT, signal.default_int_handler if previous is None else previous)
