"""Full-text index compaction (SQLiteStore.compact_text_indexes): an index written row by
row is merged toward one segment in bounded steps, only once its table has grown enough,
with the same search results and an intact index; an idle worker runs it."""

from __future__ import annotations

import sqlite3
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from graphrecall.domain.models import Edge
from graphrecall.ingest.context import IngestContext
from graphrecall.ingest.worker import Worker
from graphrecall.store import Store, open_store
from graphrecall.store.sqlite import maintenance as sqlite_store
from tests.store.sqlite.facts import insert_facts

GRAPH = "g-compaction"
WORDS = ["hiking", "pottery", "guitar", "camping", "painting", "running", "baking", "chess"]


@pytest.fixture
def path(tmp_path: Path) -> Path:
    return tmp_path / "compaction.db"


@pytest.fixture
def store(path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Store]:
    monkeypatch.setattr(sqlite_store, "COMPACT_MIN_ROWS", 200)
    monkeypatch.setattr(sqlite_store, "COMPACT_PAGES", 1)  # several steps per merge
    s = open_store(path)
    yield s
    s.close()


def _facts(store: Store, n: int, start: int = 0) -> None:
    for i in range(start, start + n):  # one transaction (one new segment) per fact
        text = f"Person {i} enjoys {WORDS[i % len(WORDS)]} number{i} "
        insert_facts(store, [text + " ".join(f"w{i}x{k}" for k in range(8))], GRAPH)


def _index_rows(path: Path) -> int:
    conn = sqlite3.connect(path)
    try:
        conn.execute("INSERT INTO edges_fts(edges_fts, rank) VALUES ('integrity-check', 1)")
        return int(conn.execute("SELECT count(*) FROM edges_fts_data").fetchone()[0])
    finally:
        conn.close()


def _compact(store: Store) -> int:
    steps = 0
    while store.maintenance.compact_text_indexes():
        steps += 1
        assert steps < 10_000
    return steps


def test_compaction_merges_the_index_and_keeps_every_result(store: Store, path: Path) -> None:
    _facts(store, 400)
    before = [store.text_search(Edge, {"graph_uuid": GRAPH}, [w]) for w in WORDS]
    rows_before = _index_rows(path)
    steps = _compact(store)
    assert steps >= 2  # bounded steps, not one long transaction
    assert _index_rows(path) < rows_before
    after = [store.text_search(Edge, {"graph_uuid": GRAPH}, [w]) for w in WORDS]
    assert after == before
    assert store.text_search(Edge, {"graph_uuid": GRAPH}, ["number123"])


def test_an_index_is_merged_again_only_after_its_table_grew(store: Store) -> None:
    _facts(store, 150)
    assert _compact(store) == 0  # under COMPACT_MIN_ROWS
    _facts(store, 100, start=150)
    assert _compact(store) > 0
    _facts(store, 10, start=250)  # 10 rows: under the 200-row minimum growth
    assert _compact(store) == 0
    _facts(store, 200, start=260)
    assert _compact(store) > 0
    assert store.setting("fts_compacted_rows:edges", "0") == "460"


def test_an_idle_worker_compacts(store: Store, path: Path) -> None:
    _facts(store, 300)
    worker = Worker(
        IngestContext(store=store, embedder=None, extractor=None), poll_seconds=0.05, threads=1
    )
    worker.start()
    try:
        deadline = time.monotonic() + 30
        while store.setting("fts_compacted_rows:edges", "0") == "0":
            assert time.monotonic() < deadline, "the idle worker did not compact"
            time.sleep(0.05)
    finally:
        worker.stop()
    assert not store.maintenance.compact_text_indexes()  # nothing left to merge
    _index_rows(path)  # the index is intact


def test_checking_with_nothing_due_takes_no_write_lock(store: Store, path: Path) -> None:
    _facts(store, 50)
    other = sqlite3.connect(path, isolation_level=None, timeout=0.1)
    try:
        other.execute("BEGIN IMMEDIATE")  # another writer holds the write lock
        assert store.maintenance.compact_text_indexes() is False  # answered from reads, at once
    finally:
        other.execute("ROLLBACK")
        other.close()
