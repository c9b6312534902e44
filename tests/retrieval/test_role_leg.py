"""The role leg of episode search: when some candidates are the assistant's, the others
(the user's messages, episodes of no role) form one more ranked list, in their fused
order. It only reorders, and a graph without assistant messages ranks (orders and scores)
exactly as without it."""

from __future__ import annotations

from graphrecall.domain import scopes
from graphrecall.domain.models import Episode, Role
from graphrecall.retrieval import engine
from graphrecall.retrieval.engine import Reranker, SearchOptions, SearchRun
from graphrecall.store import Store

GRAPH = "g-role"
QUERY = "Which sourdough starter did I buy?"


def _episode(n: int, role: Role | None, text: str) -> Episode:
    return Episode(
        uuid=f"ep-{n}",
        graph_uuid=GRAPH,
        content=text,
        source="message" if role else "text",
        role=role,
        reference_time=f"2026-01-01T00:00:{n:02d}.000000Z",
        created_at=f"2026-01-01T00:00:{n:02d}.000000Z",
    )


# The assistant's answer repeats the question's words; the user's turn holds the answer.
MIXED = [
    _episode(1, "user", "I bought a sourdough starter from the farmers market."),
    _episode(
        2,
        "assistant",
        "A sourdough starter needs feeding: keep your sourdough starter warm, feed the"
        " starter daily, and a sourdough starter you buy dried needs a week.",
    ),
    _episode(3, "assistant", "Happy baking!"),
]


def _run(store: Store, role_weight: float | None = None, reranker: Reranker = "rrf") -> SearchRun:
    weights = None
    if role_weight is not None:
        weights = {**engine.DEFAULT_LEG_WEIGHTS, "role": role_weight}
    opts = SearchOptions(query=QUERY, legs=("bm25",), weights=weights, reranker=reranker)
    return engine.search(store, None, None, scopes.SCOPES["episodes"], GRAPH, opts)


def _order(run: SearchRun) -> list[str]:
    return [h.uuid for h in run.hits]


def test_the_users_message_outranks_an_assistant_answer_repeating_the_words(
    store: Store,
) -> None:
    store.insert(MIXED)
    assert _order(_run(store, role_weight=0.0)) == ["ep-2", "ep-1"]  # BM25 alone
    run = _run(store)
    assert _order(run) == ["ep-1", "ep-2"]
    assert "role" in run.legs_used
    # It only reorders: nothing that matched no other leg is added.
    assert "ep-3" not in _order(run)


def test_an_episode_of_no_role_counts_as_not_the_assistants(store: Store) -> None:
    store.insert([MIXED[1], _episode(4, None, "Receipt: sourdough starter, farmers market.")])
    assert _order(_run(store, role_weight=0.0))[0] == "ep-2"
    assert _order(_run(store))[0] == "ep-4"


def test_without_assistant_messages_ranks_and_scores_as_without_the_leg(store: Store) -> None:
    # One user's messages and a text episode: no candidate is the assistant's.
    store.insert(
        [
            MIXED[0],
            MIXED[1].model_copy(update={"role": "user"}),
            _episode(4, None, "Receipt: sourdough starter, farmers market."),
        ]
    )
    run = _run(store)
    without = _run(store, role_weight=0.0)
    assert [(h.uuid, h.score) for h in run.hits] == [(h.uuid, h.score) for h in without.hits]
    assert len(run.hits) == 3
    assert "role" not in run.legs_used


def test_cross_encoder_scores_relevance_alone(store: Store) -> None:
    store.insert(MIXED)
    assert "role" not in _run(store, reranker="cross_encoder").legs_used


def test_other_scopes_have_no_role_leg() -> None:
    assert scopes.SCOPES["episodes"].demoted_role == "assistant"
    others = [s for name, s in scopes.SCOPES.items() if name != "episodes"]
    assert all(s.demoted_role is None for s in others)
