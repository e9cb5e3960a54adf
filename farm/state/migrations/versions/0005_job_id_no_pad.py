"""Text that identifies a row compares as written, trailing spaces included, on every database.

MySQL/MariaDB's ``utf8mb4_bin`` pads: ``'a'`` and ``'a '`` compare equal, so two postings
whose site ids differ by a trailing space merged into one row (SQLite kept two), and a
crawler id with a trailing space matched another's leases. The key columns move to the
server's binary collation without padding: ``utf8mb4_nopad_bin`` on MariaDB,
``utf8mb4_0900_bin`` on MySQL 8. Rows are kept as they are; a table whose rows would
collide cannot hold them today (the padded unique key refused them). SQLite already
compares as written: nothing to do there.

Revision ID: 0005
Revises: 0004
Create Date: 2026-12-03
"""

from alembic import op
from sqlalchemy.engine import Connection

revision = "0005"
down_revision = "0004"
branch_labels = None
depends_on = None

# (table, column, type, null): the unique keys' columns, and the holder a crawler's leases are found by
KEY_COLUMNS = (
    ("keyword", "source", "VARCHAR(16)", "NOT NULL"),
    ("keyword", "city", "VARCHAR(64)", "NOT NULL"),
    ("keyword", "job", "VARCHAR(128)", "NOT NULL"),
    ("keyword", "crawler_id", "VARCHAR(128)", "NULL"),
    ("job_posting", "source", "VARCHAR(16)", "NOT NULL"),
    ("job_posting", "job_id", "VARCHAR(64)", "NOT NULL"),
)
# the first the server has, in this order
NO_PAD = ("utf8mb4_nopad_bin", "utf8mb4_0900_bin")
PAD = "utf8mb4_bin"


def _alter(collation: str) -> None:
    for table in dict.fromkeys(table for table, *_ in KEY_COLUMNS):
        changes = ", ".join(
            f"MODIFY `{column}` {kind} CHARACTER SET utf8mb4 COLLATE {collation} {null}"
            for name, column, kind, null in KEY_COLUMNS
            if name == table
        )
        op.execute(f"ALTER TABLE `{table}` {changes}")


def no_pad_collation(bind: Connection) -> str:
    """The server's binary utf8mb4 collation without padding; one clear error when it has none."""
    have = {row[0] for row in bind.exec_driver_sql("SHOW COLLATION LIKE 'utf8mb4%%bin'")}
    for name in NO_PAD:
        if name in have:
            return name
    raise RuntimeError(
        "this MySQL/MariaDB server has no binary utf8mb4 collation without padding "
        f"({' or '.join(NO_PAD)}): farm needs MariaDB 10.6 or later, or MySQL 8.0.17 or later"
    )


def upgrade() -> None:
    bind = op.get_bind()
    if bind.dialect.name not in ("mysql", "mariadb"):
        return
    _alter(no_pad_collation(bind))


def downgrade() -> None:
    if op.get_bind().dialect.name not in ("mysql", "mariadb"):
        return
    _alter(PAD)
