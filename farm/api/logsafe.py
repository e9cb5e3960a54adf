"""Log lines a client cannot forge: what a request puts in a line is written escaped.

A request path is decoded before it is logged (``%0A`` is a new line, ``%1B`` starts a
terminal escape), by uvicorn's access log and by farm's own lines alike. This filter,
on the handlers of ``farm api``, escapes the control characters of every argument of
a log line, so one request is one line, and never paints the operator's terminal.
"""

import logging
import re

CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f\u2028\u2029]")


def escape(text: str) -> str:
    """``text`` with its control characters as Python escapes (\\n, \\x1b, \\u2028)."""
    return CONTROL.sub(lambda m: repr(m.group())[1:-1], text)


class EscapeArguments(logging.Filter):
    """Escapes the control characters of a record's string arguments (the message itself is farm's)."""

    def filter(self, record: logging.LogRecord) -> bool:
        if isinstance(record.args, tuple):
            record.args = tuple(escape(arg) if isinstance(arg, str) else arg for arg in record.args)
        elif isinstance(record.args, dict):
            record.args = {key: escape(arg) if isinstance(arg, str) else arg for key, arg in record.args.items()}
        return True


def escape_on(logger: logging.Logger) -> None:
    """Every handler of ``logger`` escapes what the records it writes were given."""
    for handler in logger.handlers:
        if not any(isinstance(f, EscapeArguments) for f in handler.filters):
            handler.addFilter(EscapeArguments())
