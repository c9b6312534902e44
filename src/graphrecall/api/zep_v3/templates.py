"""v3 ``/context-templates``: v4's context templates, a v3 ``template_id`` being the
template's ``name`` (unique in the project, as v3's ids are)."""

from __future__ import annotations

from typing import Any, TypeVar

from graphrecall.api.zep_v3 import ids
from graphrecall.api.zep_v3 import wire as v3wire
from graphrecall.api.zep_v3.common import v3_fields
from graphrecall.api.zep_v3.payloads import TemplateCreateV3, TemplateUpdateV3
from graphrecall.api.zep_v4.common import CtxDep, Project, ProjectDep, Services, make_router
from graphrecall.domain import limits
from graphrecall.domain.models import ContextTemplate, PageRequest
from graphrecall.services.get_context import templates as context_templates

router = make_router("zep v3: context templates")
T = TypeVar("T")


def _wire(t: ContextTemplate) -> v3wire.TemplateV3:
    return v3wire.TemplateV3(uuid=t.uuid, template_id=t.name, template=t.template)


@router.get("/context-templates", response_model=v3wire.TemplateListV3)
def list_templates(ctx: Services = CtxDep, project: Project = ProjectDep) -> Any:
    """Every template of the project (v3 does not page this list), oldest first."""
    out: list[v3wire.TemplateV3] = []
    page = PageRequest(page_size=limits.LIST_PAGE_SIZE_MAX, order_by="created_at", order="asc")
    while True:
        found = context_templates.list_templates(ctx, project, page)
        out += [_wire(t) for t in found.items]
        if found.next_cursor is None:
            return v3wire.TemplateListV3(templates=out)
        page = page.model_copy(update={"cursor": found.next_cursor})


@router.post("/context-templates", response_model=v3wire.TemplateV3)
def create_template(
    body: TemplateCreateV3, ctx: Services = CtxDep, project: Project = ProjectDep
) -> Any:
    # v4 calls the template's id its name.
    with v3_fields({r"^name$": "template_id"}):
        made = context_templates.create_template(ctx, project, body.template_id, body.template)
    return _wire(made)


@router.get("/context-templates/{template_id}", response_model=v3wire.TemplateV3)
def get_template(template_id: str, ctx: Services = CtxDep, project: Project = ProjectDep) -> Any:
    return _wire(ids.template(ctx, project, template_id))


@router.put("/context-templates/{template_id}", response_model=v3wire.TemplateV3)
def update_template(
    template_id: str,
    body: TemplateUpdateV3,
    ctx: Services = CtxDep,
    project: Project = ProjectDep,
) -> Any:
    found = ids.template(ctx, project, template_id)
    return _wire(context_templates.update_template(ctx, project, found.uuid, None, body.template))


@router.delete("/context-templates/{template_id}", response_model=v3wire.SuccessV3)
def delete_template(template_id: str, ctx: Services = CtxDep, project: Project = ProjectDep) -> Any:
    context_templates.delete_template(ctx, project, ids.template(ctx, project, template_id).uuid)
    return v3wire.SuccessV3(message="deleted")
