"""The SQLite file itself: its schema version and journal mode."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from graphrecall.store import open_store
from graphrecall.store.sqlite.migrations import MIGRATIONS


def test_schema_version_is_recorded(tmp_path: Path) -> None:
    open_store(tmp_path / "v.db").close()
    conn = sqlite3.connect(tmp_path / "v.db")
    assert conn.execute("PRAGMA user_version").fetchone()[0] == len(MIGRATIONS)
    assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"


def test_a_sqlite_url_opens_the_same_file_as_its_path(tmp_path: Path) -> None:
    store = open_store(f"sqlite:///{tmp_path}/u.db")
    store.close()
    assert (tmp_path / "u.db").exists()
