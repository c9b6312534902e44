"""Users. Creating a user creates the user's graph and the node that stands for the user."""

from __future__ import annotations

from graphrecall.domain import clock
from graphrecall.domain.errors import BadRequest, NotFound
from graphrecall.domain.ids import check_uuid, new_id
from graphrecall.domain.inputs import UserCreate, UserUpdate
from graphrecall.domain.models import (
    Graph,
    Node,
    Page,
    PageRequest,
    Project,
    Task,
    Thread,
    User,
    UserGroupMember,
)
from graphrecall.services import erasure, tasks
from graphrecall.services.accounts.projects import check_time_zone
from graphrecall.services.container import Services
from graphrecall.services.graph import graphs

USER_LABEL = "User"


def display_name(user: User) -> str:
    full = " ".join(p for p in (user.first_name, user.last_name) if p)
    return full or user.user_id or user.email or f"user {user.uuid[:8]}"


def get_user(ctx: Services, project: Project, user_uuid: str) -> User:
    user_uuid = check_uuid(user_uuid, param="user_uuid")
    user = ctx.store.get(User, user_uuid, {"project_uuid": project.uuid})
    if user is None:
        raise NotFound("user", user_uuid, param="user_uuid")
    return user


def create_user(ctx: Services, project: Project, body: UserCreate) -> User:
    check_time_zone(body.time_zone, param="time_zone")
    stamp = clock.now()
    user_uuid, graph_uuid, node_uuid = new_id(), new_id(), new_id()
    user = User(
        uuid=user_uuid,
        project_uuid=project.uuid,
        graph_uuid=graph_uuid,
        node_uuid=node_uuid,
        user_id=body.user_id,
        email=body.email,
        first_name=body.first_name,
        last_name=body.last_name,
        metadata=body.metadata,
        time_zone=body.time_zone,
        disable_default_ontology=body.disable_default_ontology,
        created_at=stamp,
        updated_at=stamp,
    )
    graph = Graph(
        uuid=graph_uuid,
        project_uuid=project.uuid,
        type="user",
        user_uuid=user_uuid,
        time_zone=body.time_zone,
        created_at=stamp,
        updated_at=stamp,
    )
    node = Node(
        uuid=node_uuid,
        graph_uuid=graph_uuid,
        name=display_name(user),
        labels=[USER_LABEL],
        summary=None,
        attributes={"user_uuid": user_uuid},
        created_at=stamp,
        updated_at=stamp,
    )
    with ctx.store.transaction():
        if body.user_id is not None and ctx.store.find(
            User, {"project_uuid": project.uuid, "user_id": body.user_id}, limit=1
        ):
            raise BadRequest(f"user_id {body.user_id!r} is already taken", param="user_id")
        ctx.store.insert([user, graph, node])
        tasks.enqueue(ctx, project.uuid, graph_uuid, "graph.add_nodes", {"nodes": [node.uuid]})
    ctx.wake_worker()
    return user


def update_user(ctx: Services, project: Project, user_uuid: str, body: UserUpdate) -> User:
    user = get_user(ctx, project, user_uuid)
    changes = body.model_dump(exclude_unset=True)
    if "time_zone" in changes:
        check_time_zone(changes["time_zone"], param="time_zone")
    updated = user.model_copy(update={**changes, "updated_at": clock.now()})
    with ctx.store.transaction():
        ctx.store.update(updated)
        node = user_node(ctx, project, updated.uuid)
        name = display_name(updated)
        if node.name != name:
            ctx.store.update(node.model_copy(update={"name": name, "updated_at": clock.now()}))
    return updated


def list_users(
    ctx: Services, project: Project, page: PageRequest, search: str | None = None
) -> Page[User]:
    return ctx.store.list_page(
        User,
        {"project_uuid": project.uuid},
        page,
        search=search,
        search_fields=("user_id", "email", "first_name", "last_name"),
    )


def lookup_user(
    ctx: Services,
    project: Project,
    *,
    user_id: str | None,
    graph_id: str | None,
    thread_id: str | None,
) -> User:
    if user_id:
        found = ctx.store.find(User, {"project_uuid": project.uuid, "user_id": user_id}, limit=1)
        if not found:
            raise NotFound("user", user_id, param="user_id")
        return found[0]
    graph = graphs.lookup_graph(ctx, project, graph_id=graph_id, thread_id=thread_id, user_id=None)
    if graph.user_uuid is None:
        raise NotFound("user", graph.uuid, param="graph_id")
    return get_user(ctx, project, graph.user_uuid)


def user_node(ctx: Services, project: Project, user_uuid: str) -> Node:
    user = get_user(ctx, project, user_uuid)
    node = ctx.store.get(Node, user.node_uuid, {"graph_uuid": user.graph_uuid})
    if node is None:
        raise NotFound("user node", user.uuid, param="user_uuid")
    return node


def delete_user(ctx: Services, project: Project, user_uuid: str) -> Task:
    user = get_user(ctx, project, user_uuid)
    with ctx.store.transaction():
        graphs.purge_graph_data(ctx, user.graph_uuid)
        ctx.store.delete(Thread, {"user_uuid": user.uuid})
        ctx.store.delete(Graph, {"uuid": user.graph_uuid, "project_uuid": project.uuid})
        ctx.store.delete(User, {"uuid": user.uuid, "project_uuid": project.uuid})
        ctx.store.delete(UserGroupMember, {"project_uuid": project.uuid, "user_uuid": user.uuid})
        erasure.drop_graph_events(ctx, project.uuid, user.graph_uuid)
        erasure.mark(ctx, (Thread, Graph, User, UserGroupMember))
    return erasure.completed(ctx, project.uuid, user.graph_uuid, "user.delete", "user", user.uuid)
