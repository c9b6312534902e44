"""Instructions that steer user summaries, as Zep's ``set_user_summary_instructions``:
up to 5 (each at most 100 characters) for the project, and per user, a user's own
replacing the project's. A user without its own reports the project's, ``inherited``.
Setting them rebuilds the summaries they steer at once (ingest/derive.py)."""

from __future__ import annotations

from typing import Any

from graphrecall.domain import clock
from graphrecall.domain.inputs import SummaryInstructionsSet
from graphrecall.domain.models import Node, Project, SummaryInstructions, User
from graphrecall.ingest import derive
from graphrecall.services.container import Services
from graphrecall.services.graph import users

Instructions = tuple[list[dict[str, Any]], bool]  # (instructions, inherited)


def _read(ctx: Services, project: Project, owner: str) -> list[dict[str, Any]] | None:
    found = ctx.store.get(SummaryInstructions, owner, {"project_uuid": project.uuid})
    return None if found is None else list(found.data.get("instructions", []))


def _write(
    ctx: Services, project: Project, owner: str, owner_type: str, body: SummaryInstructionsSet
) -> list[dict[str, Any]]:
    items = [i.model_dump() for i in body.instructions or []]
    record = SummaryInstructions(
        uuid=owner,
        project_uuid=project.uuid,
        owner_type=owner_type,  # type: ignore[arg-type]
        data={"instructions": items},
        updated_at=clock.now(),
    )
    with ctx.store.transaction():
        ctx.store.delete(SummaryInstructions, {"uuid": owner, "project_uuid": project.uuid})
        ctx.store.insert([record])
    return items


def _resummarise(ctx: Services, user: User) -> None:
    node = ctx.store.get(Node, user.node_uuid, {"graph_uuid": user.graph_uuid})
    if node is not None:
        derive.node_summary(ctx.store, node)


def get_project_instructions(ctx: Services, project: Project) -> Instructions:
    return _read(ctx, project, project.uuid) or [], False


def set_project_instructions(
    ctx: Services, project: Project, body: SummaryInstructionsSet
) -> Instructions:
    """The project's instructions; every user that follows them is summarised again."""
    items = _write(ctx, project, project.uuid, "project", body)
    for user in ctx.store.iter_all(User, {"project_uuid": project.uuid}):
        if _read(ctx, project, user.uuid) is None:
            _resummarise(ctx, user)
    return items, False


def get_user_instructions(ctx: Services, project: Project, user_uuid: str) -> Instructions:
    user = users.get_user(ctx, project, user_uuid)
    own = _read(ctx, project, user.uuid)
    if own is None:
        return get_project_instructions(ctx, project)[0], True
    return own, False


def set_user_instructions(
    ctx: Services, project: Project, user_uuid: str, body: SummaryInstructionsSet
) -> Instructions:
    """The user's own instructions; ``inherited: true`` drops them, so the project's
    apply again."""
    user = users.get_user(ctx, project, user_uuid)
    if body.inherited:
        ctx.store.delete(SummaryInstructions, {"uuid": user.uuid, "project_uuid": project.uuid})
        _resummarise(ctx, user)
        return get_project_instructions(ctx, project)[0], True
    items = _write(ctx, project, user.uuid, "user", body)
    _resummarise(ctx, user)
    return items, False
