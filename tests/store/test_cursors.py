"""Search cursors (store/cursors.py): expired ones are swept by a later save, at most once
per SWEEP_EVERY, on a real SQLite store (the conformance suite checks loading on both
backends)."""

from __future__ import annotations

import sqlite3
from datetime import timedelta
from pathlib import Path

import pytest

from graphrecall.domain import clock
from graphrecall.store import cursors, open_store


def tokens(path: Path) -> list[str]:
    with sqlite3.connect(path) as conn:
        return sorted(r[0] for r in conn.execute("SELECT token FROM search_cursors"))


def test_expired_cursors_are_swept_once_a_sweep_is_due(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "c.db"
    store = open_store(str(path))
    try:
        start = clock.now_dt()
        now = [start]
        monkeypatch.setattr(clock, "now_dt", lambda: now[0])
        store.save_cursor("old", "p", "f", "[]", ttl_seconds=1)  # sweeps (nothing yet)
        now[0] = start + timedelta(seconds=2)
        store.save_cursor("new", "p", "f", "[]", ttl_seconds=300)
        # "old" has expired but no sweep is due yet: kept, though never loaded.
        assert tokens(path) == ["new", "old"]
        assert store.load_cursor("old") is None
        now[0] = start + cursors.SWEEP_EVERY + timedelta(seconds=1)
        store.save_cursor("third", "p", "f", "[]", ttl_seconds=300)
        assert tokens(path) == ["new", "third"]
        assert store.load_cursor("new") == ("p", "f", "[]")
    finally:
        store.close()
