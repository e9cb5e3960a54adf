"""The salary numbers of every stored posting read again from its salary text (migrations 0006, 0008).

Read by id in batches, written back by id with one executemany a batch, in the
migration's transaction: a table of millions of postings is never held in memory.
"""

from sqlalchemy import bindparam, column, select, table, update
from sqlalchemy.engine import Connection

from farm.salary import COLUMNS, columns

BATCH = 5000
_POSTING = table("job_posting", column("id"), column("source"), column("salary"), *map(column, COLUMNS))


def backfill(conn: Connection, batch: int = BATCH) -> int:
    """Fill the salary columns of every posting from its salary text; the postings read."""
    write = (
        update(_POSTING)
        .where(_POSTING.c.id == bindparam("row_id"))
        .values({name: bindparam(f"new_{name}") for name in COLUMNS})
    )
    read = select(_POSTING.c.id, _POSTING.c.source, _POSTING.c.salary).order_by(_POSTING.c.id).limit(batch)
    after, done = None, 0
    while True:
        rows = conn.execute(read if after is None else read.where(_POSTING.c.id > after)).all()
        if not rows:
            return done
        params = []
        for row_id, source, salary in rows:
            values = columns(source, salary)
            params.append({"row_id": row_id, **{f"new_{name}": value for name, value in zip(COLUMNS, values)}})
        conn.execute(write, params)
        after, done = rows[-1][0], done + len(rows)
