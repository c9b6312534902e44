"""v3 ``/entity-types``: v4's ontologies, the project's or those of the graphs named
(a user's graph by ``user_ids``, a graph by ``graph_ids``). The shapes are v4's but
for a property's type, which v3 capitalises (``Text``, ``Int``, ``Float``, ``Boolean``)."""

from __future__ import annotations

from typing import Any

from fastapi import Query
from pydantic import ValidationError

from graphrecall.api.zep_v3 import ids
from graphrecall.api.zep_v3 import wire as v3wire
from graphrecall.api.zep_v3.payloads import EntityTypesV3
from graphrecall.api.zep_v4.common import CtxDep, Project, ProjectDep, Services, make_router
from graphrecall.domain.errors import BadRequest
from graphrecall.domain.models import Graph
from graphrecall.services.graph import graphs, ontology
from graphrecall.wire.errors import param_path

router = make_router("zep v3: entity types")
V3_TYPES = {"text": "Text", "int": "Int", "float": "Float", "boolean": "Boolean"}


def _types(items: list[dict[str, Any]], to_v3: bool) -> list[dict[str, Any]]:
    """Entity or edge types with each property's type in the other API's spelling."""
    out = []
    for item in items:
        properties = []
        for prop in item.get("properties") or []:
            kind = prop.get("type")
            if isinstance(kind, str):
                kind = V3_TYPES.get(kind, kind) if to_v3 else kind.lower()
            properties.append({**prop, "type": kind})
        out.append({**item, "properties": properties})
    return out


def _v4_body(body: EntityTypesV3) -> ontology.OntologyIn:
    try:
        return ontology.OntologyIn.model_validate(
            {
                "entity_types": _types(body.entity_types or [], to_v3=False),
                "edge_types": _types(body.edge_types or [], to_v3=False),
            }
        )
    except ValidationError as exc:
        error = exc.errors()[0]
        param = param_path(tuple(error["loc"])) or "entity_types"
        raise BadRequest(f"{param}: {error['msg']}", param=param) from None


def _graphs(ctx: Services, project: Project, body: EntityTypesV3) -> list[Graph]:
    """Every graph named, resolved before anything is written."""
    found = [
        graphs.resolve(ctx, project, ids.user(ctx, project, u, param=f"user_ids[{i}]").graph_uuid)
        for i, u in enumerate(body.user_ids or [])
    ]
    found += [
        ids.graph(ctx, project, g, param=f"graph_ids[{i}]")
        for i, g in enumerate(body.graph_ids or [])
    ]
    return found


@router.put("/entity-types", response_model=v3wire.SuccessV3)
def set_entity_types(
    body: EntityTypesV3, ctx: Services = CtxDep, project: Project = ProjectDep
) -> Any:
    """Sets the types of the graphs named, or the project's when none is."""
    request = _v4_body(body)
    targets = _graphs(ctx, project, body)
    if not targets:
        ontology.set_project_ontology(ctx, project, request)
    for graph in targets:
        ontology.set_graph_ontology(ctx, project, graph.uuid, request)
    return v3wire.SuccessV3(message="set")


@router.get("/entity-types", response_model=v3wire.EntityTypesV3)
def list_entity_types(
    user_id: str | None = Query(None, max_length=500),
    graph_id: str | None = Query(None, max_length=500),
    ctx: Services = CtxDep,
    project: Project = ProjectDep,
) -> Any:
    """The types extraction uses for the user's or graph's graph (the project's while
    it has none of its own), else the project's."""
    found = ontology.get_project_ontology(ctx, project)
    if user_id or graph_id:
        graph = ids.target_graph(ctx, project, user_id or None, graph_id or None)
        own = ontology.get_graph_ontology(ctx, project, graph.uuid)
        if not own.get("inherited"):
            found = own
    return v3wire.EntityTypesV3(
        entity_types=_types(found.get("entity_types", []), to_v3=True),
        edge_types=_types(found.get("edge_types", []), to_v3=True),
    )
