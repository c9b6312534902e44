"""The HNSW vector index (store/vector_index.py): exact until built, then the same
neighbours as exact search, current after writes, rebuilt when the delta grows."""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import numpy.typing as npt
import pytest

from graphrecall.domain import clock
from graphrecall.domain.ids import new_id
from graphrecall.domain.models import Node
from graphrecall.domain.predicates import Column, HasAnyLabel
from graphrecall.store import Store, matrix_search, open_store, vector_index
from graphrecall.store.vector_index import VectorIndexes

DIM = 16
KEY = ("nodes", "g")


def unit(rows: int, seed: int) -> npt.NDArray[np.float32]:
    m = np.random.default_rng(seed).normal(size=(rows, DIM)).astype(np.float32)
    return m / np.linalg.norm(m, axis=1, keepdims=True)


def exact(matrix: npt.NDArray[np.float32], q: npt.NDArray[np.float32], k: int) -> list[int]:
    return [int(i) for i in np.argsort(-(matrix @ q), kind="stable")[:k]]


def wait_ready(indexes: VectorIndexes, ready: int = 1) -> None:
    deadline = time.monotonic() + 30
    while indexes.status() != {"ready": ready, "building": 0}:
        assert time.monotonic() < deadline, indexes.status()
        time.sleep(0.01)


def add_nodes(store: Store, labels: list[list[str]]) -> list[Node]:
    """Nodes of graph "g", one per label list."""
    stamp = clock.now()
    nodes = [
        Node(
            uuid=new_id(),
            graph_uuid="g",
            name=f"n{i}",
            labels=node_labels,
            created_at=stamp,
            updated_at=stamp,
        )
        for i, node_labels in enumerate(labels)
    ]
    store.insert(nodes)
    return nodes


def wait_store_ready(store: Store) -> None:
    deadline = time.monotonic() + 30
    while store.maintenance.vector_index_status() != {"ready": 1, "building": 0}:
        assert time.monotonic() < deadline, store.maintenance.vector_index_status()
        time.sleep(0.01)


def indexed_nodes(
    store: Store, labels: list[list[str]], seed: int
) -> tuple[list[Node], npt.NDArray[np.float32]]:
    """Nodes of graph "g" with random unit vectors, once their HNSW index is built."""
    nodes = add_nodes(store, labels)
    matrix = unit(len(nodes), seed)
    store.set_embeddings(Node, "g", [(n.uuid, matrix[i]) for i, n in enumerate(nodes)])
    store.vector_search(Node, "g", matrix[0], scope={"graph_uuid": "g"})  # starts the build
    wait_store_ready(store)
    return nodes, matrix


@pytest.fixture
def indexes() -> Iterator[VectorIndexes]:
    built = VectorIndexes(min_rows=100)
    yield built
    built.close()


def test_small_owners_stay_exact(indexes: VectorIndexes) -> None:
    matrix = unit(99, 1)
    assert indexes.search(KEY, [str(i) for i in range(99)], matrix, matrix[0], 5) is None
    assert indexes.status() == {"ready": 0, "building": 0}


def test_exact_until_built_then_same_neighbours(indexes: VectorIndexes) -> None:
    matrix = unit(500, 2)
    uuids = [f"u{i}" for i in range(500)]
    assert indexes.search(KEY, uuids, matrix, matrix[0], 10) is None  # starts a build
    wait_ready(indexes)
    for q in unit(20, 3):
        found = indexes.search(KEY, uuids, matrix, q, 10)
        assert found is not None
        assert [r for r, _ in found] == exact(matrix, q, 10)
        assert [s for _, s in found] == pytest.approx((matrix @ q)[exact(matrix, q, 10)])


def test_prepare_builds_the_index_a_search_would_start(indexes: VectorIndexes) -> None:
    small = unit(99, 4)
    indexes.prepare(("nodes", "small"), [str(i) for i in range(99)], small)
    assert indexes.status() == {"ready": 0, "building": 0}  # searched exactly: no index
    matrix = unit(300, 5)
    uuids = [f"u{i}" for i in range(300)]
    indexes.prepare(KEY, uuids, matrix)  # graph.warm: built before the first search
    wait_ready(indexes)
    found = indexes.search(KEY, uuids, matrix, matrix[7], 5)
    assert found is not None and found[0][0] == 7
    indexes.prepare(KEY, uuids, matrix)  # built already: nothing more
    assert indexes.status() == {"ready": 1, "building": 0}


def test_answers_follow_writes_made_after_the_snapshot(indexes: VectorIndexes) -> None:
    matrix = unit(500, 4)
    uuids = [f"u{i}" for i in range(500)]
    indexes.search(KEY, uuids, matrix, matrix[0], 10)
    wait_ready(indexes)
    # Now: u0 deleted, u1's vector changed, one new row; order of rows reshuffled.
    changed = matrix.copy()
    changed[1] = unit(1, 5)[0]
    new = unit(1, 6)
    current = np.vstack([changed[1:], new])[::-1].copy()
    current_uuids = ([*uuids[1:], "new"])[::-1]
    for q in (matrix[0], matrix[1], changed[1], new[0]):
        found = indexes.search(KEY, current_uuids, current, q, 10)
        assert found is not None
        assert [r for r, _ in found] == exact(current, q, 10)
    assert indexes.status()["ready"] == 1  # 2 changed rows of 500: no rebuild


def test_a_large_delta_rebuilds_in_the_background(indexes: VectorIndexes) -> None:
    matrix = unit(500, 7)
    uuids = [f"u{i}" for i in range(500)]
    indexes.search(KEY, uuids, matrix, matrix[0], 10)
    wait_ready(indexes)
    grown = np.vstack([matrix, unit(100, 8)])
    grown_uuids = [*uuids, *(f"n{i}" for i in range(100))]
    q = grown[550]
    found = indexes.search(KEY, grown_uuids, grown, q, 10)  # delta 100 > 10 %: rebuild
    assert found is not None and found[0][0] == 550
    wait_ready(indexes)
    snapshot = indexes._snapshots[KEY]
    assert len(snapshot.uuids) == 600


def test_store_vector_search_uses_the_index(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(vector_index, "ANN_MIN_ROWS", 150)
    store: Store = open_store(tmp_path / "ann.db")
    try:
        nodes = add_nodes(store, [["Entity"]] * 200)
        matrix = unit(200, 9)
        store.set_embeddings(Node, "g", [(n.uuid, matrix[i]) for i, n in enumerate(nodes)])
        scope = {"graph_uuid": "g"}
        first = store.vector_search(Node, "g", matrix[3], scope=scope, limit=5)
        wait_store_ready(store)
        second = store.vector_search(Node, "g", matrix[3], scope=scope, limit=5)
        assert [u for u, _ in second] == [u for u, _ in first]
        assert second[0] == (nodes[3].uuid, pytest.approx(1.0))
        # A vector written after the build is found.
        (extra,) = add_nodes(store, [["Entity"]])
        store.set_embeddings(Node, "g", [(extra.uuid, unit(1, 10)[0])])
        top = store.vector_search(Node, "g", unit(1, 10)[0], scope=scope, limit=1)
        assert top[0][0] == extra.uuid
    finally:
        store.close()


def test_an_update_noted_by_the_store_keeps_answers_exact(indexes: VectorIndexes) -> None:
    matrix = unit(500, 11)
    uuids = [f"u{i}" for i in range(500)]
    indexes.search(KEY, uuids, matrix, matrix[0], 10)
    wait_ready(indexes)
    indexes.search(KEY, uuids, matrix, matrix[0], 10)
    grown = np.vstack([matrix, unit(3, 12)])
    grown[7] = unit(1, 13)[0]
    indexes.note_update(KEY, matrix, grown, np.array([7]), 500)
    alignment = indexes._alignments[KEY]
    assert alignment.matrix is grown and sorted(alignment.delta.tolist()) == [7, 500, 501, 502]
    for q in (matrix[7], grown[7], grown[501], matrix[3]):
        found = indexes.search(KEY, [*uuids, "a", "b", "c"], grown, q, 10)
        assert found is not None
        assert [r for r, _ in found] == exact(grown, q, 10)


def test_cached_matrices_catch_up_with_writes(tmp_path: Path) -> None:
    store = open_store(tmp_path / "catch-up.db")
    try:
        nodes = add_nodes(store, [["Entity"]] * 6)
        vectors = unit(8, 14)
        store.set_embeddings(Node, "g", [(n.uuid, vectors[i]) for i, n in enumerate(nodes[:4])])
        before = store.vector_search(Node, "g", vectors[0], scope={"graph_uuid": "g"})
        assert len(before) == 4

        def check() -> None:
            fresh = open_store(tmp_path / "catch-up.db")
            try:
                for q in vectors:
                    got = store.vector_search(Node, "g", q, scope={"graph_uuid": "g"})
                    want = fresh.vector_search(Node, "g", q, scope={"graph_uuid": "g"})
                    assert [u for u, _ in got] == [u for u, _ in want]
                    assert [s for _, s in got] == pytest.approx([s for _, s in want])
            finally:
                fresh.close()

        store.set_embeddings(Node, "g", [(nodes[4].uuid, vectors[4])])  # added
        store.set_embeddings(Node, "g", [(nodes[0].uuid, vectors[6]), (nodes[5].uuid, vectors[5])])
        caught_up = []
        real = store._vectors._catch_up  # type: ignore[attr-defined]

        def spy(*args: object) -> object:
            caught_up.append(real(*args))
            return caught_up[-1]

        store._vectors._catch_up = spy  # type: ignore[attr-defined]
        check()
        assert len(caught_up) == 1 and caught_up[0] is not None  # no reload
        with pytest.raises(RuntimeError), store.transaction():
            store.set_embeddings(Node, "g", [(nodes[1].uuid, vectors[7])])
            raise RuntimeError("never committed")

        check()
        store.delete_embeddings(Node, "g", [nodes[2].uuid])  # not logged: reloaded
        check()
        store.set_embeddings(Node, "g", [(nodes[2].uuid, vectors[2])])
        check()
    finally:
        store.close()


def test_filtered_search_on_an_index_matches_exact_search(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(vector_index, "ANN_MIN_ROWS", 150)
    monkeypatch.setattr(matrix_search, "POST_FILTER_FETCH", 60)
    store = open_store(tmp_path / "filtered.db")
    try:
        labels = [
            ["Entity", "Common" if i % 2 else "Rare" if i % 50 == 0 else "Other"]
            for i in range(300)
        ]
        nodes, matrix = indexed_nodes(store, labels, 15)
        queries = unit(10, 16)
        # 1,000 nearest stand for 60 here: "Common" passes half of them (a page of 40
        # needs a second, larger fetch), "Rare" 6 rows in all (scored exactly).
        for label, limit in (("Common", 10), ("Common", 40), ("Rare", 10)):
            rows = [i for i, n in enumerate(nodes) if label in n.labels]
            for q in queries:
                got = store.vector_search(
                    Node,
                    "g",
                    q,
                    scope={"graph_uuid": "g"},
                    where=HasAnyLabel((label,)),
                    limit=limit,
                )
                best = sorted(rows, key=lambda i: -float(matrix[i] @ q))[:limit]
                assert [u for u, _ in got] == [nodes[i].uuid for i in best]
    finally:
        store.close()


def test_a_filter_of_a_few_uuids_is_scored_exactly_without_the_index(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(vector_index, "ANN_MIN_ROWS", 150)
    store = open_store(tmp_path / "bounded.db")
    try:
        nodes, matrix = indexed_nodes(store, [["Entity"] for _ in range(300)], 17)
        queries = unit(5, 18)

        def no_index(*args: object, **kwargs: object) -> None:
            raise AssertionError("a bounded filter searched the index")

        monkeypatch.setattr(store._ann, "search", no_index)  # type: ignore[attr-defined]
        rows = list(range(3, 300, 37))
        allowed = Column("uuid", "in", tuple(nodes[i].uuid for i in rows))
        for q in queries:
            got = store.vector_search(Node, "g", q, scope={"graph_uuid": "g"}, where=allowed)
            best = sorted(rows, key=lambda i: -float(matrix[i] @ q))
            assert [u for u, _ in got] == [nodes[i].uuid for i in best]
            want = [float(matrix[i] @ q) for i in best]
            assert [s for _, s in got] == pytest.approx(want, abs=1e-6)
    finally:
        store.close()
