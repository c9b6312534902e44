"""Full-text searches run on pooled read-only connections: they see committed data without
waiting for the main connection, and a thread inside a transaction sees its own writes."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest

from graphrecall.domain.models import Episode
from graphrecall.store import open_store
from graphrecall.store.sqlite import connection as sqlite_store
from graphrecall.store.sqlite import pragmas
from graphrecall.store.sqlite.store import SQLiteStore

GRAPH = "g-1"
STAMP = "2026-01-01T00:00:00.000000Z"


def _episode(uuid: str, text: str) -> Episode:
    return Episode(
        uuid=uuid,
        graph_uuid=GRAPH,
        content=text,
        source="text",
        reference_time=STAMP,
        created_at=STAMP,
    )


def test_reads_see_own_writes_inside_a_transaction_and_others_after_commit(
    tmp_path: Path,
) -> None:
    store = open_store(tmp_path / "db.sqlite")
    try:
        store.insert([_episode("a", "the lighthouse keeper")])
        seen_by_other: list[list[str]] = []

        def other_thread() -> None:
            found = store.text_search(Episode, {"graph_uuid": GRAPH}, ["harbour"])
            seen_by_other.append([u for u, _ in found])

        with store.transaction():
            store.insert([_episode("b", "the harbour master")])
            mine = [u for u, _ in store.text_search(Episode, {"graph_uuid": GRAPH}, ["harbour"])]
            reader = threading.Thread(target=other_thread)
            reader.start()
            reader.join(timeout=5)
            # The other thread did not wait for this transaction, and saw committed data.
            assert not reader.is_alive()
        assert mine == ["b"]
        assert seen_by_other == [[]]
        found = store.text_search(Episode, {"graph_uuid": GRAPH}, ["harbour"])
        assert [u for u, _ in found] == ["b"]
    finally:
        store.close()


def test_searches_still_run_when_the_pool_is_exhausted(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(sqlite_store, "READ_POOL_MAX", 0)
    store = open_store(tmp_path / "db.sqlite")
    try:
        store.insert([_episode("a", "the lighthouse keeper")])
        found = store.text_search(Episode, {"graph_uuid": GRAPH}, ["lighthouse"])
        assert [u for u, _ in found] == ["a"]
    finally:
        store.close()


def test_every_connection_reads_through_a_memory_map(tmp_path: Path) -> None:
    store = SQLiteStore(tmp_path / "db.sqlite")
    try:
        pooled = store.db.checkout()
        assert pooled is not None
        for conn in (store.db.conn, store.db.reader, pooled):
            # SQLite caps the map at its build's limit; it must not be off (0).
            mapped = int(conn.execute("PRAGMA mmap_size").fetchone()[0])
            assert 0 < mapped <= pragmas.MMAP_BYTES
        store.db.checkin(pooled)
    finally:
        store.close()
