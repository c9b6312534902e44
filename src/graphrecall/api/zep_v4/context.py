"""Context assembly on the wire: ``POST /graphs/{graph_uuid}/context``,
``GET /threads/{thread_uuid}/context`` and the ``/context-templates`` CRUD."""

from __future__ import annotations

from typing import Any

from fastapi import Depends, Query

from graphrecall.api.zep_v4.common import (
    CtxDep,
    Project,
    ProjectDep,
    Services,
    make_router,
    paging,
    serialized,
    wire_page,
)
from graphrecall.domain.models import PageRequest
from graphrecall.services.get_context import templates as context_templates
from graphrecall.services.get_context.assembly import thread_context
from graphrecall.wire.zep_v4 import answers, wire
from graphrecall.wire.zep_v4 import paging as pages
from graphrecall.wire.zep_v4.context import (
    ContextTemplateWire,
    GraphContextBody,
    GraphContextResponse,
    TemplateBody,
    TemplateCreateBody,
    TemplateListBody,
    ThreadContextResponse,
    template_wire,
)

router = make_router("context")
_paging = paging(pages.TEMPLATES)


# -- graph and thread context --------------------------------------------------------------


@router.post("/graphs/{graph_uuid}/context", response_model=GraphContextResponse)
def get_graph_context(
    graph_uuid: str, body: GraphContextBody, ctx: Services = CtxDep, project: Project = ProjectDep
) -> Any:
    found = answers.get_graph_context(ctx, project, graph_uuid, body)
    return serialized(GraphContextResponse, found)


@router.get("/threads/{thread_uuid}/context", response_model=ThreadContextResponse)
def get_thread_context(
    thread_uuid: str,
    template_uuid: str | None = Query(None, max_length=64),
    ctx: Services = CtxDep,
    project: Project = ProjectDep,
) -> Any:
    text = thread_context(ctx, project, thread_uuid, template_uuid or None).text
    return serialized(ThreadContextResponse, ThreadContextResponse(context=text))


# -- context templates ---------------------------------------------------------------------


@router.post("/context-templates", response_model=ContextTemplateWire, status_code=201)
def create_template(
    body: TemplateCreateBody, ctx: Services = CtxDep, project: Project = ProjectDep
) -> Any:
    return template_wire(context_templates.create_template(ctx, project, body.name, body.template))


@router.post("/context-templates/list", response_model=wire.PageWire[ContextTemplateWire])
def list_templates(
    body: TemplateListBody | None = None,
    page: PageRequest = Depends(_paging),
    ctx: Services = CtxDep,
    project: Project = ProjectDep,
) -> Any:
    result = context_templates.list_templates(ctx, project, page, body.name if body else None)
    return wire_page(result, [template_wire(t) for t in result.items])


@router.get("/context-templates/{template_uuid}", response_model=ContextTemplateWire)
def get_template(template_uuid: str, ctx: Services = CtxDep, project: Project = ProjectDep) -> Any:
    return template_wire(context_templates.get_template(ctx, project, template_uuid))


@router.put("/context-templates/{template_uuid}", response_model=ContextTemplateWire)
def update_template(
    template_uuid: str, body: TemplateBody, ctx: Services = CtxDep, project: Project = ProjectDep
) -> Any:
    return template_wire(
        context_templates.update_template(ctx, project, template_uuid, body.name, body.template)
    )


@router.delete("/context-templates/{template_uuid}")
def delete_template(
    template_uuid: str, ctx: Services = CtxDep, project: Project = ProjectDep
) -> dict[str, str]:
    """The SDK parses no body here; a small JSON one keeps every 2xx a JSON response."""
    context_templates.delete_template(ctx, project, template_uuid)
    return {"message": "context template deleted", "uuid": template_uuid}
