"""Migration 18: a memory's id is unique in its space only. A database at 17 with
memories, their audit log and vectors upgrades with every row, its full-text index and
its indexes intact, and then takes a second space's memory of the same id."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import numpy as np

from graphrecall.domain.models import Memory
from graphrecall.store import open_store
from graphrecall.store.sqlite.migrations import migrate

STAMP = "2026-01-01T00:00:00.000000Z"
SPACE, OTHER = "s-1", "s-2"
ONE = (1, "h")  # an event's version and hash
TEXTS = ["the harbour at dawn", "a mountain pass", "harbour fog and rain"]


def _write_at_17(conn: sqlite3.Connection) -> None:
    for i, text in enumerate(TEXTS):
        conn.execute(
            "INSERT INTO memories (uuid, space_uuid, content, meta, tree, name, temporal_start,"
            " temporal_end, version, version_hash, created_at) VALUES (?,?,?,?,?,?,?,?,?,?,?)",
            [f"m{i}", SPACE, text, json.dumps({"n": i}), "a.b", f"n{i}", STAMP, STAMP, *ONE, STAMP],
        )
        conn.execute(
            "INSERT INTO memory_events (uuid, space_uuid, memory_uuid, at, operation,"
            " operation_id, cause, actor, content, meta, tree, version, version_hash)"
            " VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?)",
            [f"e{i}", SPACE, f"m{i}", STAMP, "insert", "op", "api", "{}", text, "{}", "a.b", *ONE],
        )
        vector = np.eye(3, dtype=np.float32)[i].tobytes()
        conn.execute(
            "INSERT INTO embeddings (kind, uuid, owner_uuid, vector) VALUES (?,?,?,?)",
            ["memories", f"m{i}", SPACE, vector],
        )
    conn.execute("DELETE FROM memories WHERE uuid = 'm1'")  # a rowid gap survives too


def _rows(conn: sqlite3.Connection) -> list[tuple[object, ...]]:
    return list(conn.execute("SELECT rowid, * FROM memories ORDER BY rowid"))


def test_upgrading_from_17_keeps_memories_and_scopes_their_ids(tmp_path: Path) -> None:
    path = tmp_path / "old.sqlite"
    conn = sqlite3.connect(path, isolation_level=None)
    assert migrate(conn, 17) == 17
    _write_at_17(conn)
    before = _rows(conn)
    events = list(conn.execute("SELECT * FROM memory_events ORDER BY uuid"))
    indexes = {n for (n,) in conn.execute("SELECT name FROM sqlite_master WHERE type='index'")}
    assert migrate(conn, 18) == 18
    assert _rows(conn) == before
    assert list(conn.execute("SELECT * FROM memory_events ORDER BY uuid")) == events
    after = {n for (n,) in conn.execute("SELECT name FROM sqlite_master WHERE type='index'")}
    # Every index but the global uniqueness of a memory's id (the old primary key).
    assert indexes - {"sqlite_autoindex_memories_1"} <= after
    assert "sqlite_autoindex_memories_1" not in after
    conn.execute("INSERT INTO memories_fts(memories_fts, rank) VALUES ('integrity-check', 1)")
    conn.close()

    store = open_store(path)
    try:
        found = store.text_search(Memory, {"space_uuid": SPACE}, ["harbour"])
        assert sorted(u for u, _ in found) == ["m0", "m2"]
        assert store.get_embeddings(Memory, SPACE, ["m0", "m2"]).keys() == {"m0", "m2"}
        # Another space takes the same id; the first space's memory is untouched.
        theirs = Memory(
            uuid="m0",
            space_uuid=OTHER,
            content="harbour of the other space",
            version_hash="h",
            created_at=STAMP,
        )
        store.insert([theirs])
        store.set_embeddings(Memory, OTHER, [("m0", np.ones(3, dtype=np.float32) / 3**0.5)])
        assert store.get(Memory, "m0", {"space_uuid": OTHER}) == theirs
        mine = store.get(Memory, "m0", {"space_uuid": SPACE})
        assert mine is not None and mine.content == TEXTS[0] and mine.meta == {"n": 0}
        assert np.allclose(store.get_embeddings(Memory, SPACE, ["m0"])["m0"], [1, 0, 0])
        found = store.text_search(Memory, {"space_uuid": SPACE}, ["harbour"])
        assert sorted(u for u, _ in found) == ["m0", "m2"]
    finally:
        store.close()
