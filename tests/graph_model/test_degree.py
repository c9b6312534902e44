"""A node's degree as pure functions: which nodes an edge counts for, and how writing an
edge moves them."""

from __future__ import annotations

from collections import Counter

from graphrecall.domain.models import Edge
from graphrecall.graph_model.degree import degree_changes, degrees, ends
from tests.store.sqlite.test_degree import STAMP
from tests.store.sqlite.test_degree import _edge as edge


def _edge(source: str, target: str, *, expired: bool = False, graph: str = "g") -> Edge:
    return edge("e", source, target, expired=expired, graph=graph)


def test_a_live_edge_counts_once_per_end() -> None:
    assert ends(_edge("a", "b")) == [("g", "a"), ("g", "b")]
    assert ends(_edge("a", "a")) == [("g", "a"), ("g", "a")]
    assert ends(_edge("a", "b", expired=True)) == []


def test_degrees_of_a_set_of_edges() -> None:
    edges = [
        _edge("a", "b"),
        _edge("a", "a"),
        _edge("b", "c", expired=True),
        _edge("a", "x", graph="h"),
    ]
    assert degrees(edges) == Counter({("g", "a"): 3, ("g", "b"): 1, ("h", "a"): 1, ("h", "x"): 1})


def test_each_change_of_an_edge_moves_its_ends() -> None:
    live, expired = _edge("a", "b"), _edge("a", "b", expired=True)
    assert degree_changes(None, live) == {("g", "a"): 1, ("g", "b"): 1}
    assert degree_changes(live, None) == {("g", "a"): -1, ("g", "b"): -1}
    assert degree_changes(None, expired) == {} == degree_changes(expired, None)
    assert degree_changes(live, expired) == {("g", "a"): -1, ("g", "b"): -1}  # expired
    assert degree_changes(expired, live) == {("g", "a"): 1, ("g", "b"): 1}  # brought back
    refacted = live.model_copy(update={"fact": "changed", "valid_at": STAMP})
    assert degree_changes(live, refacted) == {}
    assert degree_changes(live, _edge("a", "c")) == {("g", "b"): -1, ("g", "c"): 1}
    assert degree_changes(live, _edge("a", "a")) == {("g", "a"): 1, ("g", "b"): -1}
    moved = live.model_copy(update={"graph_uuid": "h"})
    assert degree_changes(live, moved) == {
        ("g", "a"): -1,
        ("g", "b"): -1,
        ("h", "a"): 1,
        ("h", "b"): 1,
    }
