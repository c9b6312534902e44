"""An extraction mapped onto a graph's ontology (ingest/ontology.py): which ontology
applies, and what extracted labels and relations become under it, strict or not."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Literal

import pytest

from graphrecall.domain.models import Graph, Ontology, Project
from graphrecall.ingest.context import IngestContext
from graphrecall.ingest.ontology import (
    effective_ontology,
    map_label,
    map_relation,
    relation_name,
    types_of,
)
from graphrecall.store import Store, open_store

STAMP = "2026-01-01T00:00:00Z"
TYPES = {
    "entity_types": [
        {"name": "Restaurant", "description": "A place to eat: a diner, a cafe or a bistro"},
        {"name": "Person"},
        {"description": "a type without a name is no type"},
    ],
    "edge_types": [{"name": "WORKS_AT"}, {"name": "LOCATED_IN", "description": "where"}],
}


@pytest.fixture
def store(tmp_path: Path) -> Iterator[Store]:
    s = open_store(tmp_path / "g.db")
    try:
        yield s
    finally:
        s.close()


def test_types_keep_named_ones_with_their_descriptions() -> None:
    assert types_of(TYPES, "entity_types") == [
        {"name": "Restaurant", "description": "A place to eat: a diner, a cafe or a bistro"},
        {"name": "Person", "description": ""},
    ]
    assert types_of({}, "edge_types") == []


def test_a_label_maps_by_name_then_by_a_word_of_a_description() -> None:
    assert map_label("person", TYPES, strict=True) == (True, ["Person"])
    assert map_label("Cafe", TYPES, strict=True) == (True, ["Restaurant"])
    # Not a type: kept as it is unless strict, where it is dropped.
    assert map_label("Planet", TYPES, strict=False) == (True, ["Planet"])
    assert map_label("Planet", TYPES, strict=True) == (False, [])
    # Without entity types every label is kept.
    assert map_label("Planet", {}, strict=True) == (True, ["Planet"])
    assert map_label(None, {}, strict=True) == (True, [])


def test_a_relation_is_named_then_mapped_onto_the_edge_types() -> None:
    assert relation_name("works at") == "WORKS_AT"
    assert relation_name(" -- ") == "RELATES_TO"
    assert map_relation("WORKS_AT", TYPES, strict=True) == "WORKS_AT"
    # A type whose words the relation holds (IS and HAS are free).
    assert map_relation("IS_LOCATED_IN", TYPES, strict=True) == "LOCATED_IN"
    assert map_relation("LIKES", TYPES, strict=False) == "LIKES"
    assert map_relation("LIKES", TYPES, strict=True) is None
    assert map_relation("LIKES", {}, strict=True) == "LIKES"


def test_a_graph_uses_its_own_ontology_else_its_projects(store: Store) -> None:
    project = Project(uuid="p1", name="p", created_at=STAMP)
    graph = Graph(uuid="g1", project_uuid="p1", type="standard", created_at=STAMP, updated_at=STAMP)
    store.insert([project, graph])
    ctx = IngestContext(store=store, embedder=None, extractor=None)
    assert effective_ontology(ctx, graph) == {}

    def ontology(
        owner: str, kind: Literal["graph", "project"], data: dict[str, object]
    ) -> Ontology:
        return Ontology(uuid=owner, project_uuid="p1", owner_type=kind, data=data, updated_at=STAMP)  # type: ignore[arg-type]

    store.insert([ontology("p1", "project", {"edge_types": [{"name": "OWNS"}]})])
    assert effective_ontology(ctx, graph) == {"edge_types": [{"name": "OWNS"}]}
    # A graph's copy marked as inherited is the project's, not its own.
    store.insert([ontology("g1", "graph", {"inherited": True, "edge_types": []})])
    assert effective_ontology(ctx, graph) == {"edge_types": [{"name": "OWNS"}]}
    store.update(ontology("g1", "graph", TYPES))
    assert effective_ontology(ctx, graph) == TYPES
