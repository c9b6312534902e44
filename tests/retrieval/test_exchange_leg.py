"""The exchange leg of episode search: the first fused candidates each give the other half
of their exchange (a question its reply, the next message of the thread; an assistant's
message the message before it, the user's prompt), and those form one more ranked list
in their order; neither given message may be the assistant's. Run on every store
backend: the leg reads messages and their neighbours through ``Store.exchanges``."""

from __future__ import annotations

import pytest

from graphrecall.domain import predicates as p
from graphrecall.domain.models import Episode, Role
from graphrecall.retrieval.engine import Reranker, SearchRun
from graphrecall.store import Store
from tests.retrieval import episode_search
from tests.store.conformance.records import episode

GRAPH = "g-exchange"
QUERY = "What are the names of James's dogs?"


@pytest.fixture
def store(backend_store: Store) -> Store:
    return backend_store


def _message(
    n: int, text: str, *, thread: str = "t-1", role: Role = "user", who: str = "Sam"
) -> Episode:
    return episode(
        GRAPH,
        text,
        t=n,
        uuid=f"ep-{n}",
        source="message",
        role=role,
        role_name=who,
        thread_uuid=thread,
    )


# The answer shares no word with the question (nor does its speaker's name); the message
# it answers does.
CHAT = [
    _message(1, "I walked the dogs in the park this morning.", who="Sam"),
    _message(2, "This pup is so adorable! What are the names of your dogs?", who="Sam"),
    _message(3, "Max and Daisy.", who="Alex"),
    _message(4, "Lovely pair.", who="Sam"),
]


def _run(
    store: Store,
    exchange: float | None = None,
    reranker: Reranker = "rrf",
    where: p.Predicate | None = None,
    query: str = QUERY,
) -> SearchRun:
    weights = None if exchange is None else {"exchange": exchange}
    return episode_search.search(
        store, GRAPH, query, weights=weights, reranker=reranker, where=where
    )


_order = episode_search.order


def test_the_answer_to_a_matching_question_is_found(store: Store) -> None:
    store.insert(CHAT)
    assert _order(_run(store, exchange=0.0)) == ["ep-2", "ep-1"]  # BM25 alone
    run = _run(store)
    assert "exchange" in run.legs_used
    assert _order(run) == ["ep-2", "ep-1", "ep-3"]
    # Only the reply to a question: ep-1 asks nothing, so ep-2 (its next message) is not
    # added twice, and ep-4 (ep-3's reply) not at all.
    assert "ep-4" not in _order(run)


def test_replies_follow_their_questions_order(store: Store) -> None:
    store.insert(
        [
            _message(1, "What are the names of your dogs, James? And the cat?"),
            _message(2, "Rex.", who="Alex"),
            _message(3, "What names did James give the dogs?", thread="t-2"),
            _message(4, "Max and Daisy.", thread="t-2"),
        ]
    )
    run = _run(store)
    legs = [h.uuid for h in run.hits]
    first, second = legs.index("ep-1"), legs.index("ep-3")
    answers = ("ep-2", "ep-4") if first < second else ("ep-4", "ep-2")
    assert legs.index(answers[0]) < legs.index(answers[1])


def test_a_reply_is_the_next_message_of_the_same_thread(store: Store) -> None:
    # ep-3 is later, but in another thread; the question is its thread's last message.
    store.insert(
        [
            _message(1, "This pup is so adorable! What are the names of your dogs?"),
            _message(3, "Max and Daisy.", thread="t-2"),
        ]
    )
    run = _run(store)
    assert _order(run) == ["ep-1"]
    assert "exchange" not in run.legs_used


PROMPTED = "What was my personal best in the charity race?"


def test_the_users_prompt_of_a_matching_assistant_answer_is_found(store: Store) -> None:
    # The assistant's answer repeats the question's words; the user's fact (the time) is
    # in the message it answers, which shares none.
    store.insert(
        [
            _message(1, "Finished today in 27:12, my fastest ever!"),
            _message(
                2, "Congratulations on a personal best in the charity race!", role="assistant"
            ),
            _message(3, "Thanks."),
        ]
    )
    assert _order(_run(store, exchange=0.0, query=PROMPTED)) == ["ep-2"]
    run = _run(store, query=PROMPTED)
    assert "exchange" in run.legs_used
    assert _order(run) == ["ep-2", "ep-1"]


def test_an_assistant_message_before_an_assistant_message_is_not_given(store: Store) -> None:
    store.insert(
        [
            _message(1, "Here are some tips.", role="assistant"),
            _message(2, "Your personal best in the charity race!", role="assistant"),
        ]
    )
    run = _run(store, query=PROMPTED)
    assert "exchange" not in run.legs_used
    assert _order(run) == ["ep-2"]


def test_neither_side_may_be_the_assistants(store: Store) -> None:
    store.insert(
        [
            _message(1, "What are the names of the dogs you like, James?"),
            _message(2, "Max, Daisy or Bella.", role="assistant"),
            _message(3, "Any other questions about dogs' names?", thread="t-2", role="assistant"),
            _message(4, "Yes, about cats.", thread="t-2"),
        ]
    )
    # ep-1's reply is the assistant's; ep-3 (the assistant's) opens its thread; ep-4, the
    # user's answer to the assistant's question, is not given.
    run = _run(store)
    assert "exchange" not in run.legs_used
    assert set(_order(run)) == {"ep-1", "ep-3"}


def test_a_reply_the_filter_excludes_is_not_added(store: Store) -> None:
    store.insert(CHAT)
    run = _run(store, where=p.Column("uuid", "ne", "ep-3"))
    assert "ep-3" not in _order(run)


def test_without_questions_ranks_and_scores_as_without_the_leg(store: Store) -> None:
    store.insert(
        [
            _message(1, "James named his dogs Max and Daisy."),
            _message(2, "The dogs love the park."),
            _message(3, "Lovely names."),
        ]
    )
    run = _run(store)
    without = _run(store, exchange=0.0)
    assert [(h.uuid, h.score) for h in run.hits] == [(h.uuid, h.score) for h in without.hits]
    assert "exchange" not in run.legs_used


def test_cross_encoder_scores_relevance_alone(store: Store) -> None:
    store.insert(CHAT)
    assert "exchange" not in _run(store, reranker="cross_encoder").legs_used
