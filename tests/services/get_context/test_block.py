"""Packing a context block: lines, layouts, the budget and ``truncated``."""

from __future__ import annotations

import pytest

from graphrecall.domain.models import Node, Observation, ThreadSummary
from graphrecall.services.get_context.block import (
    HEADERS,
    SECTION_ORDER,
    Item,
    Kind,
    Rec,
    SectionLayout,
    TemplateLayout,
    line_of,
    pack,
)
from graphrecall.services.get_context.templates import parse
from tests.services.records import STAMP, edge


def node(name: str, summary: str | None = None, labels: tuple[str, ...] = ("Entity",)) -> Node:
    return Node(
        uuid=f"n-{name}",
        graph_uuid="g",
        name=name,
        labels=list(labels),
        summary=summary,
        created_at=STAMP,
        updated_at=STAMP,
    )


def item(kind: Kind, record: Rec, score: float, slot: int = 0) -> Item:
    return Item(kind, record, score, score, slot=slot, line=line_of(kind, record))


def candidates() -> list[Item]:
    return [
        item("observation", _observation(), 0.9),
        item("edge", edge("Alice works at Acme", valid_at="2021-03-01T00:00:00.000000Z"), 0.8),
        item("node", node("Alice", "A senior engineer.", ("Entity", "Person")), 0.7),
        item("edge", edge("Bob lived in Rome " * 4), 0.6),
        item("thread_summary", _summary(), 0.5),
        item("edge", edge("Carol likes tea"), 0.4),
    ]


def _observation() -> Observation:
    return Observation(
        uuid="o-1",
        graph_uuid="g",
        name="Tea preference",
        summary="Alice prefers green tea in the morning.",
        created_at=STAMP,
        updated_at=STAMP,
    )


def _summary() -> ThreadSummary:
    return ThreadSummary(
        uuid="t-1",
        graph_uuid="g",
        thread_uuid="th",
        summary="Alice and Bob planned a trip.",
        created_at=STAMP,
        last_summarized_episode_valid_at="2026-02-03T10:30:00.000000Z",
    )


def test_lines_carry_dates_labels_and_summaries() -> None:
    assert line_of("edge", edge("A knows B", valid_at="2021-03-01T00:00:00.000000Z")) == (
        "- A knows B (since 2021-03-01)"
    )
    ended = edge(
        "A knew B", valid_at="2021-03-01T12:30:00.000000Z", invalid_at=STAMP, expired_at=STAMP
    )
    assert line_of("edge", ended) == "- A knew B (2021-03-01 12:30 to 2026-01-01)"
    superseded = edge("A met B", expired_at=STAMP)
    assert line_of("edge", superseded) == "- A met B (superseded 2026-01-01)"
    replaced = edge("A met C", valid_at="2021-03-01T00:00:00.000000Z", expired_at=STAMP)
    assert line_of("edge", replaced) == "- A met C (since 2021-03-01, superseded 2026-01-01)"
    assert line_of("edge", edge("A left B", invalid_at=STAMP)) == "- A left B (until 2026-01-01)"
    assert line_of("edge", edge("A likes B")) == "- A likes B"
    assert line_of("node", node("Alice", "Tall.\nKind.", ("Entity", "Person"))) == (
        "- Alice (Person): Tall. Kind."
    )
    assert line_of("node", node("Acme")) == "- Acme"
    assert line_of("observation", _observation()) == (
        "- Tea preference: Alice prefers green tea in the morning."
    )
    assert line_of("thread_summary", _summary()) == (
        "- Alice and Bob planned a trip. (conversation up to 2026-02-03 10:30)"
    )


def test_sections_come_in_a_fixed_order_and_ranks_follow_the_block() -> None:
    packed = pack(candidates(), SectionLayout(), 10_000)
    assert not packed.truncated
    # The observation is the best item, yet facts come first: the order is fixed.
    assert packed.text.startswith("Facts (with the dates they held, in UTC):\n- Alice works")
    headers = [line for line in packed.text.splitlines() if line.endswith(":")]
    assert headers == [
        "Facts (with the dates they held, in UTC):",
        "Entities:",
        "Observations:",
        "Thread summaries:",
    ]
    positions = [packed.text.index(i.line) for i in packed.items]
    assert positions == sorted(positions)
    assert [i.kind for i in packed.items][:4] == ["edge", "edge", "edge", "node"]


def test_the_section_order_does_not_depend_on_scores_or_arrival() -> None:
    """Any scores, any order of the candidates: the same sections in the same order."""
    base = candidates()
    layouts = set()
    for scores in ([0.9, 0.8, 0.7, 0.6, 0.5, 0.4], [0.1, 0.2, 0.3, 0.4, 0.5, 0.6]):
        for order in (base, list(reversed(base))):
            items = [item(i.kind, i.record, s) for i, s in zip(order, scores, strict=True)]
            items.sort(key=lambda i: -i.score)
            text = pack(items, SectionLayout(), 10_000).text
            layouts.add(tuple(line for line in text.splitlines() if line.endswith(":")))
    assert layouts == {
        (
            "Facts (with the dates they held, in UTC):",
            "Entities:",
            "Observations:",
            "Thread summaries:",
        )
    }
    assert sorted(SECTION_ORDER) == sorted(HEADERS)  # every kind has its place


@pytest.mark.parametrize("notice", [None, "Evidence restricted to a window."])
def test_no_budget_is_ever_exceeded_and_truncated_is_exact(notice: str | None) -> None:
    full = pack(candidates(), SectionLayout(notice), 10_000)
    for budget in range(0, len(full.text) + 5):
        packed = pack(candidates(), SectionLayout(notice), budget)
        assert len(packed.text) <= budget
        assert packed.truncated == (len(full.text) > budget)
        if not packed.truncated:
            assert packed.text == full.text


def test_a_long_item_that_does_not_fit_leaves_room_for_shorter_ones() -> None:
    items = candidates()
    long_one = items[3]
    budget = len(pack(items[:3], SectionLayout(), 10_000).text) + len("\n- Carol likes tea")
    packed = pack(items, SectionLayout(), budget)
    assert packed.truncated
    assert long_one not in packed.items
    assert any(i.line.startswith("- Carol likes tea") for i in packed.items)


def test_the_notice_comes_first_and_a_block_without_room_for_it_is_empty() -> None:
    notice = "Evidence restricted to [a, b) UTC."
    packed = pack(candidates(), SectionLayout(notice), 10_000)
    assert packed.text.startswith(notice + "\n\n")
    tiny = pack(candidates(), SectionLayout(notice), len(notice) - 1)
    assert (tiny.text, tiny.truncated, tiny.items) == ("", True, [])


def test_template_slots_keep_the_template_text_and_order() -> None:
    parts = parse("FACTS:\n%{edges}\nPEOPLE:\n%{entities}\nEnd.")
    layout = TemplateLayout(parts)
    slot_of = {"edge": 1, "node": 3}
    items = [i for i in candidates() if i.kind in slot_of]
    for i in items:
        i.slot = slot_of[i.kind]
    packed = pack(items, layout, 10_000)
    assert packed.text == (
        "FACTS:\n"
        "- Alice works at Acme (since 2021-03-01)\n"
        f"- {'Bob lived in Rome ' * 3}Bob lived in Rome\n"
        "- Carol likes tea\n"
        "PEOPLE:\n"
        "- Alice (Person): A senior engineer.\n"
        "End."
    )
    for budget in range(0, len(packed.text) + 2):
        cut = pack(items, layout, budget)
        assert len(cut.text) <= budget
        assert cut.truncated == (budget < len(packed.text))


def test_a_repeated_line_is_written_once_and_both_records_are_selected() -> None:
    first = edge("Alice works at Acme")
    twin = first.model_copy(update={"uuid": "e-twin"})  # the same fact, extracted twice
    other = edge("Bob likes tea")
    budget = len(SectionLayout().render([item("edge", first, 1), item("edge", other, 1)])[0])
    packed = pack(
        [item("edge", first, 0.9), item("edge", twin, 0.8), item("edge", other, 0.7)],
        SectionLayout(),
        budget,
    )
    assert packed.text.count("Alice works at Acme") == 1
    assert "Bob likes tea" in packed.text  # the repeat cost no room
    assert [i.uuid for i in packed.items] == [first.uuid, "e-twin", other.uuid]
    assert not packed.truncated


def test_an_observation_restating_its_name_says_it_once() -> None:
    obs = Observation(
        uuid="o-2",
        graph_uuid="g",
        name="Pattern: Alice swims on Sundays",
        labels=["Pattern"],
        summary="Alice swims on Sundays. (stated 3 times)",
        created_at=STAMP,
        updated_at=STAMP,
    )
    assert line_of("observation", obs) == "- Pattern: Alice swims on Sundays. (stated 3 times)"
    plain = obs.model_copy(update={"name": "Alice", "summary": "Alice swims."})
    assert line_of("observation", plain) == "- Alice swims."
    other = obs.model_copy(update={"name": "Habit", "summary": "Swims."})
    assert line_of("observation", other) == "- Habit: Swims."


def test_an_observation_or_entity_that_only_restates_written_facts_is_not_written() -> None:
    tea = edge("Alice loves green tea")
    swim = edge("Alice swims on Sundays")
    restating = _observation().model_copy(
        update={"uuid": "o-r", "name": "Preference", "summary": "Alice loves green tea. "}
    )
    entity = node("Alice", "Alice loves green tea. Alice swims on Sundays.", ("Entity", "Person"))
    more = node("Bob", "Bob swims on Sundays. Bob plays chess.")
    ahead = _observation().model_copy(update={"uuid": "o-a", "summary": "Alice swims on Sundays"})
    packed = pack(
        [
            item("observation", ahead, 0.95),  # before its fact: written
            item("edge", tea, 0.9),
            item("edge", swim, 0.8),
            item("observation", restating, 0.7),
            item("node", entity, 0.6),
            item("node", more, 0.5),  # says more than the facts: written
        ],
        SectionLayout(),
        10_000,
    )
    assert [i.uuid for i in packed.items if i.repeat] == ["n-Alice", "o-r"]  # block order
    assert {i.uuid for i in packed.items} >= {"o-r", "n-Alice", "o-a", "n-Bob"}  # all selected
    assert "Preference" not in packed.text and "- Alice (Person)" not in packed.text
    assert "- Bob: Bob swims on Sundays. Bob plays chess." in packed.text
    assert "Observations:\n- Tea preference: Alice swims on Sundays" in packed.text


def test_a_section_of_restatements_only_is_not_written() -> None:
    tea = edge("Alice loves green tea")
    restating = _observation().model_copy(update={"summary": "Alice loves green tea."})
    packed = pack(
        [item("edge", tea, 0.9), item("observation", restating, 0.8)], SectionLayout(), 10_000
    )
    assert "Observations:" not in packed.text
    assert [i.repeat for i in packed.items] == [False, True]
