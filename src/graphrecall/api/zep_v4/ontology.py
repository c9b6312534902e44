"""Ontologies at graph and project level, and the thread summary."""

from __future__ import annotations

from typing import Any

from graphrecall.api.zep_v4.common import CtxDep, Project, ProjectDep, Services, make_router
from graphrecall.services.graph import ontology
from graphrecall.services.graph.ontology import OntologyIn
from graphrecall.wire.zep_v4 import answers, wire

router = make_router("ontology")


@router.get("/graphs/{graph_uuid}/ontology")
def get_graph_ontology(
    graph_uuid: str, ctx: Services = CtxDep, project: Project = ProjectDep
) -> Any:
    return ontology.get_graph_ontology(ctx, project, graph_uuid)


@router.put("/graphs/{graph_uuid}/ontology")
def set_graph_ontology(
    graph_uuid: str, body: OntologyIn, ctx: Services = CtxDep, project: Project = ProjectDep
) -> Any:
    return ontology.set_graph_ontology(ctx, project, graph_uuid, body)


@router.get("/project/ontology")
def get_project_ontology(ctx: Services = CtxDep, project: Project = ProjectDep) -> Any:
    return ontology.get_project_ontology(ctx, project)


@router.put("/project/ontology")
def set_project_ontology(
    body: OntologyIn, ctx: Services = CtxDep, project: Project = ProjectDep
) -> Any:
    return ontology.set_project_ontology(ctx, project, body)


@router.get("/threads/{thread_uuid}/summary", response_model=wire.ThreadSummaryWire)
def get_thread_summary(
    thread_uuid: str, ctx: Services = CtxDep, project: Project = ProjectDep
) -> Any:
    return answers.thread_summary(ctx, project, thread_uuid)
