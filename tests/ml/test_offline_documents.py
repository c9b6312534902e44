"""Documents (prose with no speaker) through the offline extractor: a fact per statement,
references resolved within the document, labels a person, a place and an organisation
each keep. Documents written for these tests."""

from __future__ import annotations

import pytest

from graphrecall.ml.extraction import Extraction, ExtractionInput
from graphrecall.ml.offline_extractor import OfflineExtractor

REF = "2026-03-02T09:00:00Z"


@pytest.fixture(scope="module")
def extractor() -> OfflineExtractor:
    return OfflineExtractor()


def read(extractor: OfflineExtractor, text: str, speaker: str | None = None) -> Extraction:
    return extractor.extract([ExtractionInput(text=text, speaker=speaker, reference_time=REF)])[0]


def triples(extraction: Extraction) -> set[tuple[str, str, str]]:
    return {(f.source, f.relation, f.target) for f in extraction.facts}


def labels(extraction: Extraction) -> dict[str, str | None]:
    return {e.name: e.label for e in extraction.entities}


MARISOL = (
    "Marisol Ortega is the chief executive of Quillon Robotics. The startup builds "
    "warehouse robots. It was founded in Eindhoven in 2019. Last year she moved to Boston. "
    "Her deputy is Arjun Mehta. He joined the company from Siemens in 2022."
)


def test_six_statements_give_six_facts_each_naming_its_subject(
    extractor: OfflineExtractor,
) -> None:
    got = read(extractor, MARISOL)
    assert triples(got) == {
        ("Marisol Ortega", "IS_CHIEF_EXECUTIVE_OF", "Quillon Robotics"),
        ("Quillon Robotics", "BUILDS", "warehouse robots"),  # "the startup"
        ("Quillon Robotics", "IS_FOUNDED_IN", "Eindhoven"),  # "it"
        ("Marisol Ortega", "MOVES_TO", "Boston"),  # "she"
        ("Marisol Ortega", "HAS_DEPUTY", "Arjun Mehta"),  # "her deputy"
        ("Arjun Mehta", "JOINS", "Quillon Robotics"),  # "he", "the company"
    }
    dates = {f.relation: f.valid_at for f in got.facts}
    assert dates["IS_FOUNDED_IN"] == "2019" and dates["JOINS"] == "2022"
    assert dates["MOVES_TO"] == "Last year"
    # spaCy's small model calls Eindhoven a person; "founded in" says it is a place.
    assert labels(got)["Eindhoven"] == "Location"
    assert labels(got)["Quillon Robotics"] == labels(got)["Siemens"] == "Organization"
    assert labels(got)["Marisol Ortega"] == labels(got)["Arjun Mehta"] == "Person"


def test_its_and_the_company_mean_the_document_s_organisation_not_the_last_named(
    extractor: OfflineExtractor,
) -> None:
    got = read(
        extractor,
        "Corvid Analytics was set up by Helen Park in 2016. She previously worked at "
        "Tessera Systems. Its biggest customer is Nordlicht Shipping. The company employs "
        "forty people.",
    )
    found = triples(got)
    assert ("Corvid Analytics", "HAS_BIGGEST_CUSTOMER", "Nordlicht Shipping") in found
    assert ("Helen Park", "WORKS_AT", "Tessera Systems") in found
    assert not any(s == "Tessera Systems" for s, _, _ in found), found
    assert not {"company", "she", "it"} & {e.name.casefold() for e in got.entities}


def test_a_person_a_place_and_an_organisation_are_never_mislabelled(
    extractor: OfflineExtractor,
) -> None:
    got = read(
        extractor,
        "Nadia Petrova runs Brightwater Foods. The firm is based in Tallinn. "
        "Brightwater Foods acquired Kalev Bakery in June 2023.",
    )
    assert labels(got)["Nadia Petrova"] == "Person"  # NER says ORG; she runs a company
    assert labels(got)["Kalev Bakery"] == "Organization"  # NER says PERSON
    assert labels(got)["Tallinn"] == "Location"
    assert ("Brightwater Foods", "IS_BASED_IN", "Tallinn") in triples(got)


def test_a_first_name_alone_is_the_person_named_before(extractor: OfflineExtractor) -> None:
    got = read(
        extractor,
        "Ingrid Solberg teaches chemistry at Vesterhavet School. The school opened a new "
        "laboratory in 2022. Ingrid leads its robotics club.",
    )
    assert ("Vesterhavet School", "OPENS", "laboratory") in triples(got)
    assert "Ingrid" not in labels(got)
    lead = next(f for f in got.facts if f.relation == "LEADS")
    assert lead.source == "Ingrid Solberg"
    assert lead.fact == "Ingrid Solberg leads Vesterhavet School's robotics club"


def test_a_statement_the_clause_rules_miss_still_gives_its_fact(
    extractor: OfflineExtractor,
) -> None:
    got = read(extractor, "Harbor Analytics and Delmar Shipping merged in 2024.")
    [fact] = got.facts
    assert (fact.source, fact.relation, fact.target) == (
        "Harbor Analytics",
        "MERGES_WITH",
        "Delmar Shipping",
    )
    assert fact.valid_at == "2024" and fact.rule == "document_statement"


def test_a_chat_message_is_not_read_as_a_document(extractor: OfflineExtractor) -> None:
    """With a speaker, "she" points into messages the extractor does not read: left as is."""
    text = "Priya Nair founded Corvid. She lives in Oslo."
    chat = read(extractor, text, speaker="Tom")
    assert ("Priya Nair", "LIVES_IN", "Oslo") not in triples(chat)
    assert ("Priya Nair", "LIVES_IN", "Oslo") in triples(read(extractor, text))


def test_she_is_the_subject_not_the_last_person_named(extractor: OfflineExtractor) -> None:
    """The first "she" of a document is the person named as a subject; a person one
    leaves or marries keeps the Person label (only an employer is an organisation)."""
    got = read(
        extractor,
        "Lena Brandt married Tom Weiss in 2010. In 2020 she left Tom Weiss. "
        "She works at Orla Kline.",
    )
    assert triples(got) == {
        ("Lena Brandt", "MARRIES", "Tom Weiss"),
        ("Lena Brandt", "LEAVES", "Tom Weiss"),
        ("Lena Brandt", "WORKS_AT", "Orla Kline"),
    }
    assert labels(got)["Tom Weiss"] == "Person"
    assert labels(got)["Orla Kline"] == "Organization"
