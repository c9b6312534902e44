"""v3 ``/user-summary-instructions``: v4's summary instructions, the project's or a
user's own, edited by name (v3 adds and deletes instructions where v4 sets the list)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from fastapi import Body as BodyParam
from fastapi import Query

from graphrecall.api.zep_v3 import ids
from graphrecall.api.zep_v3 import wire as v3wire
from graphrecall.api.zep_v3.payloads import InstructionsAddV3, InstructionsDeleteV3
from graphrecall.api.zep_v4.common import CtxDep, Project, ProjectDep, Services, make_router
from graphrecall.domain.errors import BadRequest
from graphrecall.domain.inputs import SummaryInstructionsSet, UserInstruction
from graphrecall.domain.models import User
from graphrecall.services.graph import summary_instructions as service

router = make_router("zep v3: user summary instructions")
Items = list[dict[str, Any]]


@router.get("/user-summary-instructions", response_model=v3wire.InstructionsV3)
def list_instructions(
    user_id: str | None = Query(None, max_length=500),
    ctx: Services = CtxDep,
    project: Project = ProjectDep,
) -> Any:
    """The user's instructions (the project's while it has none of its own), else the
    project's."""
    if user_id:
        items, _ = service.get_user_instructions(ctx, project, ids.user(ctx, project, user_id).uuid)
    else:
        items, _ = service.get_project_instructions(ctx, project)
    return v3wire.InstructionsV3(instructions=[v3wire.InstructionV3(**i) for i in items])


def _users(ctx: Services, project: Project, user_ids: list[str] | None) -> list[User]:
    """Every user named, resolved before anything is written (an unknown one is a 404
    naming ``user_ids[i]``)."""
    out = []
    for i, user_id in enumerate(user_ids or []):
        out.append(ids.user(ctx, project, user_id, param=f"user_ids[{i}]"))
    return out


def _edit(
    ctx: Services, project: Project, user_ids: list[str] | None, change: Callable[[Items], Items]
) -> None:
    """Apply ``change`` to the project's list, or to each named user's own list (a user
    left with none follows the project's again)."""
    targets = _users(ctx, project, user_ids)
    if not targets:
        items, _ = service.get_project_instructions(ctx, project)
        service.set_project_instructions(ctx, project, _set(change(items)))
        return
    for user in targets:
        own, inherited = service.get_user_instructions(ctx, project, user.uuid)
        changed = change([] if inherited else own)
        body = _set(changed) if changed else SummaryInstructionsSet(inherited=True)
        service.set_user_instructions(ctx, project, user.uuid, body)


def _set(items: Items) -> SummaryInstructionsSet:
    return SummaryInstructionsSet(instructions=[UserInstruction(**i) for i in items])


@router.post("/user-summary-instructions", response_model=v3wire.SuccessV3)
def add_instructions(
    body: InstructionsAddV3, ctx: Services = CtxDep, project: Project = ProjectDep
) -> Any:
    """Adds the instructions (one of the same name is replaced)."""
    added = [i.model_dump() for i in body.instructions]
    names = {i["name"] for i in added}
    if len(names) < len(added):
        raise BadRequest("two instructions have the same name", param="instructions")

    def change(items: Items) -> Items:
        return [i for i in items if i["name"] not in names] + added

    _edit(ctx, project, body.user_ids, change)
    return v3wire.SuccessV3(message="added")


@router.delete("/user-summary-instructions", response_model=v3wire.SuccessV3)
def delete_instructions(
    body: InstructionsDeleteV3 | None = BodyParam(default=None),
    ctx: Services = CtxDep,
    project: Project = ProjectDep,
) -> Any:
    """Deletes the named instructions, or all when none is named."""
    body = body or InstructionsDeleteV3()
    names = set(body.instruction_names or [])

    def change(items: Items) -> Items:
        return [i for i in items if names and i["name"] not in names]

    _edit(ctx, project, body.user_ids, change)
    return v3wire.SuccessV3(message="deleted")
