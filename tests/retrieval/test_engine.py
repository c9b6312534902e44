"""The retrieval core's per-scope declarations reach the store: episode search scores its
lexical leg with the episode BM25 constants, other scopes with the standard ones. What one
request's searches share (``engine.Shared``) is computed once."""

from __future__ import annotations

import threading
import time
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import numpy as np
import pytest

from graphrecall.domain import scopes
from graphrecall.domain.ids import new_id
from graphrecall.domain.models import Edge, Episode, Record
from graphrecall.domain.scopes import STANDARD_BM25
from graphrecall.ml.embedder import EmbedderUnavailable, Matrix
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


def test_shared_computes_a_value_once_for_threads_that_ask_at_once() -> None:
    shared, calls, started = engine.Shared(), [], threading.Event()

    def slow() -> int:
        calls.append(1)
        started.set()
        time.sleep(0.05)
        return 42

    with ThreadPoolExecutor(4) as pool:
        first = pool.submit(shared.once, "k", slow)
        started.wait()
        others = [pool.submit(shared.once, "k", slow) for _ in range(3)]
        assert [f.result() for f in (first, *others)] == [42] * 4
    assert len(calls) == 1
    assert shared.once("other", lambda: 7) == 7


def test_shared_hands_a_failure_to_every_caller() -> None:
    shared = engine.Shared()

    def broken() -> int:
        raise EmbedderUnavailable("no model")

    for _ in range(2):
        with pytest.raises(EmbedderUnavailable):
            shared.once("k", broken)


def _unit(seed: int) -> np.ndarray:
    v = np.random.default_rng(seed).standard_normal(8).astype(np.float32)
    return v / np.linalg.norm(v)


class _Seeded:
    """Each text's vector from a hash of it: deterministic, different per text."""

    dim = 8
    model_id = "seeded"

    def embed(self, texts: Sequence[str]) -> Matrix:
        return np.stack([_unit(sum(t.encode())) for t in texts])


def test_a_requests_searches_share_the_unfiltered_nearest_facts(
    store: Store, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The facts leg of message search asks for the same nearest facts as the fact search
    of the same request: with a Shared they are searched once, and rank the same."""
    thread = new_id()
    episodes = messages(store, TEXTS, thread, GRAPH)
    facts = insert_facts(store, TEXTS, GRAPH)
    for fact, episode in zip(facts, episodes, strict=True):
        store.link_episodes(Edge, GRAPH, fact, [episode])
    store.set_embeddings(Edge, GRAPH, [(u, _unit(i)) for i, u in enumerate(facts)])
    store.set_embeddings(Episode, GRAPH, [(u, _unit(100 + i)) for i, u in enumerate(episodes)])
    searched: list[str] = []
    vector_search = store.vector_search

    def counted(kind: type[Record], *args: Any, **kwargs: Any) -> list[tuple[str, float]]:
        searched.append(kind.__name__)
        return vector_search(kind, *args, **kwargs)

    monkeypatch.setattr(store, "vector_search", counted)
    opts = engine.SearchOptions(query="Jordan's piano?", candidates=30, limit=30)

    def both(shared: engine.Shared | None) -> list[list[str]]:
        return [
            [h.uuid for h in engine.search(store, _Seeded(), None, spec, GRAPH, opts, shared).hits]
            for spec in (scopes.SCOPES["edges"], scopes.SCOPES["episodes"])
        ]

    alone = both(None)
    assert sorted(searched) == ["Edge", "Edge", "Episode"]
    searched.clear()
    assert both(engine.Shared()) == alone
    assert sorted(searched) == ["Edge", "Episode"]
