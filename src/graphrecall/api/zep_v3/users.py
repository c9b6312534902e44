"""v3 users: ``/users``, ``/users/{user_id}``, its threads and node, ``/users-ordered``."""

from __future__ import annotations

from typing import Any

from fastapi import Query

from graphrecall.api.zep_v3 import ids
from graphrecall.api.zep_v3 import wire as v3wire
from graphrecall.api.zep_v3.common import (
    PAGE_SIZE_MAX,
    int_param,
    numbered,
    numbered_page,
    str_param,
)
from graphrecall.api.zep_v4.common import CtxDep, Project, ProjectDep, Services, make_router
from graphrecall.domain.inputs import UserCreate, UserUpdate
from graphrecall.domain.models import PageRequest
from graphrecall.services.graph import graphs, nodes, threads, users
from graphrecall.wire.zep_v4 import wire as v4

router = make_router("zep v3: users")
ORDERS = ("created_at", "user_id", "email", "uuid")


@router.post("/users", response_model=v3wire.UserV3)
def add_user(body: UserCreate, ctx: Services = CtxDep, project: Project = ProjectDep) -> Any:
    return v3wire.user(users.create_user(ctx, project, body))


@router.get("/users-ordered", response_model=v3wire.UserListV3)
def list_users_ordered(
    page_number: str | None = Query(None, alias="pageNumber"),
    page_size: str | None = Query(None, alias="pageSize"),
    search: str | None = Query(None, max_length=500),
    order_by: str | None = Query(None),
    asc: str | None = Query(None),
    ctx: Services = CtxDep,
    project: Project = ProjectDep,
) -> Any:
    wanted = numbered(
        page_number, page_size, order_by, asc, ORDERS, names=("pageNumber", "pageSize")
    )
    found, total = numbered_page(
        lambda page: users.list_users(ctx, project, page, str_param(search)), wanted
    )
    return v3wire.UserListV3(
        users=[v3wire.user(u) for u in found], total_count=total, row_count=len(found)
    )


@router.get("/users/{user_id}", response_model=v3wire.UserV3)
def get_user(user_id: str, ctx: Services = CtxDep, project: Project = ProjectDep) -> Any:
    return v3wire.user(ids.user(ctx, project, user_id))


@router.patch("/users/{user_id}", response_model=v3wire.UserV3)
def update_user(
    user_id: str, body: UserUpdate, ctx: Services = CtxDep, project: Project = ProjectDep
) -> Any:
    found = ids.user(ctx, project, user_id)
    return v3wire.user(users.update_user(ctx, project, found.uuid, body))


@router.delete("/users/{user_id}", response_model=v3wire.SuccessV3)
def delete_user(user_id: str, ctx: Services = CtxDep, project: Project = ProjectDep) -> Any:
    users.delete_user(ctx, project, ids.user(ctx, project, user_id).uuid)
    return v3wire.SuccessV3(message="deleted")


@router.get("/users/{user_id}/threads", response_model=list[v3wire.ThreadV3])
def get_user_threads(
    user_id: str,
    limit: str | None = Query(None),
    ctx: Services = CtxDep,
    project: Project = ProjectDep,
) -> Any:
    """A bare array of the user's threads, newest first (``limit`` as 3.x sends it)."""
    found = ids.user(ctx, project, user_id)
    size = int_param(limit, "limit", ge=1, le=PAGE_SIZE_MAX) or PAGE_SIZE_MAX
    page = threads.list_threads(
        ctx, project, PageRequest(page_size=size, order_by="created_at"), found.uuid
    )
    return [v3wire.thread(t, found.user_id) for t in page.items]


@router.get("/users/{user_id}/node", response_model=v3wire.UserNodeV3)
def get_user_node(user_id: str, ctx: Services = CtxDep, project: Project = ProjectDep) -> Any:
    found = ids.user(ctx, project, user_id)
    node = users.user_node(ctx, project, found.uuid)
    graph = graphs.resolve(ctx, project, node.graph_uuid)
    return v3wire.UserNodeV3(node=v3wire.node(v4.node(nodes.views(ctx, [node])[0], graph)))


@router.get("/users/{user_id}/warm", response_model=v3wire.SuccessV3)
def warm_user(user_id: str, ctx: Services = CtxDep, project: Project = ProjectDep) -> Any:
    """Loads what the user's graph's searches read (v4's ``graph.warm``)."""
    graphs.warm_graph(ctx, project, ids.user(ctx, project, user_id).graph_uuid)
    return v3wire.SuccessV3(message="warming")
