"""Hop distances over a graph's adjacency arrays (``retrieval.graph.hop_distances``)."""

from __future__ import annotations

import random
from collections import deque
from typing import cast

from graphrecall.retrieval import graph
from graphrecall.store.adjacency import Adjacency
from graphrecall.store.base import Store


class _Graph:
    """What hop_distances reads of a store: one graph's adjacency."""

    def __init__(self, ends: list[tuple[str, str]]) -> None:
        self.adjacency = Adjacency.from_edges(ends)

    def graph_adjacency(self, graph_uuid: str) -> Adjacency:
        return self.adjacency


def _bfs(ends: list[tuple[str, str]], start: str, depth: int) -> dict[str, int]:
    around: dict[str, set[str]] = {}
    for a, b in ends:
        around.setdefault(a, set()).add(b)
        around.setdefault(b, set()).add(a)
    seen, queue = {start: 0}, deque([start])
    while queue:
        node = queue.popleft()
        if seen[node] == depth:
            continue
        for nxt in around.get(node, ()):
            if nxt not in seen:
                seen[nxt] = seen[node] + 1
                queue.append(nxt)
    return seen


def _hub_graph(seed: int) -> list[tuple[str, str]]:
    """A hub touching a third of the edges (as a user's node does), the rest random."""
    rng = random.Random(seed)
    nodes = [f"n{i}" for i in range(400)]
    return [
        ("n0", rng.choice(nodes)) if i % 3 == 0 else (rng.choice(nodes), rng.choice(nodes))
        for i in range(900)
    ]


def test_distances_are_those_of_a_plain_breadth_first_search() -> None:
    for seed in range(5):
        ends = _hub_graph(seed)
        store = cast(Store, _Graph(ends))
        for start, depth in (("n0", 64), ("n7", 2), ("n123", 64)):
            got = graph.hop_distances(store, "g", [start], max_depth=depth)
            expected = _bfs(ends, start, depth)
            assert all(got[n] == expected[n] for n in got)
            assert set(got) == set(expected)  # 400 nodes: under MAX_BFS_NODES


def test_only_the_wanted_nodes_are_returned_once_all_are_found() -> None:
    ends = _hub_graph(9)
    store = cast(Store, _Graph(ends))
    expected = _bfs(ends, "n5", 64)
    wanted = {"n0", "n17", "n300", "unknown"}
    got = graph.hop_distances(store, "g", ["n5"], max_depth=64, stop_when_found=wanted)
    assert got == {"n5": 0, **{n: expected[n] for n in wanted if n in expected and n != "n5"}}
