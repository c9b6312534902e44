"""Reciprocal rank fusion: weight / (k + rank) summed over legs, deterministic ties; the
graph scopes fuse with ``GRAPH_RRF_K``, fact search with its own weights and k, memories
with Memory Engine's k = 60."""

from __future__ import annotations

import pytest

from graphrecall.domain import scopes
from graphrecall.domain.models import Episode, Memory
from graphrecall.retrieval import engine
from graphrecall.retrieval.engine import SearchOptions
from graphrecall.retrieval.fusion import RRF_K, rrf
from graphrecall.store import Store


def test_scores_sum_weighted_reciprocal_ranks() -> None:
    fused = dict(rrf({"a": ["x", "y"], "b": ["y"]}, weights={"a": 1.0, "b": 0.5}, k=10))
    assert fused["x"] == pytest.approx(1 / 11)
    assert fused["y"] == pytest.approx(1 / 12 + 0.5 / 11)
    assert dict(rrf({"a": ["x"]}))["x"] == pytest.approx(1 / (RRF_K + 1))


def test_a_small_k_lets_one_legs_top_beat_agreement_deep_in_both() -> None:
    # "top" is first in one leg only; "deep" is 15th in both.
    legs = {
        "bm25": ["top", *(f"b{i}" for i in range(13)), "deep"],
        "vector": [*(f"v{i}" for i in range(14)), "deep"],
    }
    assert rrf(legs, k=60)[0][0] == "deep"
    assert rrf(legs, k=scopes.GRAPH_RRF_K)[0][0] == "top"


def test_fact_search_lets_the_vector_legs_top_beat_a_name_match() -> None:
    # "paraphrase" is the vector leg's first and shares no word with the question;
    # "namesake" shares the person's name: BM25 ranks it third, the vector leg 20th.
    legs = {
        "bm25": ["b0", "b1", "namesake", *(f"b{i}" for i in range(2, 30))],
        "vector": ["paraphrase", *(f"v{i}" for i in range(18)), "namesake"],
    }
    edges = scopes.SCOPES["edges"]
    fused = [u for u, _ in rrf(legs, weights=edges.leg_weights, k=edges.rrf_k)]
    assert fused.index("paraphrase") < fused.index("namesake")
    # With the other graph scopes' constants the name match won (the miss of issue 29).
    old = [u for u, _ in rrf(legs, weights=engine.DEFAULT_LEG_WEIGHTS, k=scopes.GRAPH_RRF_K)]
    assert old.index("namesake") < old.index("paraphrase")


def test_ties_keep_the_first_legs_order() -> None:
    assert [u for u, _ in rrf({"a": ["x", "y"], "b": ["y", "x"]})] == ["x", "y"]
    assert [u for u, _ in rrf({"a": ["y", "x"], "b": ["x", "y"]})] == ["y", "x"]


def test_zero_weight_drops_a_leg() -> None:
    assert [u for u, _ in rrf({"a": ["x"], "b": ["y"]}, weights={"b": 0.0})] == ["x"]


def test_graph_scopes_and_memories_fuse_with_their_own_k(store: Store) -> None:
    store.insert(
        [
            Episode(
                uuid="ep-1",
                graph_uuid="g",
                content="Evan baked bread.",
                source="text",
                reference_time="2026-01-01T00:00:00.000000Z",
                created_at="2026-01-01T00:00:00.000000Z",
            ),
            Memory(
                uuid="m-1",
                space_uuid="s",
                content="Evan baked bread.",
                version_hash="h",
                created_at="2026-01-01T00:00:00.000000Z",
                updated_at="2026-01-01T00:00:00.000000Z",
            ),
        ]
    )
    opts = SearchOptions(query="bread", legs=("bm25",))
    episodes = engine.search(store, None, None, scopes.SCOPES["episodes"], "g", opts)
    assert episodes.hits[0].score == pytest.approx(1 / (scopes.GRAPH_RRF_K + 1))
    assert scopes.SCOPES["edges"].rrf_k == scopes.EDGE_RRF_K
    memories = engine.search(store, None, None, scopes.SCOPES["memories"], "s", opts)
    assert memories.hits[0].score == pytest.approx(1 / (RRF_K + 1))
