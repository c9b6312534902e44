"""The in-memory vector matrices on PostgreSQL (``store/postgres/vector_copies.py``): a
vector written, changed or dropped through another store (another process's, in a
deployment) is searched by the next search, caught up from the vector change log, with
the answers (to the last bit) SQLite gives for the same writes; a big owner is read in
the background while pgvector answers, then searched through the shared HNSW index; a
transaction's search sees its own uncommitted vectors; a pruned log has the copy read
again."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import numpy as np
import numpy.typing as npt
import pytest

from graphrecall.domain.ids import new_id
from graphrecall.domain.models import Edge
from graphrecall.domain.predicates import Column
from graphrecall.store import Store, open_store
from graphrecall.store.postgres import vector_copies
from graphrecall.store.postgres.vector_copies import VectorCopies
from graphrecall.store.vector_index import VectorIndexes
from tests.store.conformance.records import edge, node


def copies(store: Store) -> VectorCopies:
    found: VectorCopies = getattr(store, "_pgvectors").copies  # noqa: B009
    return found


def unit(rng: np.random.Generator, count: int) -> npt.NDArray[np.float32]:
    m = rng.normal(size=(count, 384)).astype(np.float32)
    out: npt.NDArray[np.float32] = m / np.linalg.norm(m, axis=1, keepdims=True)
    return out


@pytest.fixture()
def stores(
    tmp_path: Path, pg_url: str, open_pg: Callable[[str], Store]
) -> Iterator[tuple[Store, Store, Store]]:
    """Two stores on one PostgreSQL schema (as two processes would open it) and a SQLite
    store given the same writes."""
    sqlite = open_store(tmp_path / "mirror.db")
    yield open_pg(pg_url), open_pg(pg_url), sqlite
    sqlite.close()


def facts_in_both(
    stores: tuple[Store, Store, Store], rng: np.random.Generator, count: int
) -> tuple[str, list[Edge]]:
    """A new graph's ``count`` facts with random vectors, written through the second
    PostgreSQL store and the SQLite one."""
    _, writer, sqlite = stores
    graph = new_id()
    a, b = node(graph, "A"), node(graph, "B")
    edges = [edge(graph, a, b, f"fact {i}", t=i) for i in range(count)]
    vectors = unit(rng, count)
    for store in (writer, sqlite):
        store.insert(edges)
        store.set_embeddings(Edge, graph, [(e.uuid, vectors[i]) for i, e in enumerate(edges)])
    return graph, edges


def test_another_stores_vectors_are_searched_from_the_copy(
    stores: tuple[Store, Store, Store],
) -> None:
    reader, writer, sqlite = stores
    rng = np.random.default_rng(5)
    graph, edges = facts_in_both(stores, rng, 60)
    a, b = node(graph, "A"), node(graph, "B")
    queries = unit(rng, 5)
    scope = {"graph_uuid": graph}
    odd = Column("uuid", "in", tuple(e.uuid for e in edges[1::2]))

    def same() -> None:
        for q in queries:
            for where in (None, odd):
                got = reader.vector_search(Edge, graph, q, scope=scope, where=where, limit=10)
                want = sqlite.vector_search(Edge, graph, q, scope=scope, where=where, limit=10)
                assert got == want

    same()
    held = copies(reader).matrices.status()
    assert held["entries"] == 1 and held["misses"] == 1
    same()
    assert copies(reader).matrices.status()["hits"] == 2 * len(queries) * 2 - 1

    # Added and changed vectors are caught up (no read of the whole owner).
    more = [edge(graph, a, b, f"more {i}", t=100 + i) for i in range(5)]
    changed, added = unit(rng, 3), unit(rng, 5)
    for store in (writer, sqlite):
        store.insert(more)
        store.set_embeddings(Edge, graph, [(e.uuid, v) for e, v in zip(more, added, strict=True)])
        store.set_embeddings(Edge, graph, [(edges[i].uuid, changed[i]) for i in range(3)])
    read = copies(reader).matrices.status()["misses"]
    same()
    entry = copies(reader).matrices.get(("edges", graph))
    assert entry is not None and len(entry[1]) == 65
    assert copies(reader).matrices.status()["misses"] == read + 1  # one catch-up

    # A dropped vector has the copy read again.
    for store in (writer, sqlite):
        store.delete_embeddings(Edge, graph, [edges[5].uuid])
    same()
    entry = copies(reader).matrices.get(("edges", graph))
    assert entry is not None and edges[5].uuid not in entry[2] and len(entry[1]) == 64


def test_a_transaction_searches_its_own_vectors(
    pg_url: str, open_pg: Callable[[str], Store]
) -> None:
    store = open_pg(pg_url)
    rng = np.random.default_rng(6)
    graph = new_id()
    a, b = node(graph, "A"), node(graph, "B")
    edges = [edge(graph, a, b, f"fact {i}", t=i) for i in range(10)]
    vectors = unit(rng, 11)
    store.insert(edges)
    store.set_embeddings(Edge, graph, [(e.uuid, vectors[i]) for i, e in enumerate(edges)])
    scope = {"graph_uuid": graph}
    assert len(store.vector_search(Edge, graph, vectors[0], scope=scope)) == 10
    late = edge(graph, a, b, "late", t=50)
    with store.transaction():
        store.insert([late])
        store.set_embeddings(Edge, graph, [(late.uuid, vectors[10])])
        found = store.vector_search(Edge, graph, vectors[10], scope=scope, limit=1)
        assert found[0][0] == late.uuid
    assert store.vector_search(Edge, graph, vectors[10], scope=scope, limit=1)[0][0] == late.uuid


def test_a_big_owner_is_read_apart_then_searched_through_hnsw(
    pg_url: str, open_pg: Callable[[str], Store], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(vector_copies, "INLINE_LOAD_ROWS", 100)
    store = open_pg(pg_url)
    held = copies(store)
    held.ann = VectorIndexes(min_rows=100)
    rng = np.random.default_rng(7)
    graph = new_id()
    a, b = node(graph, "A"), node(graph, "B")
    edges = [edge(graph, a, b, f"fact {i}", t=i) for i in range(400)]
    vectors = unit(rng, 400)
    store.insert(edges)
    store.set_embeddings(Edge, graph, [(e.uuid, vectors[i]) for i, e in enumerate(edges)])
    scope = {"graph_uuid": graph}
    first = store.vector_search(Edge, graph, vectors[7], scope=scope, limit=10)  # pgvector
    assert first[0][0] == edges[7].uuid
    deadline = time.monotonic() + 60
    while held.status()["building"] or not held.status()["ready"]:
        assert time.monotonic() < deadline, held.status()
        time.sleep(0.05)
    assert held.status() == {"ready": 1, "building": 0}
    hits = held.matrices.status()["hits"]
    for i in range(0, 400, 40):
        got = store.vector_search(Edge, graph, vectors[i], scope=scope, limit=10)
        assert got[0][0] == edges[i].uuid and abs(got[0][1] - 1.0) < 1e-5
        assert got == sorted(got, key=lambda h: (-h[1], h[0]))
    assert held.matrices.status()["hits"] == hits + 10


def test_a_pruned_log_has_the_copy_read_again(
    stores: tuple[Store, Store, Store], monkeypatch: pytest.MonkeyPatch
) -> None:
    reader, writer, _ = stores
    monkeypatch.setattr(vector_copies, "LOG_SCAN_MAX", 5)
    rng = np.random.default_rng(8)
    graph = new_id()
    a, b = node(graph, "A"), node(graph, "B")
    edges = [edge(graph, a, b, f"fact {i}", t=i) for i in range(20)]
    writer.insert(edges)
    writer.set_embeddings(
        Edge, graph, [(e.uuid, v) for e, v in zip(edges, unit(rng, 20), strict=True)]
    )
    scope = {"graph_uuid": graph}
    reader.vector_search(Edge, graph, unit(rng, 1)[0], scope=scope)
    newer = unit(rng, 20)
    writer.set_embeddings(Edge, graph, [(e.uuid, v) for e, v in zip(edges, newer, strict=True)])
    assert copies(writer).prune_log()
    got = reader.vector_search(Edge, graph, newer[3], scope=scope, limit=1)
    assert got[0][0] == edges[3].uuid and abs(got[0][1] - 1.0) < 1e-5
    assert not copies(writer).prune_log()  # fewer than twice LOG_SCAN_MAX left


def test_a_cold_owner_is_read_ahead_once_and_searched_from_that_read(
    stores: tuple[Store, Store, Store], monkeypatch: pytest.MonkeyPatch
) -> None:
    reader, _, sqlite = stores
    rng = np.random.default_rng(9)
    graph, _ = facts_in_both(stores, rng, 30)
    reads: list[str] = []
    whole = VectorCopies._read

    def counted(self: VectorCopies, key: tuple[str, str], last: int, **kw: int) -> object:
        reads.append(threading.current_thread().name)
        time.sleep(0.2)  # a slow read: the search below must wait for it, not read again
        return whole(self, key, last, **kw)

    monkeypatch.setattr(VectorCopies, "_read", counted)
    reader.prefetch_vectors(Edge, graph)
    reader.prefetch_vectors(Edge, graph)  # already under way: nothing more
    query = unit(rng, 1)[0]
    scope = {"graph_uuid": graph}
    got = reader.vector_search(Edge, graph, query, scope=scope, limit=10)
    assert got == sqlite.vector_search(Edge, graph, query, scope=scope, limit=10)
    assert len(reads) == 1 and reads[0].startswith("vector-ahead")
    reader.prefetch_vectors(Edge, graph)  # in memory now: nothing to read
    assert reader.vector_search(Edge, graph, query, scope=scope, limit=10) == got
    assert len(reads) == 1
