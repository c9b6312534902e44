"""Adjacency arrays (store/adjacency.py) and the SQLite store's cached copy of them."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from graphrecall.domain import clock
from graphrecall.domain.ids import new_id
from graphrecall.domain.models import Edge
from graphrecall.retrieval.graph import hop_distances
from graphrecall.store import open_store
from graphrecall.store.adjacency import Adjacency


def test_rows_list_each_edge_under_both_ends() -> None:
    adj = Adjacency.from_edges([("a", "b"), ("a", "c"), ("c", "d"), ("b", "a")])

    def names(node: str) -> list[str]:
        rows = adj.neighbours(np.array([adj.row_of[node]]))
        return sorted(adj.nodes[int(r)] for r in rows)

    assert names("a") == ["b", "b", "c"]
    assert names("d") == ["c"]
    both = adj.neighbours(np.array([adj.row_of["b"], adj.row_of["d"]]))
    assert sorted(adj.nodes[int(r)] for r in both) == ["a", "a", "c"]
    assert adj.neighbours(np.zeros(0, dtype=np.int64)).size == 0


def fact(graph: str, source: str, target: str) -> Edge:
    stamp = clock.now()
    return Edge(
        uuid=new_id(),
        graph_uuid=graph,
        name="REL",
        fact=f"{source} {target}",
        source_node_uuid=source,
        target_node_uuid=target,
        created_at=stamp,
        updated_at=stamp,
    )


def test_cached_adjacency_follows_every_kind_of_edge_write(tmp_path: Path) -> None:
    store = open_store(tmp_path / "adjacency.db")
    try:
        g = "g"
        chain = [fact(g, "a", "b"), fact(g, "b", "c"), fact(g, "c", "d")]
        store.insert(chain)
        assert hop_distances(store, g, ["a"], max_depth=10) == {"a": 0, "b": 1, "c": 2, "d": 3}
        assert store.graph_adjacency(g) is store.graph_adjacency(g)  # cached
        shortcut = fact(g, "a", "d")
        store.insert([shortcut])  # a new edge
        assert hop_distances(store, g, ["a"], max_depth=10)["d"] == 1
        store.update(shortcut.model_copy(update={"expired_at": clock.now()}))  # expired
        assert hop_distances(store, g, ["a"], max_depth=10)["d"] == 3
        store.delete(Edge, {"uuid": chain[1].uuid})  # deleted
        assert hop_distances(store, g, ["a"], max_depth=10) == {"a": 0, "b": 1}
        with pytest.raises(RuntimeError), store.transaction():
            store.insert([fact(g, "b", "z")])
            assert hop_distances(store, g, ["a"], max_depth=10)["z"] == 2  # seen inside
            raise RuntimeError("roll back")
        assert "z" not in hop_distances(store, g, ["a"], max_depth=10)  # and undone
        # Early stop once the wanted nodes are reached; unknown start nodes stay at 0.
        assert hop_distances(store, g, ["a", "x"], max_depth=10, stop_when_found={"b"}) == {
            "a": 0,
            "x": 0,
            "b": 1,
        }
    finally:
        store.close()
