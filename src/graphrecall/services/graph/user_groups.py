"""User groups: named sets of a project's users. In Zep a group is a security subject
(access policies for its MCP server attach to it), not a data container: grouping users
moves or shares none of their data, so here a group is its record and its memberships."""

from __future__ import annotations

from typing import Any

from graphrecall.domain import clock
from graphrecall.domain.errors import Conflict, NotFound
from graphrecall.domain.ids import check_uuid, new_id
from graphrecall.domain.inputs import MembershipChange, UserGroupCreate, UserGroupUpdate
from graphrecall.domain.models import (
    Page,
    PageRequest,
    Project,
    User,
    UserGroup,
    UserGroupMember,
)
from graphrecall.domain.predicates import Column, Not
from graphrecall.services.container import Services
from graphrecall.services.graph import users

USER_SEARCH_FIELDS = ("user_id", "email", "first_name", "last_name")


class VersionConflict(Conflict):
    code = "version_conflict"


def create_group(ctx: Services, project: Project, body: UserGroupCreate) -> UserGroup:
    stamp = clock.now()
    group = UserGroup(
        uuid=new_id(),
        project_uuid=project.uuid,
        name=body.name,
        description=body.description,
        created_at=stamp,
        updated_at=stamp,
    )
    ctx.store.insert([group])
    return group


def get_group(ctx: Services, project: Project, group_uuid: str) -> UserGroup:
    group_uuid = check_uuid(group_uuid, param="group_uuid")
    group = ctx.store.get(UserGroup, group_uuid, {"project_uuid": project.uuid})
    if group is None:
        raise NotFound("user group", group_uuid, param="group_uuid")
    return group


def list_groups(
    ctx: Services, project: Project, page: PageRequest, search: str | None = None
) -> Page[UserGroup]:
    return ctx.store.list_page(
        UserGroup,
        {"project_uuid": project.uuid},
        page,
        search=search,
        search_fields=("name", "description"),
    )


def update_group(
    ctx: Services, project: Project, group_uuid: str, body: UserGroupUpdate
) -> UserGroup:
    with ctx.store.transaction():
        group = get_group(ctx, project, group_uuid)
        if body.expected_version is not None and body.expected_version != group.version:
            raise VersionConflict(
                f"the user group is at version {group.version}, not {body.expected_version}",
                param="expected_version",
            )
        changes: dict[str, Any] = body.model_dump(
            exclude_unset=True, exclude_none=True, exclude={"expected_version"}
        )
        if not changes:
            return group
        updated = group.model_copy(
            update={**changes, "version": group.version + 1, "updated_at": clock.now()}
        )
        ctx.store.update(updated)
    return updated


def delete_group(ctx: Services, project: Project, group_uuid: str) -> None:
    group = get_group(ctx, project, group_uuid)
    with ctx.store.transaction():
        ctx.store.delete(UserGroupMember, {"project_uuid": project.uuid, "group_uuid": group.uuid})
        ctx.store.delete(UserGroup, {"project_uuid": project.uuid, "uuid": group.uuid})


def _users(ctx: Services, project: Project, body: MembershipChange) -> list[str]:
    """The request's users, each of this project (else a 404 naming it), once each."""
    out: list[str] = []
    for i, raw in enumerate(body.user_uuids):
        param = f"user_uuids[{i}]"
        uuid = check_uuid(raw, param=param)
        if ctx.store.get(User, uuid, {"project_uuid": project.uuid}) is None:
            raise NotFound("user", uuid, param=param)
        if uuid not in out:
            out.append(uuid)
    return out


def _member_uuids(ctx: Services, project: Project, group: UserGroup) -> list[str]:
    scope = {"project_uuid": project.uuid, "group_uuid": group.uuid}
    return [m.user_uuid for m in ctx.store.find(UserGroupMember, scope)]


def add_members(
    ctx: Services, project: Project, group_uuid: str, body: MembershipChange
) -> tuple[int, int]:
    """(added, already members); all or nothing."""
    with ctx.store.transaction():
        group = get_group(ctx, project, group_uuid)
        wanted = _users(ctx, project, body)
        scope = {"project_uuid": project.uuid, "group_uuid": group.uuid, "user_uuid": wanted}
        present = {m.user_uuid for m in ctx.store.find(UserGroupMember, scope)}
        stamp = clock.now()
        new = [
            UserGroupMember(
                uuid=new_id(),
                project_uuid=project.uuid,
                group_uuid=group.uuid,
                user_uuid=u,
                created_at=stamp,
            )
            for u in wanted
            if u not in present
        ]
        ctx.store.insert(new)
    return len(new), len(wanted) - len(new)


def remove_members(
    ctx: Services, project: Project, group_uuid: str, body: MembershipChange
) -> tuple[int, int]:
    """(removed, not members); all or nothing."""
    with ctx.store.transaction():
        group = get_group(ctx, project, group_uuid)
        wanted = _users(ctx, project, body)
        scope = {"project_uuid": project.uuid, "group_uuid": group.uuid, "user_uuid": wanted}
        removed = ctx.store.delete(UserGroupMember, scope)
    return removed, len(wanted) - removed


def remove_member(ctx: Services, project: Project, group_uuid: str, user_uuid: str) -> None:
    """Idempotent: a user of the project who is not a member is left as is."""
    group = get_group(ctx, project, group_uuid)
    user = users.get_user(ctx, project, user_uuid)
    ctx.store.delete(
        UserGroupMember,
        {"project_uuid": project.uuid, "group_uuid": group.uuid, "user_uuid": user.uuid},
    )


def list_members(
    ctx: Services,
    project: Project,
    group_uuid: str,
    page: PageRequest,
    search: str | None = None,
    *,
    candidates: bool = False,
) -> Page[User]:
    """The group's members, or with ``candidates`` the project's users who are not."""
    group = get_group(ctx, project, group_uuid)
    members = _member_uuids(ctx, project, group)
    scope: dict[str, Any] = {"project_uuid": project.uuid}
    where = None
    if candidates:
        where = Not(Column("uuid", "in", tuple(members))) if members else None
    else:
        scope["uuid"] = members
    return ctx.store.list_page(
        User, scope, page, search=search, search_fields=USER_SEARCH_FIELDS, where=where
    )


def groups_of_user(
    ctx: Services, project: Project, user_uuid: str, page: PageRequest
) -> Page[UserGroup]:
    user = users.get_user(ctx, project, user_uuid)
    scope = {"project_uuid": project.uuid, "user_uuid": user.uuid}
    groups = [m.group_uuid for m in ctx.store.find(UserGroupMember, scope)]
    return ctx.store.list_page(UserGroup, {"project_uuid": project.uuid, "uuid": groups}, page)
