"""A store file with a hot rollback journal, made deterministically in-process: what a bulk load
killed inside its commit leaves (``tests/test_crash_safety.py`` makes the same by SIGKILL).

A write transaction in rollback-journal mode with a tiny page cache spills its new pages into the
file (the originals saved in ``-journal`` first); the file and its journal are copied while that
transaction is open, so the copy holds uncommitted pages and a journal no process holds a lock
for -- hot. The original is rolled back and left as it was."""

from __future__ import annotations

import os
import shutil
import sqlite3

from conceptwalk.kb.store import KnowledgeBase


def hot_journal_copy(path: str | os.PathLike[str], copy: str | os.PathLike[str], rows: int = 3000) -> int:
    """Make ``copy``: the store at ``path`` (created with one node when absent) with ``rows``
    uncommitted nodes spilled into the file and a hot ``-journal`` beside it. Returns the number
    of nodes committed (what every correct open must see)."""
    path, copy = os.fspath(path), os.fspath(copy)
    if not os.path.exists(path):
        with KnowledgeBase.create(path) as kb:
            kb.add_nodes([{"id": "committed", "title": "the one committed node"}])
    with KnowledgeBase.open(path) as kb:
        committed = kb.stats()["nodes"]
    conn = sqlite3.connect(path, isolation_level=None)
    try:
        assert conn.execute("PRAGMA journal_mode = DELETE").fetchone()[0] == "delete"
        conn.execute("PRAGMA cache_size = 2")  # spill: uncommitted pages reach the file
        conn.execute("BEGIN IMMEDIATE")
        conn.executemany(
            "INSERT INTO nodes(id, title) VALUES (?, ?)", [(f"uncommitted{i}", "x" * 100) for i in range(rows)]
        )
        assert os.path.getsize(path + "-journal") > 0
        shutil.copyfile(path, copy)
        shutil.copyfile(path + "-journal", copy + "-journal")
        conn.execute("ROLLBACK")
        conn.execute("PRAGMA journal_mode = WAL")
    finally:
        conn.close()
    return committed
