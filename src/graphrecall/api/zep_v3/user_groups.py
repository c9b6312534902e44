"""v3 ``/user-groups``: v4's user groups, which v3 too names by uuid; lists page by
number and answer v3's envelopes. ``projectId`` is accepted and read nowhere: the API
key decides the project, as it does for every other call."""

from __future__ import annotations

from typing import Any

from fastapi import Query

from graphrecall.api.zep_v3 import wire as v3wire
from graphrecall.api.zep_v3.common import numbered, numbered_page, str_param, v3_fields
from graphrecall.api.zep_v4.common import CtxDep, Project, ProjectDep, Services, make_router
from graphrecall.domain import models as m
from graphrecall.domain.inputs import MembershipChange, UserGroupCreate, UserGroupUpdate
from graphrecall.domain.models import PageRequest, UserGroupMember
from graphrecall.services.graph import user_groups

router = make_router("zep v3: user groups")
GROUP_ORDERS = ("created_at", "name", "uuid")
MEMBER_ORDERS = ("created_at", "user_id", "uuid")
ProjectId = Query(None, alias="projectId", max_length=100)
PageNumber = Query(None, alias="pageNumber")
PageSize = Query(None, alias="pageSize")
Search = Query(None, max_length=500)


def _group(ctx: Services, project: Project, g: m.UserGroup) -> v3wire.UserGroupV3:
    members = ctx.store.count(UserGroupMember, {"project_uuid": project.uuid, "group_uuid": g.uuid})
    return v3wire.UserGroupV3(
        uuid=g.uuid,
        name=g.name,
        description=g.description,
        version=g.version,
        member_count=members,
        project_uuid=project.uuid,
        created_at=g.created_at,
        updated_at=g.updated_at,
    )


# Registered before /user-groups/{group_uuid}/…: "users" is not a group's uuid.
@router.get("/user-groups/users/{user_uuid}", response_model=v3wire.UserGroupsOfUserV3)
def list_for_user(
    user_uuid: str,
    project_id: str | None = ProjectId,
    ctx: Services = CtxDep,
    project: Project = ProjectDep,
) -> Any:
    page = PageRequest(page_size=100, order_by="created_at", order="asc")
    found: list[m.UserGroup] = []
    while True:
        result = user_groups.groups_of_user(ctx, project, user_uuid, page)
        found += result.items
        if result.next_cursor is None:
            return v3wire.UserGroupsOfUserV3(user_groups=[_group(ctx, project, g) for g in found])
        page = page.model_copy(update={"cursor": result.next_cursor})


@router.get("/user-groups", response_model=v3wire.UserGroupListV3)
def list_groups(
    project_id: str | None = ProjectId,
    page_number: str | None = PageNumber,
    page_size: str | None = PageSize,
    search: str | None = Search,
    ctx: Services = CtxDep,
    project: Project = ProjectDep,
) -> Any:
    wanted = numbered(
        page_number, page_size, None, None, GROUP_ORDERS, names=("pageNumber", "pageSize")
    )
    found, total = numbered_page(
        lambda p: user_groups.list_groups(ctx, project, p, str_param(search)), wanted
    )
    return v3wire.UserGroupListV3(
        user_groups=[_group(ctx, project, g) for g in found],
        total_count=total,
        row_count=len(found),
    )


@router.post("/user-groups", response_model=v3wire.UserGroupV3)
def create_group(
    body: UserGroupCreate,
    project_id: str | None = ProjectId,
    ctx: Services = CtxDep,
    project: Project = ProjectDep,
) -> Any:
    return _group(ctx, project, user_groups.create_group(ctx, project, body))


@router.get("/user-groups/{group_uuid}", response_model=v3wire.UserGroupV3)
def get_group(
    group_uuid: str,
    project_id: str | None = ProjectId,
    ctx: Services = CtxDep,
    project: Project = ProjectDep,
) -> Any:
    return _group(ctx, project, user_groups.get_group(ctx, project, group_uuid))


@router.patch("/user-groups/{group_uuid}", response_model=v3wire.UserGroupV3)
def update_group(
    group_uuid: str,
    body: UserGroupUpdate,
    project_id: str | None = ProjectId,
    ctx: Services = CtxDep,
    project: Project = ProjectDep,
) -> Any:
    return _group(ctx, project, user_groups.update_group(ctx, project, group_uuid, body))


@router.delete("/user-groups/{group_uuid}", response_model=v3wire.SuccessV3)
def delete_group(
    group_uuid: str,
    project_id: str | None = ProjectId,
    ctx: Services = CtxDep,
    project: Project = ProjectDep,
) -> Any:
    user_groups.delete_group(ctx, project, group_uuid)
    return v3wire.SuccessV3(message="deleted")


def _members(
    ctx: Services,
    project: Project,
    group_uuid: str,
    page_number: str | None,
    page_size: str | None,
    search: str | None,
    *,
    candidates: bool,
) -> v3wire.UserListV3:
    wanted = numbered(
        page_number, page_size, None, None, MEMBER_ORDERS, names=("pageNumber", "pageSize")
    )
    found, total = numbered_page(
        lambda p: user_groups.list_members(
            ctx, project, group_uuid, p, str_param(search), candidates=candidates
        ),
        wanted,
    )
    return v3wire.UserListV3(
        users=[v3wire.user(u) for u in found], total_count=total, row_count=len(found)
    )


@router.get("/user-groups/{group_uuid}/members", response_model=v3wire.UserListV3)
def list_members(
    group_uuid: str,
    project_id: str | None = ProjectId,
    page_number: str | None = PageNumber,
    page_size: str | None = PageSize,
    search: str | None = Search,
    ctx: Services = CtxDep,
    project: Project = ProjectDep,
) -> Any:
    return _members(ctx, project, group_uuid, page_number, page_size, search, candidates=False)


@router.get("/user-groups/{group_uuid}/members/candidates", response_model=v3wire.UserListV3)
def list_member_candidates(
    group_uuid: str,
    project_id: str | None = ProjectId,
    page_number: str | None = PageNumber,
    page_size: str | None = PageSize,
    search: str | None = Search,
    ctx: Services = CtxDep,
    project: Project = ProjectDep,
) -> Any:
    return _members(ctx, project, group_uuid, page_number, page_size, search, candidates=True)


@router.post("/user-groups/{group_uuid}/members", response_model=v3wire.MembershipV3)
def add_members(
    group_uuid: str,
    body: MembershipChange,
    project_id: str | None = ProjectId,
    ctx: Services = CtxDep,
    project: Project = ProjectDep,
) -> Any:
    added, no_op = user_groups.add_members(ctx, project, group_uuid, body)
    return v3wire.MembershipV3(added_count=added, no_op_count=no_op)


@router.post("/user-groups/{group_uuid}/members/bulk-remove", response_model=v3wire.MembershipV3)
def remove_members(
    group_uuid: str,
    body: MembershipChange,
    project_id: str | None = ProjectId,
    ctx: Services = CtxDep,
    project: Project = ProjectDep,
) -> Any:
    removed, no_op = user_groups.remove_members(ctx, project, group_uuid, body)
    return v3wire.MembershipV3(removed_count=removed, no_op_count=no_op)


@router.delete("/user-groups/{group_uuid}/members/{user_uuid}", response_model=v3wire.MembershipV3)
def remove_member(
    group_uuid: str,
    user_uuid: str,
    project_id: str | None = ProjectId,
    ctx: Services = CtxDep,
    project: Project = ProjectDep,
) -> Any:
    with v3_fields({r"^user_uuids\[0\]$": "user_uuid"}):
        removed, no_op = user_groups.remove_members(
            ctx, project, group_uuid, MembershipChange(user_uuids=[user_uuid])
        )
    return v3wire.MembershipV3(removed_count=removed, no_op_count=no_op)
