"""The JOBDIR checkpoint's file (farm.crawl.backends.checkpoint) when its process is killed inside a save."""

import sqlite3
import subprocess
import sys
import textwrap

from farm.crawl.backends.checkpoint import FILE_NAME, open_checkpoint

TODAY = "2026-12-01"


def opened(jobdir, spider="qcwy", day=TODAY, crawler_id="host:1"):
    return open_checkpoint(jobdir, spider, day, crawler_id)


def test_a_kill_inside_a_save_leaves_the_previous_commit(tmp_path):
    script = textwrap.dedent(f"""
        from farm.crawl.backends.checkpoint import open_checkpoint
        checkpoint = open_checkpoint({str(tmp_path)!r}, "qcwy", {TODAY!r}, "host:1")
        checkpoint.file.crash_at_save = 2
        checkpoint.hold((1, 1))
        checkpoint.queued((1, 1), 1)
        checkpoint.flush()
        checkpoint.hold((2, 2))
        checkpoint.queued((1, 1), 2)
        checkpoint.settled((1, 1), 1)
        checkpoint.flush()  # killed after its writes, before its COMMIT
        raise SystemExit("not killed")
    """)
    child = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=60)
    assert child.returncode == -9, child.stderr
    assert (tmp_path / (FILE_NAME + "-wal")).exists()

    resumed = opened(tmp_path)
    assert resumed.saved.leases == {(1, 1)} and resumed.saved.pages == {(1, 1): {1}}
    with sqlite3.connect(tmp_path / FILE_NAME) as conn:
        assert conn.execute("PRAGMA integrity_check").fetchone() == ("ok",)
