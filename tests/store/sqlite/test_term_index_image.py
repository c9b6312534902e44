"""A term-index copy saved beside the database (store/sqlite/term_index_image.py): a
restarted store loads it instead of reading FTS5 whole, catches it up with the writes
since, ranks exactly as FTS5 does, and ignores a file that belongs to another database."""

from __future__ import annotations

import random
import shutil
import threading
from pathlib import Path
from typing import Any

import pytest

from graphrecall.domain.models import Edge
from graphrecall.store import Store, open_store
from graphrecall.store.lexical.postings import TermIndex
from graphrecall.store.sqlite import term_index, term_index_image
from graphrecall.store.sqlite.connection import tune
from graphrecall.store.sqlite.migrations import FTS_TOKENIZE
from graphrecall.store.sqlite.text_search import _text_weights
from tests.store.sqlite.test_term_index import GRAPH, both, edges, sentence


@pytest.fixture
def builds(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Every table gets a copy; the tables whose copy was read whole, once per reading."""
    monkeypatch.setattr(term_index, "MIN_ROWS", 0)
    monkeypatch.setattr(term_index, "REBUILD_MIN_GAP_S", 0.0)
    done: list[str] = []
    real = term_index.build

    def counted(path: Any, table: str, *args: Any) -> TermIndex:
        done.append(table)
        return real(path, table, *args)

    monkeypatch.setattr(term_index, "build", counted)
    return done


def warm(store: Store) -> None:
    store.text_search(Edge, {"graph_uuid": GRAPH}, ["tennis"])
    assert store.maintenance.wait_until_warm(30)


def test_a_restart_loads_the_saved_copy_and_catches_it_up(
    tmp_path: Path, builds: list[str]
) -> None:
    rng = random.Random(11)
    path = tmp_path / "saved.db"
    store = open_store(path)
    try:
        edges(store, [sentence(rng) for _ in range(120)])
        warm(store)
        assert builds.count("edges") == 1
        before = both(store, Edge, ["tennis", "piano"], 10)
    finally:
        store.close()
    assert (Path(f"{path}-termindex") / "edges.npz").exists()

    store = open_store(path)
    try:
        warm(store)
        assert builds.count("edges") == 1  # loaded, not read whole again
        assert both(store, Edge, ["tennis", "piano"], 10) == before
        (new,) = edges(store, ["zanzibar tennis tennis"])  # written after the save
        indexed, plain = both(store, Edge, ["zanzibar", "tennis"], 5)
        assert indexed == plain and indexed[0][0] == new
        assert builds.count("edges") == 1
    finally:
        store.close()


def test_a_starting_server_waits_for_saved_copies_but_not_for_reading_whole(
    tmp_path: Path, builds: list[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    rng = random.Random(13)
    path = tmp_path / "saved.db"
    store = open_store(path)
    try:
        edges(store, [sentence(rng) for _ in range(60)])
        warm(store)
    finally:
        store.close()
    (Path(f"{path}-termindex") / "nodes.npz").unlink()  # nodes has no saved copy now
    release = threading.Event()
    real = term_index.build

    def held(*args: Any) -> TermIndex:  # a table read whole takes as long as the test says
        release.wait(30)
        return real(*args)

    monkeypatch.setattr(term_index, "build", held)
    store = open_store(path)
    try:
        store.maintenance.wait_until_warm(0.0)  # as the app does: starts, does not wait
        assert store.maintenance.wait_for_saved_copies(10)  # edges' image read, nodes' not
        status = store.maintenance.text_index_status()
        assert status["building"] >= 1  # a table with no image is still read whole
        indexes = getattr(store, "_text").indexes  # noqa: B009
        assert indexes.has("edges") and not indexes.has("nodes")
    finally:
        release.set()
        store.maintenance.wait_until_warm(30)
        store.close()


def test_a_file_of_another_database_is_ignored(tmp_path: Path, builds: list[str]) -> None:
    rng = random.Random(12)
    first, second = tmp_path / "first.db", tmp_path / "second.db"
    for path, count in ((first, 80), (second, 90)):
        store = open_store(path)
        try:
            edges(store, [sentence(rng) for _ in range(count)])
            if path == first:
                warm(store)
        finally:
            store.close()
    shutil.copytree(Path(f"{first}-termindex"), Path(f"{second}-termindex"))
    store = open_store(second)
    try:
        warm(store)
        assert builds.count("edges") == 2  # read whole: the file was not its own
        indexed, plain = both(store, Edge, ["tennis", "piano"], 10)
        assert indexed == plain
    finally:
        store.close()


def test_no_file_for_a_database_without_one() -> None:
    assert term_index_image.folder(Path(":memory:")) is None
    assert term_index.MIN_ROWS > 0


def test_an_erasure_removes_the_saved_copy_and_it_is_saved_again_without_the_word(
    tmp_path: Path, builds: list[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(term_index, "REBUILD_GAP_FACTOR", 0.0)  # no spacing after a build
    path = tmp_path / "erased.db"
    folder = Path(f"{path}-termindex")
    store = open_store(path)
    try:
        (doomed,) = edges(store, ["qzsecret17 tennis"])
        edges(store, ["tennis piano", "piano lesson"])
        warm(store)
        assert b"qzsecret17" in (folder / "edges.json").read_bytes()
        with store.transaction():
            store.delete(Edge, {"graph_uuid": GRAPH, "uuid": doomed})
            store.maintenance.mark_erasure(["edges"])
        receipt = store.maintenance.erase()
        assert receipt["saved_copies_removed"] == ["edges"]
        # Read again whole in the background (save_again), and saved without the word.
        assert store.maintenance.wait_until_warm(30)
        assert builds.count("edges") == 2
        saved = (folder / "edges.json").read_bytes()
        assert b"qzsecret17" not in saved and b"piano" in saved
    finally:
        store.close()


def test_a_copy_read_before_an_erasure_is_not_saved_after_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "race.db"
    store = open_store(path)
    try:
        edges(store, ["qzsecret18 tennis", "tennis piano"])
    finally:
        store.close()
    indexes = term_index.TermIndexes(path, tune, FTS_TOKENIZE)
    started, release = threading.Event(), threading.Event()
    real = term_index.build

    def slow(*args: Any) -> TermIndex:
        found = real(*args)  # read before the erasure...
        started.set()
        release.wait(10)  # ...saved after it
        return found

    monkeypatch.setattr(term_index, "build", slow)
    try:
        indexes._tried_file.add("edges")  # no saved file to look for: read whole
        indexes.refresh("edges", "graph_uuid", _text_weights("edges"))
        assert started.wait(10)
        indexes.forget(["edges"])
        release.set()
        assert indexes.wait(10)
        assert indexes.has("edges")  # the copy serves searches; only its file is dropped
    finally:
        indexes.close()
    assert not (Path(f"{path}-termindex") / "edges.json").exists()
