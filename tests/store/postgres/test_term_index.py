"""The in-memory postings copies on PostgreSQL (``store/postgres/term_index.py``): a write
through another store (another process's, in a deployment) is searched by the next
search, caught up from the change log, with the answers SQLite gives for the same writes;
many changes are caught up apart while SQL answers; a pruned log has the copy read again;
a transaction's search sees its own uncommitted writes; a copy read whole is saved, and
another process starts from it, caught up, instead of reading the table again."""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from graphrecall.domain.ids import new_id
from graphrecall.domain.models import Edge
from graphrecall.domain.scopes import SCOPE_OF
from graphrecall.store import Store, open_store
from graphrecall.store.postgres import term_index
from graphrecall.store.postgres import term_index_image as image
from tests.store.conformance.records import edge, node

Search = list[tuple[str, float]]
QUERIES = [["zebra"], ["alpha", "zebra"], ["alpha"], ["beta", "gamma"], ["quokka"]]


def indexes(store: Store) -> term_index.TermIndexes:
    found: term_index.TermIndexes = getattr(store, "_lexical").indexes  # noqa: B009
    return found


def search(store: Store, graph: str, terms: list[str]) -> Search:
    return store.text_search(Edge, {"graph_uuid": graph}, terms, limit=10)


def same(got: Search, want: Search, terms: Any) -> None:
    assert [u for u, _ in got] == [u for u, _ in want], terms
    np.testing.assert_allclose([s for _, s in got], [s for _, s in want], rtol=1e-9)


@pytest.fixture()
def stores(
    tmp_path: Path, pg_url: str, open_pg: Callable[[str], Store]
) -> Iterator[tuple[Store, Store, Store]]:
    """Two stores on one PostgreSQL schema (as two processes would open it) and a SQLite
    store given the same writes."""
    sqlite = open_store(tmp_path / "mirror.db")
    yield open_pg(pg_url), open_pg(pg_url), sqlite
    sqlite.close()


def test_another_stores_writes_are_searched_from_the_copy(
    stores: tuple[Store, Store, Store],
) -> None:
    reader, writer, sqlite = stores
    graph, other = new_id(), new_id()
    a, b = node(graph, "A"), node(graph, "B")
    first = [edge(graph, a, b, f"alpha beta number {i}", t=i) for i in range(30)]
    first.append(edge(other, a, b, "alpha zebra elsewhere", t=31))
    for store in (writer, sqlite):
        store.insert(first)
    for terms in QUERIES:
        same(search(reader, graph, terms), search(sqlite, graph, terms), terms)
    assert indexes(reader).has("edges")  # read by the search itself (a small table)
    caught = indexes(reader).caught_up

    # Through the other store: new rows, a rewritten one, a deleted one.
    added = [edge(graph, a, b, "zebra gamma beta", t=40), edge(graph, a, b, "quokka", t=41)]
    rewritten = first[3].model_copy(update={"fact": "zebra alpha alpha"})
    for store in (writer, sqlite):
        store.insert(added)
        store.update(rewritten, ["fact"])
        store.delete(Edge, {"graph_uuid": graph, "uuid": first[5].uuid})
    for terms in QUERIES:
        same(search(reader, graph, terms), search(sqlite, graph, terms), terms)
    assert {u for u, _ in search(reader, graph, ["zebra"])} == {
        added[0].uuid,
        rewritten.uuid,
    }
    assert first[5].uuid not in {u for u, _ in search(reader, graph, ["alpha"])}
    assert indexes(reader).caught_up > caught  # the copy answered, caught up


def test_many_changes_are_caught_up_apart(
    stores: tuple[Store, Store, Store], monkeypatch: pytest.MonkeyPatch
) -> None:
    reader, writer, sqlite = stores
    graph = new_id()
    a, b = node(graph, "A"), node(graph, "B")
    seed = [edge(graph, a, b, "alpha beta", t=0)]
    for store in (writer, sqlite):
        store.insert(seed)
    search(reader, graph, ["alpha"])
    monkeypatch.setattr(term_index, "INLINE_MAX", 2)
    more = [edge(graph, a, b, f"zebra alpha {i}", t=i + 1) for i in range(10)]
    for store in (writer, sqlite):
        store.insert(more)
    for terms in QUERIES:  # SQL answers while a thread catches the copy up
        same(search(reader, graph, terms), search(sqlite, graph, terms), terms)
    assert indexes(reader).wait(30)
    assert indexes(reader).status()["caught_up"] >= 1
    for terms in QUERIES:
        same(search(reader, graph, terms), search(sqlite, graph, terms), terms)


def test_a_copy_behind_the_pruned_log_is_read_again(
    stores: tuple[Store, Store, Store], monkeypatch: pytest.MonkeyPatch
) -> None:
    reader, writer, sqlite = stores
    graph = new_id()
    a, b = node(graph, "A"), node(graph, "B")
    seed = [edge(graph, a, b, "alpha beta", t=0)]
    for store in (writer, sqlite):
        store.insert(seed)
    search(reader, graph, ["alpha"])
    before = getattr(reader, "_lexical").indexes._current["edges"]  # noqa: B009
    monkeypatch.setattr(term_index, "LOG_SCAN_MAX", 3)
    for i in range(10):
        one = [edge(graph, a, b, f"zebra gamma {i}", t=i + 1)]
        for store in (writer, sqlite):
            store.insert(one)
    assert writer.maintenance.compact_text_indexes()  # the log held over twice 3 entries
    assert not writer.maintenance.compact_text_indexes()
    monkeypatch.undo()  # the copy is 10 entries behind: only the pruned floor tells
    for terms in QUERIES:
        same(search(reader, graph, terms), search(sqlite, graph, terms), terms)
    assert indexes(reader).wait(30)
    after = getattr(reader, "_lexical").indexes._current["edges"]  # noqa: B009
    assert after is not before and after.delta_rows == 0  # read again whole
    for terms in QUERIES:
        same(search(reader, graph, terms), search(sqlite, graph, terms), terms)


def test_a_transaction_searches_its_own_writes(stores: tuple[Store, Store, Store]) -> None:
    reader, _, _ = stores
    graph = new_id()
    a, b = node(graph, "A"), node(graph, "B")
    reader.insert([edge(graph, a, b, "alpha beta", t=0)])
    search(reader, graph, ["alpha"])
    fresh = edge(graph, a, b, "zebra", t=1)
    with reader.transaction():
        reader.insert([fresh])
        assert [u for u, _ in search(reader, graph, ["zebra"])] == [fresh.uuid]
    assert [u for u, _ in search(reader, graph, ["zebra"])] == [fresh.uuid]


def test_the_cache_reports_its_copies(stores: tuple[Store, Store, Store]) -> None:
    reader, _, _ = stores
    graph = new_id()
    a, b = node(graph, "A"), node(graph, "B")
    reader.insert([edge(graph, a, b, "alpha beta", t=0)])
    assert reader.maintenance.wait_until_warm(30)
    status = reader.maintenance.cache_status()["term_indexes"]
    assert status["ready"] >= 1 and status["bytes"] > 0


def test_a_new_process_starts_from_the_saved_copy_caught_up(
    stores: tuple[Store, Store, Store], monkeypatch: pytest.MonkeyPatch
) -> None:
    writer, reader, sqlite = stores
    monkeypatch.setattr(term_index, "INLINE_BUILD_ROWS", 0)  # every table read apart
    graph = new_id()
    a, b = node(graph, "A"), node(graph, "B")
    first = [edge(graph, a, b, f"alpha beta number {i}", t=i) for i in range(20)]
    for store in (writer, sqlite):
        store.insert(first)
    search(writer, graph, ["alpha"])  # SQL answers; the copy is read whole apart, saved
    assert indexes(writer).wait(30) and indexes(writer).has("edges")
    saved_at = indexes(writer)._current["edges"].seq
    later = [edge(graph, a, b, "zebra alpha", t=30), edge(graph, a, b, "quokka", t=31)]
    for store in (writer, sqlite):  # written after the image
        store.insert(later)

    read_whole: list[object] = []
    whole = term_index.build
    monkeypatch.setattr(term_index, "build", lambda *a: read_whole.append(a) or whole(*a))
    for terms in QUERIES:  # SQL answers while the image is loaded
        same(search(reader, graph, terms), search(sqlite, graph, terms), terms)
    assert indexes(reader).wait(30) and indexes(reader).has("edges")
    for terms in QUERIES:  # from the copy, caught up with the later rows
        same(search(reader, graph, terms), search(sqlite, graph, terms), terms)
    loaded = indexes(reader)._current["edges"]
    # The image, not the rows (a copy read whole has no delta), caught up with the later
    # rows by the searches.
    assert read_whole == [] and loaded.delta_rows == len(later)
    assert loaded.seq > saved_at and indexes(reader).caught_up >= 1

    # An image the log no longer reaches back to is not used.
    db = getattr(reader, "_lexical").db  # noqa: B009
    weights = SCOPE_OF[Edge].text_weights
    kept = image.load(db, "edges", "graph_uuid", weights, last=saved_at, floor=0, reach=10)
    assert kept is not None and kept.seq == saved_at
    for last, floor, reach in ((saved_at, saved_at + 1, 10), (saved_at + 11, 0, 10)):
        found = image.load(db, "edges", "graph_uuid", weights, last=last, floor=floor, reach=reach)
        assert found is None


def test_a_starting_server_waits_for_the_saved_image_only(
    stores: tuple[Store, Store, Store], monkeypatch: pytest.MonkeyPatch
) -> None:
    writer, reader, _ = stores
    monkeypatch.setattr(term_index, "INLINE_BUILD_ROWS", 0)  # every table read apart
    graph = new_id()
    a, b = node(graph, "A"), node(graph, "B")
    writer.insert([a, b, *(edge(graph, a, b, f"alpha beta number {i}", t=i) for i in range(20))])
    search(writer, graph, ["alpha"])  # the edges copy is read whole apart and saved
    assert indexes(writer).wait(30) and indexes(writer).has("edges")
    assert not indexes(writer).has("nodes")  # never searched: no image

    release = threading.Event()
    whole = term_index.build

    def held(*args: Any) -> Any:  # nodes, read whole, takes as long as the test says
        if args[1] == "nodes":
            release.wait(30)
        return whole(*args)

    monkeypatch.setattr(term_index, "build", held)
    try:
        reader.maintenance.wait_until_warm(0.0)  # as the app does: starts, does not wait
        assert reader.maintenance.wait_for_saved_copies(10)
        assert indexes(reader).has("edges")  # from its image
        assert not indexes(reader).has("nodes")  # no image: still being read whole
        assert reader.maintenance.text_index_status()["building"] >= 1
    finally:
        release.set()
        assert reader.maintenance.wait_until_warm(30)


def test_an_erasure_forgets_images_and_vocabulary_and_refuses_an_older_image(
    pg_url: str, open_pg: Callable[[str], Store]
) -> None:
    """The saved image and the BM25 vocabulary (``lexical_terms``) hold every term: an
    erasure deletes the touched tables' images and the terms no row holds, and an image
    read before it (by any process) is not saved after it."""
    store = open_pg(pg_url)
    a, b = node("g", "Ada"), node("g", "Bo")
    doomed = edge("g", a, b, "qzsecret19 tennis")
    kept = edge("g", a, b, "tennis piano")
    with store.transaction():
        store.insert([a, b, doomed, kept])
    db = getattr(store, "db")  # noqa: B009
    weights = SCOPE_OF[Edge].text_weights
    early = term_index.build(db, "edges", "graph_uuid", weights)  # read before the delete
    image.save(db, early, "graph_uuid", weights)

    def vocabulary() -> set[str]:
        rows = db.query("SELECT term FROM lexical_terms WHERE tbl = 'edges'")
        return {str(r["term"]) for r in rows}

    def images() -> list[bytes]:
        rows = db.query("SELECT meta::text AS m FROM term_index_images WHERE tbl = 'edges'")
        return [str(r["m"]).encode() for r in rows]

    assert "qzsecret19" in vocabulary() and any(b"qzsecret19" in m for m in images())
    with store.transaction():
        store.delete(Edge, {"graph_uuid": "g", "uuid": doomed.uuid})
        store.maintenance.mark_erasure(["edges"])
    receipt = store.maintenance.erase()
    assert receipt["tables"] == ["edges"] and "lexical_terms" in receipt["rewritten"]
    assert "qzsecret19" not in vocabulary() and "tenni" in vocabulary()
    assert images() == []
    image.save(db, early, "graph_uuid", weights)  # a read from before: refused
    assert images() == []
    fresh = term_index.build(db, "edges", "graph_uuid", weights)
    image.save(db, fresh, "graph_uuid", weights)  # a read from after: saved
    (saved,) = images()
    assert b"qzsecret19" not in saved and b"piano" in saved
    assert [u for u, _ in search(store, "g", ["tennis"])] == [kept.uuid]
