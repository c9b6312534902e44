"""Facts read from a JSON record's structure."""

from __future__ import annotations

from graphrecall.ml.extraction import EdgeType, Extraction
from graphrecall.ml.json_facts import extract


def triples(extraction: Extraction | None) -> set[tuple[str, str, str]]:
    assert extraction is not None
    return {(f.source, f.relation, f.target) for f in extraction.facts}


def labels(extraction: Extraction | None) -> dict[str, str | None]:
    assert extraction is not None
    return {e.name: e.label for e in extraction.entities}


def test_a_person_record_gives_facts_about_its_subject() -> None:
    got = extract('{"name":"Maria Lopez","city":"Paris","employer":"Acme Corp.","role":"CTO"}')
    assert triples(got) == {
        ("Maria Lopez", "LIVES_IN", "Paris"),
        ("Maria Lopez", "WORKS_FOR", "Acme Corp"),  # no stray dot
        ("Maria Lopez", "HAS_ROLE", "CTO"),
    }
    # Typed from the key, not by NER on a bare value: CTO is a role, not an organisation.
    assert labels(got) == {
        "Maria Lopez": "Person",
        "Paris": "Location",
        "Acme Corp": "Organization",
        "CTO": "Role",
    }
    assert got is not None
    assert {f.fact for f in got.facts} >= {"Maria Lopez works for Acme Corp"}


def test_nested_objects_arrays_and_ids() -> None:
    got = extract(
        '{"employees": [{"name": "Sam Lee", "role": "Engineer"},'
        ' {"name": "Priya Nair", "manager": {"name": "Sam Lee"},'
        ' "address": {"city": "Portland"}, "languages": ["French", "Hindi"]}]}'
    )
    assert triples(got) == {
        ("Sam Lee", "HAS_ROLE", "Engineer"),
        ("Priya Nair", "HAS_MANAGER", "Sam Lee"),
        ("Priya Nair", "LIVES_IN", "Portland"),  # an object without a name is the record's
        ("Priya Nair", "SPEAKS", "French"),
        ("Priya Nair", "SPEAKS", "Hindi"),
    }
    assert labels(got)["Sam Lee"] == "Person"
    order = extract('{"order_id": "A-1043", "customer": "Maria Lopez", "total": 99.5}')
    assert triples(order) == {("A-1043", "HAS_CUSTOMER", "Maria Lopez")}
    assert order is not None
    [subject] = [e for e in order.entities if e.name == "A-1043"]
    assert subject.label == "Order" and subject.attributes == {"total": 99.5}
    # "order_id" is a key, never an entity.
    assert "order_id" not in labels(order)


def test_contacts_are_attributes_dates_date_the_facts_and_ontology_types_fit() -> None:
    got = extract(
        '{"name": "Dana Reyes", "email": "dana@example.com", "phone": "+1 555 0100",'
        ' "employer": "Northwind", "start_date": "2021-03-01"}'
    )
    assert got is not None
    assert triples(got) == {("Dana Reyes", "WORKS_FOR", "Northwind")}
    assert got.facts[0].valid_at == "2021-03-01"
    dana = next(e for e in got.entities if e.name == "Dana Reyes")
    assert dana.attributes == {"email": "dana@example.com", "phone": "+1 555 0100"}
    typed = extract(
        '{"name": "Dana Reyes", "employer": "Northwind"}',
        [EdgeType(name="EMPLOYED_BY", description="the employer of a person")],
    )
    assert triples(typed) == {("Dana Reyes", "EMPLOYED_BY", "Northwind")}


def test_documents_without_a_record_are_left_to_text_extraction() -> None:
    assert extract('{"customer": "Globex", "plan": "enterprise"}') is None
    assert extract("[1, 2, 3]") is None
    assert extract("not json") is None


def test_a_nested_path_stays_a_chain_person_company_city() -> None:
    """A wrapper key types its record, a nested "employer" record is an organisation (its
    city says where it is located, not where it lives), and the person works there."""
    got = extract(
        '{"buyer": {"name": "Oskar Lind", "employer": {"name": "Tidewater Mills",'
        ' "city": "Gdansk"}}}'
    )
    assert triples(got) == {
        ("Oskar Lind", "WORKS_FOR", "Tidewater Mills"),
        ("Tidewater Mills", "IS_LOCATED_IN", "Gdansk"),
    }
    assert labels(got) == {
        "Oskar Lind": "Person",
        "Tidewater Mills": "Organization",  # not a Person, although it has a city
        "Gdansk": "Location",
    }


def test_arrays_of_records_give_a_fact_per_record_with_humanised_keys() -> None:
    got = extract(
        '{"staff": ['
        '{"name": "Rosa Quint", "employer_name": "Brightwell", "homeCity": "Lyon"},'
        '{"name": "Emeka Obi", "current_employer": "Saltmarsh Ltd", "pet_name": "Juno"}]}'
    )
    assert triples(got) == {
        ("Rosa Quint", "WORKS_FOR", "Brightwell"),
        ("Rosa Quint", "LIVES_IN", "Lyon"),
        ("Emeka Obi", "WORKS_FOR", "Saltmarsh Ltd"),
        ("Emeka Obi", "HAS_PET", "Juno"),
    }
    assert got is not None
    assert "Emeka Obi's pet is Juno" in {f.fact for f in got.facts}
    assert labels(got)["Brightwell"] == labels(got)["Saltmarsh Ltd"] == "Organization"
    assert labels(got)["Rosa Quint"] == "Person"


def test_an_organisation_record_and_a_non_person_subject() -> None:
    """A named record with an organisation's keys is an organisation; a thing's
    "languages" are languages it has: only a person speaks."""
    firm = extract('{"name": "Copperleaf", "industry": "logistics", "city": "Tallinn"}')
    assert labels(firm)["Copperleaf"] == "Organization"
    assert ("Copperleaf", "IS_LOCATED_IN", "Tallinn") in triples(firm)
    manual = extract('{"manual_id": "M-77", "languages": ["Czech", "Welsh"]}')
    assert triples(manual) == {("M-77", "HAS_LANGUAGE", "Czech"), ("M-77", "HAS_LANGUAGE", "Welsh")}
