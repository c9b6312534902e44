"""The retrieval core's per-scope declarations reach the store: episode search scores its
lexical leg with the episode BM25 constants, other scopes with the standard ones."""

from __future__ import annotations

from graphrecall.domain import scopes
from graphrecall.domain.ids import new_id
from graphrecall.domain.models import Edge, Episode
from graphrecall.domain.scopes import STANDARD_BM25
from graphrecall.retrieval import engine
from graphrecall.store import Store
from tests.store.sqlite.facts import insert_facts, messages

GRAPH = "g-engine"
TEXTS = ["jordan jordan jordan", "jordan piano", *(["piano lesson"] * 8)]
TEXTS += [f"{a} {b}" for a in ("court", "lisbon", "trip", "moving") for b in ("cat", "dog")]


def lexical(store: Store, scope: str) -> dict[str, float]:
    opts = engine.SearchOptions(query="Jordan's piano?", legs=("bm25",))
    run = engine.search(store, None, None, scopes.SCOPES[scope], GRAPH, opts)
    return run.leg_scores["bm25"]


def test_episode_search_scores_its_lexical_leg_with_the_episode_constants(store: Store) -> None:
    messages(store, TEXTS, new_id(), GRAPH)
    scope, terms = {"graph_uuid": GRAPH}, ["jordan", "piano"]
    standard = dict(store.text_search(Episode, scope, terms, bm25=STANDARD_BM25))
    episode = dict(store.text_search(Episode, scope, terms, bm25=scopes.EPISODE_BM25))
    assert scopes.EPISODE_BM25 != STANDARD_BM25 and episode != standard
    assert lexical(store, "episodes") == episode


def test_fact_search_keeps_the_standard_constants(store: Store) -> None:
    insert_facts(store, TEXTS, GRAPH)
    scope, terms = {"graph_uuid": GRAPH}, ["jordan", "piano"]
    assert lexical(store, "edges") == dict(store.text_search(Edge, scope, terms))
