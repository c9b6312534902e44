"""The texts an episode is searched by, as pure functions: its context (the messages before
it), its reply, its facts, and the text its vector stands for."""

from __future__ import annotations

import random

from graphrecall.domain.models import Edge, Episode
from graphrecall.graph_model import indexed_text as it
from graphrecall.store.sqlite import migrations

STAMP = "2026-01-01T00:00:00.000000Z"


def _message(n: int, text: str, who: str | None = "Ann", thread: str = "t") -> Episode:
    return Episode(
        uuid=f"m{n:03d}",
        graph_uuid="g",
        content=text,
        source="message",
        role="user",
        role_name=who,
        reference_time="2023-05-08T13:56:00.000000Z",
        created_at=f"2026-01-01T00:{n // 60:02d}:{n % 60:02d}.000000Z",
        thread_uuid=thread,
    )


def _edge(uuid: str, fact: str, created_at: str = STAMP) -> Edge:
    return Edge(
        uuid=uuid,
        graph_uuid="g",
        name="R",
        fact=fact,
        source_node_uuid="a",
        target_node_uuid="b",
        created_at=created_at,
        updated_at=created_at,
    )


def test_a_message_is_said_by_its_speaker() -> None:
    assert it.said(_message(1, "hi")) == "Ann: hi"
    assert it.said(_message(1, "hi", who=None)) == "hi"
    assert it.said(_message(1, "hi", who="")) == "hi"


def test_context_is_the_start_of_the_two_previous_messages_newest_first() -> None:
    a, b, c = _message(1, "a" * 500), _message(2, "second"), _message(3, "third")
    assert it.context_text([]) is None
    assert it.context_text([b]) == "Ann: second"
    assert it.context_text([c, b, a]) == "Ann: third\nAnn: second"
    cut = it.context_text([a])
    assert cut == ("Ann: " + "a" * 500)[: it.CONTEXT_CHARS] and len(cut) == 300


def test_the_reply_is_the_start_of_the_next_message() -> None:
    assert it.reply_text(None) is None
    assert it.reply_text(_message(2, "x" * 400)) == ("Ann: " + "x" * 400)[:300]


def test_facts_are_oldest_first_one_a_line() -> None:
    late = _edge("e1", "Ann moved to Lisbon", "2026-02-01T00:00:00.000000Z")
    tie_b, tie_a = _edge("e3", "Ann likes tea"), _edge("e2", "Ann owns a dog")
    assert it.facts_text([]) is None
    assert it.facts_text([late, tie_b, tie_a]) == (
        "Ann owns a dog\nAnn likes tea\nAnn moved to Lisbon"
    )


def test_a_whole_thread_gives_every_message_its_context_and_reply() -> None:
    chat = [_message(n, f"line {n}") for n in range(1, 5)]
    texts = it.thread_texts(list(reversed(chat)), from_start=True, to_end=True)
    said = [it.said(m) for m in chat]
    assert texts == {
        "m001": {"search_context": None, "search_replies": said[1]},
        "m002": {"search_context": said[0], "search_replies": said[2]},
        "m003": {"search_context": f"{said[1]}\n{said[0]}", "search_replies": said[3]},
        "m004": {"search_context": f"{said[2]}\n{said[1]}", "search_replies": None},
    }


def test_a_run_inside_a_thread_gives_only_what_it_determines() -> None:
    chat = [_message(n, f"line {n}") for n in range(10, 15)]
    texts = it.thread_texts(chat, from_start=False, to_end=False)
    # The first two lack their predecessors, the last its reply.
    assert [sorted(texts[m.uuid]) for m in chat] == [
        ["search_replies"],
        ["search_replies"],
        ["search_context", "search_replies"],
        ["search_context", "search_replies"],
        ["search_context"],
    ]


def test_any_window_agrees_with_the_whole_thread() -> None:
    rng = random.Random(3)
    chat = [_message(n, " ".join(rng.choice("abcdef") * 3 for _ in range(5))) for n in range(40)]
    whole = it.thread_texts(chat, from_start=True, to_end=True)
    for _ in range(100):
        start, end = sorted(rng.sample(range(41), 2))
        window = chat[start:end]
        part = it.thread_texts(window, from_start=start == 0, to_end=end == len(chat))
        for uuid, fields in part.items():
            assert fields.items() <= whole[uuid].items()


def test_the_vector_text_has_the_date_and_the_start_of_the_message_replied_to() -> None:
    message, previous = _message(2, "5 years already!"), _message(1, "q" * 300, who="Mel")
    assert it.vector_text(message, None) == "On 8 May 2023, Ann: 5 years already!"
    assert it.vector_text(message, previous) == (
        "On 8 May 2023, Ann: 5 years already!\n(replying to Mel: " + "q" * 95 + ")"
    )
    undated = message.model_copy(update={"reference_time": "not a time"})
    assert it.vector_text(undated, None) == "Ann: 5 years already!"


def test_the_migrations_backfilled_with_the_same_definition() -> None:
    """Databases upgraded through migrations 7 and 13 hold texts cut the way writers cut
    them now."""
    assert migrations.CONTEXT_MESSAGES == it.CONTEXT_MESSAGES
    assert migrations.CONTEXT_CHARS == it.CONTEXT_CHARS
