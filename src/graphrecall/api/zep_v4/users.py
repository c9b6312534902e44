"""/users: create, read, list, update, delete, lookup, and the user's node."""

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
from graphrecall.domain.inputs import UserCreate, UserUpdate
from graphrecall.domain.models import PageRequest
from graphrecall.services.graph import users
from graphrecall.wire.zep_v4 import answers, wire
from graphrecall.wire.zep_v4 import paging as pages
from graphrecall.wire.zep_v4.bodies import LookupBody, SearchListBody

router = make_router("users")
_paging = paging(pages.USERS)


@router.post("/users", response_model=wire.UserWire)
def create_user(body: UserCreate, ctx: Services = CtxDep, project: Project = ProjectDep) -> Any:
    return wire.user(users.create_user(ctx, project, body))


@router.post("/users/list", response_model=wire.PageWire[wire.UserWire])
def list_users(
    body: SearchListBody | None = BodyParam(default=None),
    page: PageRequest = Depends(_paging),
    ctx: Services = CtxDep,
    project: Project = ProjectDep,
) -> Any:
    result = users.list_users(ctx, project, page, body.search if body else None)
    return wire_page(result, [wire.user(u) for u in result.items])


@router.post("/users/lookup", response_model=wire.UserWire)
def lookup_user(body: LookupBody, ctx: Services = CtxDep, project: Project = ProjectDep) -> Any:
    return wire.user(
        users.lookup_user(
            ctx, project, user_id=body.user_id, graph_id=body.graph_id, thread_id=body.thread_id
        )
    )


@router.get("/users/{user_uuid}", response_model=wire.UserWire)
def get_user(user_uuid: str, ctx: Services = CtxDep, project: Project = ProjectDep) -> Any:
    return wire.user(users.get_user(ctx, project, user_uuid))


@router.patch("/users/{user_uuid}", response_model=wire.UserWire)
def update_user(
    user_uuid: str, body: UserUpdate, ctx: Services = CtxDep, project: Project = ProjectDep
) -> Any:
    return wire.user(users.update_user(ctx, project, user_uuid, body))


@router.delete("/users/{user_uuid}", response_model=wire.AsyncResult)
def delete_user(user_uuid: str, ctx: Services = CtxDep, project: Project = ProjectDep) -> Any:
    return wire.AsyncResult(task=wire.task(users.delete_user(ctx, project, user_uuid)))


@router.get("/users/{user_uuid}/node", response_model=wire.NodeWire)
def get_user_node(user_uuid: str, ctx: Services = CtxDep, project: Project = ProjectDep) -> Any:
    return answers.user_node(ctx, project, user_uuid)
