"""Zep v3's developer ids resolved to the records the v4 services take.

Every v3 route names its user, thread or graph by the id the developer gave it; the v4
services are keyed by uuid. The lookups are the v4 ones (``/users/lookup`` and friends),
so an unknown id is the same 404 naming the same field."""

from __future__ import annotations

from graphrecall.domain.errors import BadRequest, NotFound
from graphrecall.domain.ids import check_uuid
from graphrecall.domain.models import (
    ContextTemplate,
    Edge,
    Episode,
    Graph,
    Node,
    Observation,
    Project,
    Record,
    Thread,
    User,
)
from graphrecall.services.container import Services
from graphrecall.services.graph import graphs, threads, users


def user(ctx: Services, project: Project, user_id: str, *, param: str = "user_id") -> User:
    """``param``: the field the id came in (``source_user_id`` for a clone's source)."""
    try:
        return users.lookup_user(ctx, project, user_id=user_id, graph_id=None, thread_id=None)
    except NotFound:
        raise NotFound("user", user_id, param=param) from None


def thread(ctx: Services, project: Project, thread_id: str, *, param: str = "thread_id") -> Thread:
    try:
        return threads.lookup_thread(ctx, project, thread_id)
    except NotFound:
        raise NotFound("thread", thread_id, param=param) from None


def graph(ctx: Services, project: Project, graph_id: str, *, param: str = "graph_id") -> Graph:
    try:
        return graphs.lookup_graph(ctx, project, graph_id=graph_id, thread_id=None, user_id=None)
    except NotFound:
        raise NotFound("graph", graph_id, param=param) from None


def target_graph(
    ctx: Services, project: Project, user_id: str | None, graph_id: str | None
) -> Graph:
    """The graph a body names by ``user_id`` (the user's graph) or ``graph_id``: one of
    them, as v3 requires."""
    if user_id and graph_id:
        raise BadRequest("give user_id or graph_id, not both", param="graph_id")
    if user_id:
        return graphs.resolve(ctx, project, user(ctx, project, user_id).graph_uuid)
    if graph_id:
        return graph(ctx, project, graph_id)
    raise BadRequest("give user_id or graph_id", param="user_id")


def item_graph(
    ctx: Services,
    project: Project,
    kind: type[Edge] | type[Node] | type[Episode] | type[Observation],
    uuid: str,
    *,
    param: str = "uuid",
) -> tuple[Record, Graph]:
    """A record named by uuid alone (v3's item routes carry no graph), with its graph;
    another project's record is not found."""
    name = kind.__name__.lower()
    uuid = check_uuid(uuid, param=param)
    record = ctx.store.get(kind, uuid)
    if record is None:
        raise NotFound(name, uuid, param=param)
    try:
        owner = graphs.resolve(ctx, project, record.graph_uuid)
    except NotFound:
        raise NotFound(name, uuid, param=param) from None
    return record, owner


def thread_ids(ctx: Services, project: Project, thread_uuids: set[str]) -> dict[str, str | None]:
    """thread uuid -> its developer id, for episodes that came from messages."""
    out: dict[str, str | None] = {}
    for uuid in thread_uuids:
        found = ctx.store.get(Thread, uuid, {"project_uuid": project.uuid})
        out[uuid] = found.thread_id if found else None
    return out


def template(ctx: Services, project: Project, template_id: str) -> ContextTemplate:
    """A context template by its v3 ``template_id``: its v4 ``name``."""
    found = ctx.store.find(
        ContextTemplate, {"project_uuid": project.uuid, "name": template_id.strip()}, limit=1
    )
    if not found:
        raise NotFound("context template", template_id, param="template_id")
    return found[0]
