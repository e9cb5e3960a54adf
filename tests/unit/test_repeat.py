"""farm.cli.repeat.every: Ctrl+C ends the loop wherever it lands, and a second one at once."""

import os
import signal
import threading
import time

from farm.cli import repeat


def ctrl_c():
    os.kill(os.getpid(), signal.SIGINT)
    for _ in range(10_000):  # bytecodes, at one of which Python runs the handler
        pass


def test_a_ctrl_c_that_a_library_catches_still_ends_the_loop_after_its_turn():
    turns = []

    def turn():
        turns.append(1)
        if len(turns) > 3:
            raise AssertionError("still repeating after Ctrl+C")
        if len(turns) == 1:
            try:  # as a finaliser or a library's `except BaseException` would
                ctrl_c()
            except KeyboardInterrupt:
                pass

    repeat.every(0.01, turn)
    assert len(turns) == 1


def test_a_ctrl_c_during_the_wait_ends_it_at_once():
    started = time.monotonic()
    timer = threading.Timer(0.2, os.kill, (os.getpid(), signal.SIGINT))
    timer.start()
    try:
        repeat.every(60, lambda: None)
    finally:
        timer.cancel()
    assert time.monotonic() - started < 30


def test_a_second_ctrl_c_stops_at_once_inside_a_turn():
    finished = []

    def turn():
        ctrl_c()
        ctrl_c()
        finished.append(1)  # not reached: the second Ctrl+C stopped the turn

    repeat.every(0.01, turn)
    assert finished == []


def test_the_handler_before_is_back_afterwards():
    before = signal.getsignal(signal.SIGINT)
    repeat.every(0.01, ctrl_c)
    assert signal.getsignal(signal.SIGINT) is before
