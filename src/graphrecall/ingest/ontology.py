"""An extraction mapped onto a graph's ontology: which ontology applies (the graph's own,
else its project's), the entity and edge types it offers the extractor, and what an
extracted label or relation becomes under it (strict: what is not a type is dropped)."""

from __future__ import annotations

import re
from typing import Any

from graphrecall.domain.models import Graph, Ontology
from graphrecall.ingest.context import IngestContext

_RELATION = re.compile(r"[^A-Z0-9]+")


def effective_ontology(ctx: IngestContext, graph: Graph) -> dict[str, Any]:
    own = ctx.store.get(Ontology, graph.uuid, {"project_uuid": graph.project_uuid})
    if own is not None and not own.data.get("inherited"):
        return own.data
    project = ctx.store.get(Ontology, graph.project_uuid, {"project_uuid": graph.project_uuid})
    return project.data if project is not None else {}


def types_of(ontology: dict[str, Any], key: str) -> list[dict[str, str]]:
    """The named types under ``key`` ("entity_types" or "edge_types"), name and
    description each."""
    return [
        {"name": str(t.get("name", "")), "description": str(t.get("description") or "")}
        for t in ontology.get(key) or []
        if t.get("name")
    ]


def map_label(label: str | None, ontology: dict[str, Any], strict: bool) -> tuple[bool, list[str]]:
    """Map an extracted label onto the ontology's entity types: (keep?, labels)."""
    types = types_of(ontology, "entity_types")
    if not types:
        return True, [label] if label else []
    for t in types:
        if label and t["name"].casefold() == label.casefold():
            return True, [t["name"]]
    for t in types:
        if label and re.search(rf"\b{re.escape(label)}\b", t["description"], re.I):
            return True, [t["name"]]
    return (not strict), ([label] if label and not strict else [])


def relation_name(relation: str) -> str:
    """An extracted relation as an edge name: UPPER_SNAKE_CASE, RELATES_TO when empty."""
    return _RELATION.sub("_", relation.upper()).strip("_") or "RELATES_TO"


def map_relation(relation: str, ontology: dict[str, Any], strict: bool) -> str | None:
    """An edge name mapped onto the ontology's edge types (its name, or one whose words it
    holds); None when strict and none fits."""
    types = [t["name"] for t in types_of(ontology, "edge_types")]
    if not types:
        return relation
    words = set(relation.split("_"))
    for name in types:
        if name.upper() == relation:
            return name
    for name in types:
        if set(name.upper().split("_")) <= words | {"IS", "HAS"}:
            return name
    return None if strict else relation
