"""Migration 26: a database that already holds vectors records that they were made by
all-MiniLM-L6-v2 (the only embedder before it), so a newer default embedder does not
mix its vectors with them; an empty database records nothing (its first start does)."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import numpy as np

from graphrecall.ml.embedder import STOCK
from graphrecall.store.sqlite.migrations import migrate


def _settings(conn: sqlite3.Connection) -> dict[str, str]:
    return dict(conn.execute("SELECT key, value FROM settings").fetchall())


def test_a_database_with_vectors_records_the_stock_embedder(tmp_path: Path) -> None:
    conn = sqlite3.connect(tmp_path / "old.sqlite", isolation_level=None)
    assert migrate(conn, 25) == 25
    conn.execute(
        "INSERT INTO embeddings (kind, uuid, owner_uuid, vector) VALUES (?,?,?,?)",
        ["episodes", "e1", "g1", np.ones(384, dtype=np.float32).tobytes()],
    )
    assert migrate(conn, 26) == 26
    assert _settings(conn)["embedder_model"] == STOCK.family == "all-MiniLM-L6-v2"


def test_an_empty_database_records_nothing_yet(tmp_path: Path) -> None:
    conn = sqlite3.connect(tmp_path / "new.sqlite", isolation_level=None)
    assert migrate(conn, 26) == 26
    assert "embedder_model" not in _settings(conn)
