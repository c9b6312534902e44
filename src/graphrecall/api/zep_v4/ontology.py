"""Ontologies at graph and project level, and the thread summary."""

from __future__ import annotations

from typing import Any

from graphrecall.api.zep_v4 import wire
from graphrecall.api.zep_v4.common import CtxDep, Project, ProjectDep, Services, make_router
from graphrecall.domain.errors import NotFound
from graphrecall.domain.models import ThreadSummary
from graphrecall.services.graph import ontology, threads
from graphrecall.services.graph.ontology import OntologyIn

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
    thread = threads.get_thread(ctx, project, thread_uuid)
    found = ctx.store.find(ThreadSummary, {"thread_uuid": thread.uuid}, limit=1)
    if not found:
        raise NotFound("thread summary", thread.uuid, param="thread_uuid")
    return wire.thread_summary(found[0])
