"""The offline extractor on sentences of the kind agents see."""

from __future__ import annotations

import pytest

from graphrecall.ml.extraction import Extraction, ExtractionInput
from graphrecall.ml.offline_extractor import OfflineExtractor, relation_name, third_person

REF = "2026-11-25T15:00:00Z"


@pytest.fixture(scope="module")
def extractor() -> OfflineExtractor:
    return OfflineExtractor()


def run(extractor: OfflineExtractor, text: str, speaker: str | None = "Alice") -> Extraction:
    return extractor.extract([ExtractionInput(text=text, speaker=speaker, reference_time=REF)])[0]


def triples(extraction: Extraction) -> set[tuple[str, str, str]]:
    return {(f.source, f.relation, f.target) for f in extraction.facts}


def test_first_person_is_the_speaker_and_relations_are_upper_snake(
    extractor: OfflineExtractor,
) -> None:
    result = run(extractor, "I just moved to Lisbon last Tuesday and I work at Acme now.")
    assert triples(result) == {("Alice", "MOVES_TO", "Lisbon"), ("Alice", "WORKS_AT", "Acme")}
    move = next(f for f in result.facts if f.relation == "MOVES_TO")
    assert (
        move.fact == "Alice just moved to Lisbon last Tuesday" and move.valid_at == "last Tuesday"
    )
    work = next(f for f in result.facts if f.relation == "WORKS_AT")
    assert work.fact == "Alice works at Acme now"
    labels = {e.name: e.label for e in result.entities}
    assert labels["Lisbon"] == "Location" and labels["Acme"] == "Organization"


def test_possessives_appositions_and_nested_places(extractor: OfflineExtractor) -> None:
    result = run(
        extractor,
        "My sister Jane lives in Boston and works as a nurse at Mass General.",
        speaker="Bob",
    )
    assert {
        ("Jane", "LIVES_IN", "Boston"),
        ("Jane", "WORKS_AS", "nurse"),
        ("Jane", "WORKS_AT", "Mass General"),
    } <= triples(result)


def test_negation_and_until(extractor: OfflineExtractor) -> None:
    assert ("Alice", "NOT_LIKES", "coffee") in triples(run(extractor, "I don't like coffee."))
    worked = run(extractor, "I worked at Google until 2020.").facts[0]
    assert (worked.relation, worked.invalid_at) == ("WORKS_AT", "2020")


def test_no_facts_from_small_talk(extractor: OfflineExtractor) -> None:
    assert run(extractor, "Hey! Good to see you! How have you been?").facts == []


def test_text_without_speaker(extractor: OfflineExtractor) -> None:
    result = run(extractor, "Acme opened a new office in Berlin in 2021.", speaker=None)
    assert ("Acme", "OPENS", "office") in triples(result) or (
        "Acme",
        "OPENS_IN",
        "Berlin",
    ) in triples(result)


def test_helpers() -> None:
    assert [third_person(v) for v in ("move", "carry", "watch", "be", "have", "go", "play")] == [
        "moves",
        "carries",
        "watches",
        "is",
        "has",
        "goes",
        "plays",
    ]
    assert relation_name("not", "likes") == "NOT_LIKES"
    assert relation_name("works", "at") == "WORKS_AT"
