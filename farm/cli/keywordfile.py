"""Reading a keyword CSV file (``source,city,job``) for ``farm keywords import``.

The file is streamed: ``read_keywords`` holds one line at a time, so a file of
millions of keywords can be checked and then imported without loading it. Its
problems are one ``KeywordFileError`` that names the file and every bad line (up
to MOST_PROBLEMS), raised once the file is read, so the caller can refuse the
whole file before writing anything and the user fix every line at once. A file
that is not a keyword file (no header, another header, binary before the header)
is refused at its first line.
"""

import csv
import sys
from collections.abc import Iterator
from contextlib import nullcontext

from farm.errors import KeywordError, KeywordFileError
from farm.state.validation import cleaned, validate_keyword

HEADER = ("source", "city", "job")
# No valid keyword line comes near this; it bounds what one line may cost.
MAX_LINE_BYTES = 64 * 1024
# bad lines told at most: past them, the file is refused without reading on
MOST_PROBLEMS = 20
_BOM = "\ufeff"


def read_keywords(path) -> Iterator[tuple[int, str, str, str]]:
    """Yield ``(line_no, source, city, job)``, validated and stripped, for each keyword line.

    The first line must be the header ``source,city,job`` (a UTF-8 BOM and blanks
    around names are fine). Blank lines are skipped. Raises ``KeywordFileError``
    once the file is read when a line was bad, naming every bad line; at once for a
    bad header, and past MOST_PROBLEMS bad lines. The file is read once, from start
    to end: ``path`` may be a pipe, and ``-`` is standard input.
    """
    stdin = str(path) == "-"
    if stdin:
        path = "standard input"
    problems: list[tuple[int, str]] = []

    def refused() -> KeywordFileError:
        (line, message), *more = problems
        return KeywordFileError(path, line, message, tuple(more))

    with nullcontext(sys.stdin.buffer) if stdin else open(path, "rb") as raw:
        lines = _TextLines(path, raw)
        reader = csv.reader(lines, strict=True)
        header_seen = False
        while True:
            start = lines.line_no + 1
            try:
                row, problem = _next_row(reader, start)
            except _NotText as exc:  # a line too long, binary data: no line below it reads as text
                problems.append((exc.line, exc.message))
                raise refused() from None
            if row is None and problem is None:
                break
            if row is not None:
                if not row or (len(row) == 1 and not row[0].strip()):
                    continue  # a blank line
                if any("\n" in field or "\r" in field for field in row):
                    problem = (start, "a field spans several lines (is a quote left open?)")
                elif not header_seen:
                    _check_header(path, start, row)
                    header_seen = True
                    continue
                else:
                    try:
                        keyword = _keyword(row)
                    except KeywordError as exc:
                        problem = (start, str(exc))
                    else:
                        yield (start, *keyword)
                        continue
            assert problem is not None
            if not header_seen:  # not a keyword file: nothing below it means anything
                raise KeywordFileError(path, *problem)
            problems.append(problem)
            if len(problems) >= MOST_PROBLEMS:
                problems[-1] = (problem[0], f"{problem[1]} (the first {MOST_PROBLEMS} bad lines: read no further)")
                raise refused()
        if not header_seen:
            raise KeywordFileError(path, 1, f"the file is empty (expected the header {','.join(HEADER)})")
        if problems:
            raise refused()


def _next_row(reader, start: int) -> tuple[list[str] | None, tuple[int, str] | None]:
    """The next CSV row, or the problem of its line (``start``, where it begins); (None, None) at the end."""
    try:
        return next(reader), None
    except StopIteration:
        return None, None
    except _NotText:
        raise
    except KeywordFileError as exc:  # a line that is not UTF-8 text (farm's own check, in _TextLines)
        return None, (exc.line, exc.message)
    except csv.Error as exc:
        if "unexpected end of data" in str(exc):
            return None, (start, "a quote is left open (the file ends inside a quoted field)")
        return None, (start, f"not valid CSV ({exc})")


def _keyword(row: list[str]) -> tuple[str, str, str]:
    """A row as a keyword checked by farm.state.validation (its city as written: the store keeps it in
    one spelling, and names the rows it merged), or KeywordError."""
    if len(row) != len(HEADER):
        raise KeywordError(f"expected {len(HEADER)} fields ({','.join(HEADER)}), found {len(row)}")
    source, _, job = validate_keyword(*row)
    return source, cleaned(row[1]), job


def _check_header(path, line_no: int, row: list[str]) -> None:
    names = tuple(field.strip() for field in row)
    if names != HEADER:
        found = ",".join(names)
        if len(found) > 60:
            found = found[:57] + "..."
        raise KeywordFileError(path, line_no, f"expected the header {','.join(HEADER)!r}, found {found!r}")


class _NotText(KeywordFileError):
    """A line after which the file cannot be read as lines of text."""


class _TextLines:
    """The file's lines decoded as UTF-8, one at a time, counting physical lines.

    Decoding line by line (not in large chunks) lets a bad byte be reported at
    its own line number.
    """

    def __init__(self, path, raw):
        self.path = path
        self.raw = raw
        self.line_no = 0

    def __iter__(self):
        return self

    def __next__(self) -> str:
        data = self.raw.readline(MAX_LINE_BYTES + 1)
        if not data:
            raise StopIteration
        self.line_no += 1
        if len(data) > MAX_LINE_BYTES:
            raise _NotText(
                self.path,
                self.line_no,
                f"line is longer than {MAX_LINE_BYTES} bytes (is this a keyword CSV file?)",
            )
        if b"\x00" in data:
            raise _NotText(self.path, self.line_no, "binary data (a NUL byte): not a CSV text file")
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError as exc:
            bad = data[exc.start : exc.start + 1].hex()
            raise KeywordFileError(
                self.path,
                self.line_no,
                f"not UTF-8 text (byte 0x{bad} at byte {exc.start + 1}); save the file as UTF-8",
            ) from None
        if "\r" in text.rstrip("\n").removesuffix("\r"):
            raise KeywordFileError(
                self.path,
                self.line_no,
                "a carriage return inside the line (save the file with \\n or \\r\\n line endings)",
            )
        if self.line_no == 1 and text.startswith(_BOM):
            text = text[1:]
        return text
