"""The JOBDIR checkpoint's file: what a paused or killed crawl needs to resume at once.

``JOBDIR/farm-checkpoint.sqlite`` holds

    meta   format version, spider, day (in FARM_TIMEZONE), crawler id
    lease  (keyword id, lease token) of every keyword this process holds
    page   (keyword id, lease token, page) of every page asked for and not yet
           recorded or given up: queued, downloading or on its way to the state
           writer (in flight pages are put back as pending on resume)

Why SQLite in WAL mode, one transaction per tick:

- **Atomic.** A commit is all or nothing; a ``kill -9`` at any moment, in the
  middle of a save included, leaves the previous commit, which SQLite's recovery
  finds on the next open. ``synchronous=NORMAL``: a killed process loses nothing
  the OS has (only a power loss may undo the last commits, never half of one).
- **Cheap.** Changes are buffered in memory between ticks (``Checkpoint``) and a
  tick writes only those, keyed rows inserted or deleted: its cost grows with what
  changed, not with the queue. WAL appends them; SQLite folds the log back into
  the file by itself, so there is no compaction code to write or get wrong (a
  journal of our own would need CRC framing, snapshots, fsync and rename).

What it does not keep, and why that is sound: the keyword table already says
which pages are done (the page watermark and the pages done ahead of it), so on
resume a page recorded there is not fetched again whatever the checkpoint says;
farm's page requests are not deduplicated by fingerprint (``dont_filter``: the
keyword table decides), so there are no local fingerprints to keep; with
FARM_REDIS_URL the queue and the day's fingerprints live in Redis, and the
checkpoint keeps only the leases and the crawler id.
"""

import logging
import os
import signal
import sqlite3
from dataclasses import dataclass, field
from pathlib import Path

from farm.errors import CheckpointError, OtherSpider

logger = logging.getLogger(__name__)

FILE_NAME = "farm-checkpoint.sqlite"
FORMAT_VERSION = 1
# Tests only, not a setting: a crawl started with this variable set to n is killed (SIGKILL)
# inside its n-th checkpoint save, between the rows written and their COMMIT.
CRASH_AT_SAVE_ENV = "FARM_TEST_CRASH_AT_SAVE"

_SCHEMA = (
    "CREATE TABLE IF NOT EXISTS meta (name TEXT PRIMARY KEY, value TEXT NOT NULL) WITHOUT ROWID",
    "CREATE TABLE IF NOT EXISTS lease (keyword_id INTEGER, token INTEGER, PRIMARY KEY (keyword_id, token))"
    " WITHOUT ROWID",
    "CREATE TABLE IF NOT EXISTS page (keyword_id INTEGER, token INTEGER, page INTEGER,"
    " PRIMARY KEY (keyword_id, token, page)) WITHOUT ROWID",
)


@dataclass
class Saved:
    """What a checkpoint file held when it was opened."""

    spider: str
    day: str
    crawler_id: str
    leases: set[tuple[int, int]] = field(default_factory=set)
    pages: dict[tuple[int, int], set[int]] = field(default_factory=dict)

    @property
    def page_count(self) -> int:
        return sum(len(pages) for pages in self.pages.values())


class CheckpointFile:
    """The SQLite file itself: open, read, save one batch of changes, remove."""

    def __init__(self, path: Path, crash_at_save: int = 0):
        self.path = Path(path)
        self.saves = 0
        # fault injection (tests): the n-th save kills the process inside its transaction
        self.crash_at_save = crash_at_save
        self.conn: sqlite3.Connection | None = None

    def _connect(self) -> sqlite3.Connection:
        conn = sqlite3.connect(self.path, isolation_level=None, check_same_thread=False)
        conn.execute("PRAGMA journal_mode=WAL")
        conn.execute("PRAGMA synchronous=NORMAL")
        return conn

    def read(self) -> Saved | None:
        """What the file holds (None when there is none); CheckpointError when it is not a sound
        checkpoint of this format. Opens it for saving."""
        if not self.path.exists():
            return None
        try:
            conn = self._connect()
            try:
                check = conn.execute("PRAGMA quick_check").fetchone()
                if check is None or check[0] != "ok":
                    raise CheckpointError(f"it is damaged ({check[0] if check else 'no answer'})")
                names = {row[0] for row in conn.execute("SELECT name FROM sqlite_master WHERE type='table'")}
                if not {"meta", "lease", "page"} <= names:
                    raise CheckpointError("it is not a farm checkpoint (tables missing)")
                meta = dict(conn.execute("SELECT name, value FROM meta"))
                if meta.get("version") != str(FORMAT_VERSION):
                    raise CheckpointError(
                        f"it is in format {meta.get('version')!r}, this farm reads format {FORMAT_VERSION}"
                    )
                saved = Saved(meta["spider"], meta["day"], meta["crawler_id"])
                saved.leases = {(kid, token) for kid, token in conn.execute("SELECT keyword_id, token FROM lease")}
                for kid, token, page in conn.execute("SELECT keyword_id, token, page FROM page"):
                    saved.pages.setdefault((kid, token), set()).add(page)
            except BaseException:
                conn.close()
                raise
        except sqlite3.DatabaseError as exc:  # truncated, overwritten, not SQLite at all
            raise CheckpointError(f"it cannot be read ({exc})") from None
        except KeyError as exc:
            raise CheckpointError(f"its meta row {exc} is missing") from None
        self.conn = conn
        return saved

    def start(self, spider: str, day: str, crawler_id: str) -> None:
        """A new, empty checkpoint (any old one is replaced in the same transaction)."""
        if self.conn is None:
            self.conn = self._connect()
        conn = self.conn
        conn.execute("BEGIN IMMEDIATE")  # the tables and the meta row in one commit: no half-made file
        for statement in _SCHEMA:
            conn.execute(statement)
        conn.execute("DELETE FROM meta")
        conn.execute("DELETE FROM lease")
        conn.execute("DELETE FROM page")
        conn.executemany(
            "INSERT INTO meta (name, value) VALUES (?, ?)",
            [("version", str(FORMAT_VERSION)), ("spider", spider), ("day", day), ("crawler_id", crawler_id)],
        )
        conn.execute("COMMIT")

    def save(self, leases: dict[tuple[int, int], bool], pages: dict[tuple[int, int, int], bool]) -> None:
        """One transaction: ``leases`` {(id, token): held?}, ``pages`` {(id, token, page): pending?};
        a lease no longer held takes its pages with it."""
        conn = self.conn
        assert conn is not None, "saved once read() or start() opened it"
        self.saves += 1
        conn.execute("BEGIN IMMEDIATE")
        try:
            gone = [key for key, held in leases.items() if not held]
            conn.executemany("DELETE FROM lease WHERE keyword_id = ? AND token = ?", gone)
            conn.executemany("DELETE FROM page WHERE keyword_id = ? AND token = ?", gone)
            conn.executemany("INSERT OR IGNORE INTO lease VALUES (?, ?)", [k for k, held in leases.items() if held])
            conn.executemany("INSERT OR IGNORE INTO page VALUES (?, ?, ?)", [k for k, on in pages.items() if on])
            conn.executemany(
                "DELETE FROM page WHERE keyword_id = ? AND token = ? AND page = ?",
                [k for k, on in pages.items() if not on],
            )
            if self.crash_at_save and self.saves == self.crash_at_save:
                logger.warning("farm: %s=%d: killing the crawl inside a save", CRASH_AT_SAVE_ENV, self.crash_at_save)
                os.kill(os.getpid(), signal.SIGKILL)
            conn.execute("COMMIT")
        except BaseException:
            if conn.in_transaction:
                conn.execute("ROLLBACK")
            raise

    def close(self) -> None:
        if self.conn is not None:
            self.conn.close()
            self.conn = None

    def remove(self) -> None:
        self.close()
        for path in self._files():
            path.unlink(missing_ok=True)

    def move_aside(self) -> Path:
        """The file (and its WAL) renamed to ``*.bad``, for a look; where it went."""
        self.close()
        for path in self._files():
            if path.exists():
                os.replace(path, path.with_name(path.name + ".bad"))
        return self.path.with_name(self.path.name + ".bad")

    def _files(self) -> list[Path]:
        return [self.path, self.path.with_name(self.path.name + "-wal"), self.path.with_name(self.path.name + "-shm")]


class Checkpoint:
    """The crawl's side: changes buffered in memory, written by ``flush`` in one transaction.

    Keys are plain tuples (keyword id, lease token[, page]): the last change of a key wins,
    so a page queued and settled between two ticks costs nothing.
    """

    def __init__(self, file: CheckpointFile, spider: str, crawler_id: str, saved: Saved | None = None):
        self.file = file
        self.spider = spider
        self.crawler_id = crawler_id
        self.saved = saved  # what to resume, or None
        self._leases: dict[tuple[int, int], bool] = {}
        self._pages: dict[tuple[int, int, int], bool] = {}

    def hold(self, lease_key: tuple[int, int]) -> None:
        self._leases[lease_key] = True

    def release(self, lease_key: tuple[int, int]) -> None:
        """The lease ended: it and its pages go."""
        self._leases[lease_key] = False
        for key in [key for key in self._pages if key[:2] == lease_key]:
            del self._pages[key]

    def queued(self, lease_key: tuple[int, int], page: int) -> None:
        self._pages[(*lease_key, page)] = True

    def settled(self, lease_key: tuple[int, int], page: int) -> None:
        self._pages[(*lease_key, page)] = False

    @property
    def changes(self) -> int:
        return len(self._leases) + len(self._pages)

    def flush(self) -> int:
        """Write what changed since the last flush; how many changes."""
        if not (self._leases or self._pages):
            return 0
        leases, pages = self._leases, self._pages
        self._leases, self._pages = {}, {}
        try:
            self.file.save(leases, pages)
        except BaseException:
            # not written: kept for the next tick, under the changes made since
            self._leases, self._pages = {**leases, **self._leases}, {**pages, **self._pages}
            raise
        return len(leases) + len(pages)


def open_checkpoint(jobdir: str | os.PathLike[str], spider: str, day: str, crawler_id: str) -> Checkpoint:
    """The crawl's checkpoint in ``jobdir``: the one saved there to resume (same spider, same day),
    or a new one.

    A checkpoint that cannot be used is moved aside as ``*.bad`` with one error line, and the
    crawl starts from the keyword table, which loses nothing; one of an earlier day resumes
    nothing (today's claim rules decide). Another spider's is left alone: OtherSpider.
    """
    Path(jobdir).mkdir(parents=True, exist_ok=True)
    file = CheckpointFile(Path(jobdir) / FILE_NAME, int(os.environ.get(CRASH_AT_SAVE_ENV) or 0))
    try:
        saved = file.read()
    except CheckpointError as exc:
        aside = file.move_aside()
        logger.error(
            "farm: JOBDIR=%s: the checkpoint %s cannot be used: %s. It was moved aside to %s and this crawl "
            "starts from the keyword table, which loses nothing (keywords a killed crawl held wait for "
            "FARM_LEASE_TIMEOUT); delete the .bad file once looked at",
            jobdir,
            FILE_NAME,
            exc,
            aside.name,
        )
        saved = None
    if saved is not None and saved.spider != spider:
        file.close()
        raise OtherSpider(
            f"JOBDIR={jobdir} holds the checkpoint of spider {saved.spider!r}, not {spider!r}: give each crawl "
            f"its own JOBDIR (or run {saved.spider!r} with this one to resume it)"
        )
    if saved is not None and saved.day != day:
        logger.warning(
            "farm: JOBDIR=%s: the checkpoint is of %s, not today (%s): nothing of it is resumed; today's claims decide",
            jobdir,
            saved.day,
            day,
        )
        saved = None
    if saved is None:
        file.start(spider, day, crawler_id)
        return Checkpoint(file, spider, crawler_id)
    return Checkpoint(file, spider, saved.crawler_id, saved)
