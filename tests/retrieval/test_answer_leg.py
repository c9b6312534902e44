"""The answer leg of episode search: when the query asks for a time, a sum of money, a
length of time or a place, those of the first fused candidates whose text mentions one
form one more ranked list, in their fused order. Run on every store backend: the leg reads
the candidates' text through ``Store.find``."""

from __future__ import annotations

import pytest

from graphrecall.domain import predicates as p
from graphrecall.domain.models import Episode
from graphrecall.retrieval.engine import Reranker, SearchRun
from graphrecall.store import Store
from tests.retrieval import episode_search
from tests.store.conformance.records import episode

GRAPH = "g-answer"
WHEN = "When did Dave find the car?"


def _message(n: int, text: str) -> Episode:
    return episode(
        GRAPH, text, t=n, uuid=f"ep-{n}", source="message", role="user", role_name="Dave"
    )


# BM25 ranks the message that says "car" three times first; the one that says when ranks
# last of the three (longer than ep-3, one "car").
CHAT = [
    _message(1, "The car, the car, that car again: Dave and his car."),
    _message(2, "I found the car last week, and it was in bad shape back then."),
    _message(3, "The car is red."),
]


def _run(
    store: Store,
    query: str = WHEN,
    answer: float | None = None,
    reranker: Reranker = "rrf",
    where: p.Predicate | None = None,
) -> SearchRun:
    weights = None if answer is None else {"answer": answer}
    return episode_search.search(
        store, GRAPH, query, weights=weights, reranker=reranker, where=where
    )


_order = episode_search.order


@pytest.fixture
def store(backend_store: Store) -> Store:
    backend_store.insert(CHAT)
    return backend_store


def test_the_message_that_says_when_rises_for_a_when_question(store: Store) -> None:
    assert _order(_run(store, answer=0.0)) == ["ep-1", "ep-3", "ep-2"]  # BM25 alone
    run = _run(store)
    assert "answer" in run.legs_used
    assert _order(run) == ["ep-2", "ep-1", "ep-3"]


def test_a_question_of_another_form_ranks_as_without_the_leg(store: Store) -> None:
    run = _run(store, query="What did Dave find about the car?")
    assert "answer" not in run.legs_used
    assert _order(run) == _order(_run(store, query="What did Dave find about the car?", answer=0))


def test_no_candidate_holding_an_answer_adds_no_leg(store: Store) -> None:
    run = _run(store, query="Where did Dave find the car?")
    assert "answer" not in run.legs_used
    assert _order(run) == ["ep-1", "ep-3", "ep-2"]


def test_the_leg_reorders_only_what_the_filter_let_through(store: Store) -> None:
    run = _run(store, where=p.Column("uuid", "ne", "ep-2"))
    assert _order(run) == ["ep-1", "ep-3"]


def test_the_cross_encoder_reranker_ignores_the_leg(store: Store) -> None:
    run = _run(store, reranker="cross_encoder")
    assert "answer" not in run.legs_used
