"""Ontologies: the entity and edge types extraction should use, per graph or per project.

A graph's ontology with ``inherited: true`` (or none at all) defers to the project's. Both
extractors honour the effective ontology; with ``strict_ontology`` on an add, entities and
facts of undeclared types are dropped.
"""

from __future__ import annotations

import re
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from graphrecall.domain import clock
from graphrecall.domain.models import Ontology, Project
from graphrecall.services.container import Services
from graphrecall.services.graph import graphs

MAX_TYPES = 50
_EDGE_NAME = re.compile(r"^[A-Z][A-Z0-9]*(_[A-Z0-9]+)*$")


class _Model(BaseModel):
    model_config = ConfigDict(extra="ignore", strict=True)


class EntityProperty(_Model):
    name: Annotated[str, Field(min_length=1, max_length=100)]
    description: str | None = None
    type: Literal["text", "int", "float", "boolean"] = "text"
    protected: bool | None = None


class EntityTypeIn(_Model):
    name: Annotated[str, Field(min_length=1, max_length=100)]
    description: Annotated[str | None, Field(max_length=2000)] = None
    properties: Annotated[list[EntityProperty], Field(max_length=50)] = Field(default_factory=list)
    identity_properties: list[str] = Field(default_factory=list)


class SourceTarget(_Model):
    source: str | None = None
    target: str | None = None


class EdgeTypeIn(_Model):
    name: Annotated[str, Field(min_length=1, max_length=100)]
    description: Annotated[str | None, Field(max_length=2000)] = None
    properties: Annotated[list[EntityProperty], Field(max_length=50)] = Field(default_factory=list)
    source_targets: list[SourceTarget] = Field(default_factory=list)

    @model_validator(mode="after")
    def _upper_snake(self) -> EdgeTypeIn:
        if not _EDGE_NAME.match(self.name):
            raise ValueError("edge type names are UPPER_SNAKE_CASE, e.g. WORKS_AT")
        return self


class OntologyIn(_Model):
    entity_types: Annotated[list[EntityTypeIn], Field(max_length=MAX_TYPES)] = Field(
        default_factory=list
    )
    edge_types: Annotated[list[EdgeTypeIn], Field(max_length=MAX_TYPES)] = Field(
        default_factory=list
    )
    entity_type_hierarchy: dict[str, Any] | None = None
    inherited: bool | None = None

    @model_validator(mode="after")
    def _unique(self) -> OntologyIn:
        for field, items in (("entity_types", self.entity_types), ("edge_types", self.edge_types)):
            names = [t.name.casefold() for t in items]
            if len(names) != len(set(names)):
                raise ValueError(f"{field}: type names must be unique")
        return self


EMPTY: dict[str, Any] = {
    "entity_types": [],
    "edge_types": [],
    "entity_type_hierarchy": {},
    "inherited": True,
}


def _set(
    ctx: Services, project: Project, owner: str, owner_type: str, body: OntologyIn
) -> dict[str, Any]:
    data = body.model_dump(exclude_none=True)
    data["inherited"] = bool(body.inherited) if owner_type == "graph" else False
    record = Ontology(
        uuid=owner,
        project_uuid=project.uuid,
        owner_type="graph" if owner_type == "graph" else "project",
        data=data,
        updated_at=clock.now(),
    )
    with ctx.store.transaction():
        if ctx.store.get(Ontology, owner, {"project_uuid": project.uuid}) is None:
            ctx.store.insert([record])
        else:
            ctx.store.update(record)
    return {**EMPTY, **data}


def set_graph_ontology(
    ctx: Services, project: Project, graph_uuid: str, body: OntologyIn
) -> dict[str, Any]:
    graph = graphs.resolve(ctx, project, graph_uuid)
    return _set(ctx, project, graph.uuid, "graph", body)


def get_graph_ontology(ctx: Services, project: Project, graph_uuid: str) -> dict[str, Any]:
    graph = graphs.resolve(ctx, project, graph_uuid)
    found = ctx.store.get(Ontology, graph.uuid, {"project_uuid": project.uuid})
    return {**EMPTY, **found.data} if found else dict(EMPTY)


def set_project_ontology(ctx: Services, project: Project, body: OntologyIn) -> dict[str, Any]:
    return _set(ctx, project, project.uuid, "project", body)


def get_project_ontology(ctx: Services, project: Project) -> dict[str, Any]:
    found = ctx.store.get(Ontology, project.uuid, {"project_uuid": project.uuid})
    return {**EMPTY, **found.data, "inherited": False} if found else {**EMPTY, "inherited": False}
