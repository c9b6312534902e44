"""/user-groups: named sets of a project's users (services/user_groups.py), their
members, and /users/{user_uuid}/user-groups."""

from __future__ import annotations

from typing import Any

from fastapi import Body as BodyParam
from fastapi import Depends

from graphrecall.api.zep_v4.common import (
    CtxDep,
    Project,
    ProjectDep,
    Services,
    make_router,
    paging,
    wire_page,
)
from graphrecall.domain import models as m
from graphrecall.domain.inputs import MembershipChange, UserGroupCreate, UserGroupUpdate
from graphrecall.domain.models import PageRequest
from graphrecall.services.graph import user_groups
from graphrecall.wire.zep_v4 import wire
from graphrecall.wire.zep_v4.bodies import SearchListBody
from graphrecall.wire.zep_v4.paging import Paging

router = make_router("user groups")
_paging = paging(Paging(("uuid",)))


class UserGroupWire(wire.Wire):
    uuid: str
    name: str
    description: str | None = None
    version: int
    created_at: str
    updated_at: str


class MembershipMutationResult(wire.Wire):
    added_count: int | None = None
    removed_count: int | None = None
    no_op_count: int


def _group(g: m.UserGroup) -> UserGroupWire:
    return UserGroupWire(
        uuid=g.uuid,
        name=g.name,
        description=g.description,
        version=g.version,
        created_at=g.created_at,
        updated_at=g.updated_at,
    )


def _search(body: SearchListBody | None) -> str | None:
    return body.search if body else None


@router.post("/user-groups", response_model=UserGroupWire)
def create_group(
    body: UserGroupCreate, ctx: Services = CtxDep, project: Project = ProjectDep
) -> Any:
    return _group(user_groups.create_group(ctx, project, body))


@router.post("/user-groups/list", response_model=wire.PageWire[UserGroupWire])
def list_groups(
    body: SearchListBody | None = BodyParam(default=None),
    page: PageRequest = Depends(_paging),
    ctx: Services = CtxDep,
    project: Project = ProjectDep,
) -> Any:
    result = user_groups.list_groups(ctx, project, page, _search(body))
    return wire_page(result, [_group(g) for g in result.items])


@router.get("/user-groups/{group_uuid}", response_model=UserGroupWire)
def get_group(group_uuid: str, ctx: Services = CtxDep, project: Project = ProjectDep) -> Any:
    return _group(user_groups.get_group(ctx, project, group_uuid))


@router.patch(
    "/user-groups/{group_uuid}",
    response_model=UserGroupWire,
    responses={
        409: {"model": wire.ErrorResponse, "description": "expected_version is stale"},
    },
)
def update_group(
    group_uuid: str, body: UserGroupUpdate, ctx: Services = CtxDep, project: Project = ProjectDep
) -> Any:
    return _group(user_groups.update_group(ctx, project, group_uuid, body))


@router.delete("/user-groups/{group_uuid}")
def delete_group(
    group_uuid: str, ctx: Services = CtxDep, project: Project = ProjectDep
) -> dict[str, str]:
    """The SDK parses no body here; a small JSON one keeps every 2xx a JSON response."""
    user_groups.delete_group(ctx, project, group_uuid)
    return {"message": "user group deleted", "uuid": group_uuid}


@router.post("/user-groups/{group_uuid}/members", response_model=MembershipMutationResult)
def add_members(
    group_uuid: str, body: MembershipChange, ctx: Services = CtxDep, project: Project = ProjectDep
) -> Any:
    added, no_op = user_groups.add_members(ctx, project, group_uuid, body)
    return MembershipMutationResult(added_count=added, no_op_count=no_op)


@router.post("/user-groups/{group_uuid}/members/remove", response_model=MembershipMutationResult)
def remove_members(
    group_uuid: str, body: MembershipChange, ctx: Services = CtxDep, project: Project = ProjectDep
) -> Any:
    removed, no_op = user_groups.remove_members(ctx, project, group_uuid, body)
    return MembershipMutationResult(removed_count=removed, no_op_count=no_op)


@router.delete("/user-groups/{group_uuid}/members/{user_uuid}")
def remove_member(
    group_uuid: str, user_uuid: str, ctx: Services = CtxDep, project: Project = ProjectDep
) -> dict[str, str]:
    """The SDK parses no body here; a small JSON one keeps every 2xx a JSON response."""
    user_groups.remove_member(ctx, project, group_uuid, user_uuid)
    return {"message": "user removed from the group", "uuid": user_uuid}


@router.post("/user-groups/{group_uuid}/members/list", response_model=wire.PageWire[wire.UserWire])
def list_members(
    group_uuid: str,
    body: SearchListBody | None = BodyParam(default=None),
    page: PageRequest = Depends(_paging),
    ctx: Services = CtxDep,
    project: Project = ProjectDep,
) -> Any:
    result = user_groups.list_members(ctx, project, group_uuid, page, _search(body))
    return wire_page(result, [wire.user(u) for u in result.items])


@router.post(
    "/user-groups/{group_uuid}/member-candidates/list",
    response_model=wire.PageWire[wire.UserWire],
)
def list_member_candidates(
    group_uuid: str,
    body: SearchListBody | None = BodyParam(default=None),
    page: PageRequest = Depends(_paging),
    ctx: Services = CtxDep,
    project: Project = ProjectDep,
) -> Any:
    result = user_groups.list_members(
        ctx, project, group_uuid, page, _search(body), candidates=True
    )
    return wire_page(result, [wire.user(u) for u in result.items])


@router.get("/users/{user_uuid}/user-groups", response_model=wire.PageWire[UserGroupWire])
def groups_of_user(
    user_uuid: str,
    page: PageRequest = Depends(_paging),
    ctx: Services = CtxDep,
    project: Project = ProjectDep,
) -> Any:
    result = user_groups.groups_of_user(ctx, project, user_uuid, page)
    return wire_page(result, [_group(g) for g in result.items])
