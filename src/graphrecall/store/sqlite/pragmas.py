"""The settings every SQLite connection shares, the store's and the pattern workers'.

Its own module so that ``connection.py`` (which hands pattern reads to the workers) and
``pattern_workers.py`` (whose processes open their own read-only connections) both read
it without importing each other.
"""

from __future__ import annotations

import sqlite3

# Every connection reads the database through a memory map of up to this many bytes
# (SQLite caps it at its build's limit, 2 GiB by default): a page is read in place instead
# of copied in by a system call.
MMAP_BYTES = 1 << 31


def tune(conn: sqlite3.Connection, *, read_only: bool = False) -> None:
    """The settings every connection shares: wait for a writer, read through the memory
    map; a read-only one refuses writes."""
    conn.execute("PRAGMA busy_timeout=10000")
    conn.execute(f"PRAGMA mmap_size={MMAP_BYTES}")
    if read_only:
        conn.execute("PRAGMA query_only=1")
