"""Documents and nested JSON records through the real pipeline (the SDK, the server, the
offline extractor; SQLite, and PostgreSQL once): a JSON record's path stays a chain of
facts (person -> company -> city) and an array of records gives a fact per record; a
document of plain prose gives a fact per statement, its references ("she", "its", "the
company") resolved within it, and a person, a place and an organisation each keep their
label. Records and documents written for these tests (not the issue's)."""

from __future__ import annotations

import json
import uuid
from collections.abc import Callable

from zep_cloud import Zep

from tests import pg_server
from tests.conftest import Server, wait_for_task

AT = "2025-02-03T10:00:00Z"
RECORD = {
    "account": {
        "name": "Yusuf Demir",
        "employer": {"name": "Saltire Instruments", "city": "Glasgow"},
    }
}
ROSTER = {
    "members": [
        {"name": "Leena Varga", "employer_name": "Orchard Ledger", "homeCity": "Debrecen"},
        {"name": "Tobias Renn", "current_employer": "Kestrel Freight", "pet_name": "Mango"},
    ]
}
DOCUMENT = (
    "Aurelia Marchetti founded Pinewood Ceramics in 2011. The company is based in "
    "Faenza. She hired Dario Conti as head of design in 2019. He had worked at Murano "
    "Glassworks for a decade. Its biggest stockist is Halden Homes. In 2024 the firm "
    "opened a showroom in Milan."
)


def _add(zep: Zep, graph: str, kind: str, data: str) -> None:
    added = zep.graph.episode.add(graph, type=kind, data=data, reference_time=AT)  # type: ignore[arg-type]
    assert wait_for_task(zep, added.task.uuid_) == "succeeded"


def _facts(zep: Zep, graph: str) -> set[tuple[str, str, str]]:
    return {
        (str(e.source_node_name), str(e.name), str(e.target_node_name))
        for e in zep.graph.edge.list(graph)
    }


def _labels(zep: Zep, graph: str) -> dict[str, set[str]]:
    return {str(n.name): set(n.labels or []) - {"Entity"} for n in zep.graph.node.list(graph)}


def check_records(zep: Zep) -> None:
    graph = zep.graph.create(name=f"records-{uuid.uuid4().hex[:6]}").uuid_
    _add(zep, graph, "json", json.dumps(RECORD))
    _add(zep, graph, "json", json.dumps(ROSTER))
    assert _facts(zep, graph) == {
        # the path: whose employer, and where that employer is
        ("Yusuf Demir", "WORKS_FOR", "Saltire Instruments"),
        ("Saltire Instruments", "IS_LOCATED_IN", "Glasgow"),
        # a fact per record, keys read as words
        ("Leena Varga", "WORKS_FOR", "Orchard Ledger"),
        ("Leena Varga", "LIVES_IN", "Debrecen"),
        ("Tobias Renn", "WORKS_FOR", "Kestrel Freight"),
        ("Tobias Renn", "HAS_PET", "Mango"),
    }
    labels = _labels(zep, graph)
    assert labels["Yusuf Demir"] == labels["Leena Varga"] == {"Person"}
    assert labels["Saltire Instruments"] == labels["Kestrel Freight"] == {"Organization"}
    assert labels["Glasgow"] == labels["Debrecen"] == {"Location"}


def check_document(zep: Zep) -> None:
    graph = zep.graph.create(name=f"document-{uuid.uuid4().hex[:6]}").uuid_
    _add(zep, graph, "text", DOCUMENT)
    edges = zep.graph.edge.list(graph)
    facts = {(str(e.source_node_name), str(e.name), str(e.target_node_name)) for e in edges}
    assert facts == {
        ("Aurelia Marchetti", "FOUNDS", "Pinewood Ceramics"),
        ("Pinewood Ceramics", "IS_BASED_IN", "Faenza"),  # "the company"
        ("Aurelia Marchetti", "HIRES", "Dario Conti"),  # "she"
        ("Dario Conti", "WORKS_AT", "Murano Glassworks"),  # "he"
        ("Pinewood Ceramics", "HAS_BIGGEST_STOCKIST", "Halden Homes"),  # "its"
        ("Pinewood Ceramics", "OPENS_IN", "Milan"),  # "the firm"
    }, [(e.name, e.fact) for e in edges]
    dated = {str(e.name): e.valid_at for e in edges}
    assert str(dated["FOUNDS"]).startswith("2011")
    assert str(dated["HIRES"]).startswith("2019")
    assert str(dated["OPENS_IN"]).startswith("2024")
    labels = _labels(zep, graph)
    assert labels["Aurelia Marchetti"] == labels["Dario Conti"] == {"Person"}
    assert labels["Pinewood Ceramics"] == labels["Halden Homes"] == {"Organization"}
    assert labels["Murano Glassworks"] == {"Organization"}  # NER: a place; worked at: no
    assert labels["Faenza"] == labels["Milan"] == {"Location"}
    assert not {"company", "the company", "she", "he", "it", "firm"} & {
        name.casefold() for name in labels
    }


def test_a_nested_record_keeps_its_path_and_arrays_give_a_fact_per_record(zep: Zep) -> None:
    check_records(zep)


def test_a_document_gives_a_fact_per_statement_with_its_references_resolved(zep: Zep) -> None:
    check_document(zep)


def test_the_same_on_postgresql(make_server: Callable[..., Server]) -> None:
    url = pg_server.with_schema(pg_server.server_url(), f"t{uuid.uuid4().hex}")
    zep = make_server(db=url).client()
    check_records(zep)
    check_document(zep)
