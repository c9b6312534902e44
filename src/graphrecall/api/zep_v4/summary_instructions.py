"""User summary instructions, for the project and per user
(services/summary_instructions.py)."""

from __future__ import annotations

from typing import Any

from graphrecall.api.zep_v4.common import CtxDep, Project, ProjectDep, Services, make_router
from graphrecall.domain.inputs import SummaryInstructionsSet
from graphrecall.services.graph import summary_instructions as service
from graphrecall.wire.zep_v4 import wire

router = make_router("user summary")


class UserInstructionWire(wire.Wire):
    name: str
    text: str


class UserSummaryInstructionsWire(wire.Wire):
    inherited: bool
    instructions: list[UserInstructionWire]


def _wire(found: service.Instructions) -> UserSummaryInstructionsWire:
    items, inherited = found
    return UserSummaryInstructionsWire(
        inherited=inherited, instructions=[UserInstructionWire(**i) for i in items]
    )


@router.get("/project/user-summary-instructions", response_model=UserSummaryInstructionsWire)
def get_project_instructions(ctx: Services = CtxDep, project: Project = ProjectDep) -> Any:
    return _wire(service.get_project_instructions(ctx, project))


@router.put("/project/user-summary-instructions", response_model=UserSummaryInstructionsWire)
def set_project_instructions(
    body: SummaryInstructionsSet, ctx: Services = CtxDep, project: Project = ProjectDep
) -> Any:
    return _wire(service.set_project_instructions(ctx, project, body))


@router.get("/users/{user_uuid}/summary-instructions", response_model=UserSummaryInstructionsWire)
def get_user_instructions(
    user_uuid: str, ctx: Services = CtxDep, project: Project = ProjectDep
) -> Any:
    return _wire(service.get_user_instructions(ctx, project, user_uuid))


@router.put("/users/{user_uuid}/summary-instructions", response_model=UserSummaryInstructionsWire)
def set_user_instructions(
    user_uuid: str,
    body: SummaryInstructionsSet,
    ctx: Services = CtxDep,
    project: Project = ProjectDep,
) -> Any:
    return _wire(service.set_user_instructions(ctx, project, user_uuid, body))
