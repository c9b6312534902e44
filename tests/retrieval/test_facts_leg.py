"""The facts leg of episode search: the messages that stated the facts nearest the query
vector, ranked by their nearest fact, under the search's own filters."""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence

import numpy as np

from graphrecall.domain import predicates as p
from graphrecall.domain import scopes
from graphrecall.domain.models import Edge, Episode
from graphrecall.ml.embedder import Matrix
from graphrecall.retrieval import engine
from graphrecall.retrieval.engine import SearchOptions
from graphrecall.store import Store

GRAPH = "g-facts"
STAMP = "2026-01-01T00:00:00.000000Z"
DIM = 8


def _unit(*weights: float) -> np.ndarray:
    v = np.zeros(DIM, dtype=np.float32)
    v[: len(weights)] = weights
    return v / np.linalg.norm(v)


QUERY = _unit(1.0)


class _Fixed:
    """An embedder that maps every text to the query vector."""

    dim = DIM
    model_id = "fixed"

    def embed(self, texts: Sequence[str]) -> Matrix:
        return np.stack([QUERY for _ in texts])


def _setup(store: Store) -> None:
    episodes = [
        Episode(
            uuid=f"ep-{n}",
            graph_uuid=GRAPH,
            content=f"message {n}",
            source="text",
            reference_time=STAMP,
            created_at=f"2026-01-01T00:00:0{n}.000000Z",
        )
        for n in range(1, 5)
    ]
    # ep-3's own vector is the farthest from the query, but it stated the nearest fact.
    vectors = {"ep-1": _unit(0.8, 0.6), "ep-2": _unit(0.9, 0.44), "ep-3": _unit(0.1, 1.0)}
    vectors["ep-4"] = _unit(0.5, 0.87)
    facts = [("f-3", "ep-3", _unit(1.0, 0.05))]
    store.insert(episodes)
    store.insert(
        [
            Edge(
                uuid=uuid,
                graph_uuid=GRAPH,
                name="REL",
                fact=f"fact of {episode}",
                source_node_uuid="a",
                target_node_uuid="b",
                created_at=STAMP,
                updated_at=STAMP,
            )
            for uuid, episode, _ in facts
        ]
    )
    for uuid, episode, _ in facts:
        store.link_episodes(Edge, GRAPH, uuid, [episode])
    store.set_embeddings(Episode, GRAPH, list(vectors.items()))
    store.set_embeddings(Edge, GRAPH, [(uuid, vector) for uuid, _, vector in facts])


def _search(
    store: Store,
    spec: scopes.SearchScope,
    legs: tuple[str, ...] = ("vector",),
    where: p.Predicate | None = None,
) -> engine.SearchRun:
    opts = SearchOptions(query="q", legs=legs, where=where)
    return engine.search(store, _Fixed(), None, spec, GRAPH, opts)


def test_a_message_rises_by_the_fact_it_stated(store: Store) -> None:
    _setup(store)
    episodes = scopes.SCOPES["episodes"]
    without = _search(store, dataclasses.replace(episodes, facts_leg=False))
    assert [h.uuid for h in without.hits] == ["ep-2", "ep-1", "ep-4", "ep-3"]
    run = _search(store, episodes)
    assert "facts" in run.legs_used
    # Vector rank 4 at 0.5 plus facts rank 1 at 0.15 beats vector rank 1 alone.
    assert [h.uuid for h in run.hits] == ["ep-3", "ep-2", "ep-1", "ep-4"]


def test_the_facts_leg_keeps_to_the_searchs_filters(store: Store) -> None:
    _setup(store)
    allowed = p.Column("uuid", "in", ("ep-1", "ep-2", "ep-4"))
    run = _search(store, scopes.SCOPES["episodes"], where=allowed)
    # RRF unions its legs: a facts leg that ignored the filter would bring ep-3 in.
    assert [h.uuid for h in run.hits] == ["ep-2", "ep-1", "ep-4"]


def test_only_episode_search_with_a_vector_leg_has_it(store: Store) -> None:
    _setup(store)
    assert "facts" not in _search(store, scopes.SCOPES["edges"]).legs_used
    lexical = _search(store, scopes.SCOPES["episodes"], legs=("bm25",))
    assert "facts" not in lexical.legs_used
