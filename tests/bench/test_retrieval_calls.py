"""The benches' in-process baselines rank by their own leg alone."""

from __future__ import annotations

from pathlib import Path

from graphrecall.domain import scopes
from graphrecall.retrieval.text import query_terms
from graphrecall.store import open_store
from graphrecall_bench.retrieval_calls import engine_rankings
from tests.store.conformance.records import episode

GRAPH = "g-baseline"
# A question of an answer kind, and a message that asks something: the answer and
# exchange legs of the shipped search would reorder these.
QUERY = "When did Dave find the car?"
TEXTS = [
    "The car, the car, that car again: Dave and his car?",
    "I found the car last week, and it was in bad shape back then.",
    "The car is red.",
]


def test_the_bm25_baseline_is_the_lexical_leg_alone(tmp_path: Path) -> None:
    db = tmp_path / "db.sqlite"
    store = open_store(db)
    try:
        store.insert(
            [
                episode(GRAPH, text, t=n, uuid=f"ep-{n}", source="message", role="user")
                for n, text in enumerate(TEXTS, start=1)
            ]
        )
        spec = scopes.SCOPES["episodes"]
        lexical = store.text_search(
            spec.kind, {"graph_uuid": GRAPH}, query_terms(QUERY), limit=100, bm25=spec.bm25
        )
    finally:
        store.close()
    ranked = engine_rankings(db, [(GRAPH, QUERY)], page=10, warmup=0)
    assert [u for u, _ in lexical] == ["ep-1", "ep-3", "ep-2"]
    assert ranked["bm25"][0][1] == ["ep-1", "ep-3", "ep-2"]
