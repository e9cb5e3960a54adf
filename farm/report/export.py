"""A day's postings, streamed out as CSV, JSON lines or Parquet, with their salary numbers.

The day's postings are those seen on it (farm.report.queries: listed over the
day, which includes the new ones), in id order. Rows come from the database in
chunks (a server-side cursor on MariaDB, SQLite's own stepping) and leave in
chunks (Parquet: one row group a chunk), so memory stays flat however many
there are. ``raw``, the site's whole item, is not exported. ``tags`` is a JSON
list in JSON lines and its JSON text in CSV and Parquet. Times are UTC in JSON lines
(ISO 8601, ``+00:00``) and Parquet (a UTC timestamp type); in CSV, which a spreadsheet shows as
text, they are in FARM_TIMEZONE with their offset (``2026-12-02 09:05:00+08:00``), so that the
cell says which clock it reads.
``opening_id`` is the posting's opening (farm.openings), empty while it is in none yet.

A regular file is replaced whole or not at all, through its symlinks; a device, a pipe or a
descriptor (``/dev/stdout``) is written straight (farm.report.outpath). CSV is for
spreadsheets: it starts with a UTF-8 BOM unless told not to (Excel reads a file
without one in the machine's code page, and Chinese text comes out garbled),
and a text cell that begins with ``=``, ``+``, ``-``, ``@``, a tab or a carriage
return starts with a single quote, so that a spreadsheet shows it instead of
running it as a formula (OWASP's CSV injection rule). JSON lines and Parquet are
data formats: their texts are exported as they are.
"""

import codecs
import csv
import io
import os
from collections.abc import Iterator
from datetime import date
from functools import partial
from typing import Any, BinaryIO
from zoneinfo import ZoneInfo

import orjson
from sqlalchemy import Text, cast, select, type_coerce
from sqlalchemy.engine import Engine

from farm.report.outpath import opened
from farm.report.queries import P
from farm.state.clock import day_span
from farm.state.engine import reader
from farm.state.models import JobPostingRow, OpeningPosting

FORMATS = ("csv", "jsonl", "parquet")
CHUNK = 10_000  # rows a fetch, and a Parquet row group
COLUMNS = (
    "id",
    "source",
    "job_id",
    "title",
    "salary",
    "salary_min",
    "salary_max",
    "salary_months",
    "salary_unit",
    "company",
    "city",
    "area",
    "experience",
    "degree",
    "tags",
    "published_at",
    "url",
    "keyword_id",
    "first_seen_at",
    "last_seen_at",
    "opening_id",  # the posting's opening (docs/openings.md); empty while it is in none yet
)
_TIMES = ("published_at", "first_seen_at", "last_seen_at")


def day_postings(engine: Engine, day: date, tz: ZoneInfo, chunk: int = CHUNK) -> Iterator[list[tuple]]:
    """The postings seen on ``day``, in chunks of rows (COLUMNS' order; times aware UTC, tags JSON text)."""
    span = day_span(day, tz)
    # tags as the JSON text stored: written out as it is, never decoded and encoded again (psycopg
    # decodes a json column whatever the type it is read as: PostgreSQL casts it to text itself)
    as_text = cast if engine.dialect.name == "postgresql" else type_coerce
    columns: dict[str, Any] = {"tags": as_text(P.tags, Text).label("tags"), "opening_id": OpeningPosting.opening_id}
    query = (
        select(*(columns[name] if name in columns else P[name] for name in COLUMNS))
        .select_from(JobPostingRow.__table__.outerjoin(OpeningPosting, OpeningPosting.posting_id == P.id))
        .where(P.first_seen_at < span.end, P.last_seen_at >= span.start)
        .order_by(P.id)
    )
    with reader(engine).connect() as conn:
        result = conn.execution_options(stream_results=True, yield_per=chunk).execute(query)
        for part in result.partitions():
            yield [tuple(row) for row in part]


def write(
    engine: Engine, out: BinaryIO, day: date, tz: ZoneInfo, fmt: str, chunk: int = CHUNK, bom: bool = True
) -> int:
    """Write the day's postings to ``out`` in ``fmt`` (CSV with a BOM unless ``bom`` is false); how many."""
    writer = {"csv": partial(_csv, bom=bom, tz=tz), "jsonl": _jsonl, "parquet": _parquet}[fmt]
    return writer(day_postings(engine, day, tz, chunk), out)


def write_file(
    engine: Engine, path: str | os.PathLike, day: date, tz: ZoneInfo, fmt: str, chunk: int = CHUNK, bom: bool = True
) -> int:
    """Write the day's postings to ``path`` (farm.report.outpath: a regular file replaced only once they are
    all written, through its symlinks; a device, pipe or descriptor written straight); how many."""
    with opened(path) as out:
        return write(engine, out, day, tz, fmt, chunk, bom)


def _iso(value):
    return None if value is None else value.isoformat()


_TIME_AT = tuple(COLUMNS.index(name) for name in _TIMES)
_TAGS_AT = COLUMNS.index("tags")


# what a spreadsheet reads as the start of a formula (OWASP's CSV injection rule)
FORMULA_START = ("=", "+", "-", "@", "\t", "\r")


def csv_cell(value):
    """A value as a CSV cell: None empty, a text a spreadsheet would run behind a single quote."""
    if value is None:
        return ""
    if isinstance(value, str) and value.startswith(FORMULA_START):
        return "'" + value
    return value


def _local(value, tz: ZoneInfo):
    """A time as a CSV cell: in ``tz``, with its offset, to the second."""
    return None if value is None else value.astimezone(tz).isoformat(sep=" ", timespec="seconds")


def _csv(chunks, out: BinaryIO, bom: bool = True, tz: ZoneInfo = ZoneInfo("UTC")) -> int:
    if bom:
        out.write(codecs.BOM_UTF8)
    text = io.TextIOWrapper(out, encoding="utf-8", newline="", write_through=True)
    writer = csv.writer(text)
    writer.writerow(COLUMNS)
    count = 0
    for rows in chunks:
        for row in rows:
            row = list(row)
            for at in _TIME_AT:
                row[at] = _local(row[at], tz)
            writer.writerow([csv_cell(value) for value in row])
        count += len(rows)
        text.flush()
    text.detach()  # leave ``out`` open for its owner
    return count


def _jsonl(chunks, out: BinaryIO) -> int:
    count = 0
    for rows in chunks:
        out.write(b"".join(orjson.dumps(dict(zip(COLUMNS, _fragment(row)))) + b"\n" for row in rows))
        count += len(rows)
    return count


def _fragment(row: tuple) -> list:
    row = list(row)
    tags = row[_TAGS_AT]
    if tags is not None:
        row[_TAGS_AT] = orjson.Fragment(tags)  # JSON text, included as it is
    return row


def parquet_schema():
    import pyarrow as pa

    time = pa.timestamp("us", tz="UTC")
    types = {
        "id": pa.int64(),
        "salary_min": pa.int32(),
        "salary_max": pa.int32(),
        "salary_months": pa.int16(),
        "keyword_id": pa.int64(),
        "opening_id": pa.int64(),
        **{name: time for name in _TIMES},
    }
    return pa.schema([(name, types.get(name, pa.string())) for name in COLUMNS])


def _parquet(chunks, out: BinaryIO) -> int:
    import pyarrow as pa
    import pyarrow.parquet as pq

    schema = parquet_schema()
    count = 0
    with pq.ParquetWriter(out, schema, compression="zstd") as writer:
        for rows in chunks:
            columns = list(zip(*rows))
            writer.write_batch(
                pa.record_batch(
                    [pa.array(column, type=field.type) for column, field in zip(columns, schema)], schema=schema
                )
            )
            count += len(rows)
        if not count:
            writer.write_table(schema.empty_table())
    return count
