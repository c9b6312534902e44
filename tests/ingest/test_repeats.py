"""A thread's summary says each thing once: a fact it already states, or nearly, adds no
point; a fact that says the opposite (a negation) is a point of its own."""

from __future__ import annotations

import pytest

from graphrecall.domain.models import Edge, Episode
from graphrecall.ingest.derive import thread_summary
from graphrecall.ingest.repeats import one_line, said, same_statement
from graphrecall.store.base import Store

NOW = "2025-04-01T10:00:00Z"


@pytest.mark.parametrize(
    ("a", "b", "same"),
    [
        ("Mila adopted a greyhound", "mila adopted a greyhound!", True),
        ("Mila adopted a greyhound", "Mila  adopted\na greyhound.", True),
        ("Rafael coaches the under-12 team", "Rafael coaches the under-12 team now", True),
        ("Rafael works at Brightline", "Rafael no longer works at Brightline", False),
        ("Rafael works at Brightline", "Rafael doesn't work at Brightline", False),
        ("Mila adopted a greyhound", "Mila adopted a greyhound named Pixel in May", False),
        ("Mila visited Oslo", "Mila visited Bergen", False),
    ],
)
def test_same_statement(a: str, b: str, same: bool) -> None:
    assert same_statement(a, b) is same
    assert said([a], b) is same


def test_one_line() -> None:
    assert one_line("Mila adopted\n  a greyhound. ") == "Mila adopted a greyhound"


def _episode(n: int) -> Episode:
    return Episode(
        uuid=f"ep-{n}",
        graph_uuid="g-1",
        content="...",
        source="message",
        reference_time=f"2025-04-0{n}T10:00:00Z",
        created_at=NOW,
        thread_uuid="th-1",
    )


def _edge(n: int, fact: str) -> Edge:
    return Edge(
        uuid=f"e-{n}",
        graph_uuid="g-1",
        name="RELATES_TO",
        fact=fact,
        source_node_uuid="n-1",
        target_node_uuid="n-2",
        created_at=NOW,
        updated_at=NOW,
    )


def test_a_thread_summary_never_repeats_a_sentence(store: Store) -> None:
    thread_summary(store, _episode(1), [_edge(1, "Mila adopted a greyhound")], ["Mila"])
    # Later messages: the same statement again (cased, punctuated, split over lines, one
    # word more), a new one, and the opposite of the first.
    thread_summary(
        store,
        _episode(2),
        [
            _edge(2, "mila adopted a greyhound!"),
            _edge(3, "Mila adopted\na greyhound."),
            _edge(4, "Mila adopted a greyhound too"),
            _edge(5, "Mila trains for a half marathon"),
        ],
        ["Mila"],
    )
    summary = thread_summary(
        store, _episode(3), [_edge(6, "Mila no longer trains for a half marathon")], ["Mila"]
    )
    assert summary is not None
    assert summary.summary == (
        "Conversation with Mila.\n"
        "- Mila adopted a greyhound.\n"
        "- Mila trains for a half marathon.\n"
        "- Mila no longer trains for a half marathon."
    )
