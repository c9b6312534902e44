"""Graphs: standard graphs and the graph every user owns.

``resolve`` is the one place that turns a path's ``graph_uuid`` into a graph of the
caller's project; per the Zep docs a user's UUID is accepted for the user's graph.
Another project's graph is reported as not found, never as forbidden.
"""

from __future__ import annotations

from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from graphrecall.domain import clock
from graphrecall.domain.errors import BadRequest, NotFound
from graphrecall.domain.ids import check_uuid, new_id
from graphrecall.domain.inputs import GraphCreate, GraphUpdate
from graphrecall.domain.models import (
    Graph,
    Page,
    PageRequest,
    Project,
    Task,
    Thread,
    User,
)
from graphrecall.ingest.clone import CLONE_TASK
from graphrecall.services import erasure, tasks
from graphrecall.services.accounts.projects import check_time_zone
from graphrecall.services.container import Services


def resolve(
    ctx: Services, project: Project, graph_uuid: str, *, param: str = "graph_uuid"
) -> Graph:
    graph_uuid = check_uuid(graph_uuid, param=param)
    graph = ctx.store.get(Graph, graph_uuid, {"project_uuid": project.uuid})
    if graph is None:
        user = ctx.store.get(User, graph_uuid, {"project_uuid": project.uuid})
        if user is not None:
            graph = ctx.store.get(Graph, user.graph_uuid, {"project_uuid": project.uuid})
    if graph is None:
        raise NotFound("graph", graph_uuid, param=param)
    return graph


def time_zone_of(ctx: Services, project: Project, graph: Graph) -> str:
    """The user's zone (user graphs), else the graph's, else the project's, else UTC;
    a value that is not a valid IANA zone is skipped."""
    options: list[str | None] = []
    if graph.user_uuid:
        user = ctx.store.get(User, graph.user_uuid, {"project_uuid": project.uuid})
        options.append(user.time_zone if user else None)
    options += [graph.time_zone, project.default_time_zone]
    for name in options:
        if not name:
            continue
        try:
            ZoneInfo(name)
        except (ZoneInfoNotFoundError, ValueError):
            continue
        return name
    return "UTC"


def _standard_graph(
    project: Project,
    name: str | None,
    description: str | None,
    time_zone: str | None,
    graph_id: str | None = None,
) -> Graph:
    """A new standard graph (its graph_id the caller's, else its uuid), not stored."""
    stamp = clock.now()
    uuid = new_id()
    return Graph(
        uuid=uuid,
        project_uuid=project.uuid,
        type="standard",
        graph_id=graph_id or uuid,
        name=name,
        description=description,
        time_zone=time_zone,
        created_at=stamp,
        updated_at=stamp,
    )


def create_graph(
    ctx: Services, project: Project, body: GraphCreate, graph_id: str | None = None
) -> Graph:
    """A standard graph; ``graph_id`` is the caller's id for it (Zep v3 addresses graphs
    by it), unique in the project."""
    time_zone = check_time_zone(body.time_zone, param="time_zone")
    graph = _standard_graph(project, body.name, body.description, time_zone, graph_id)
    with ctx.store.transaction():
        _check_graph_id_free(ctx, project, graph_id)
        ctx.store.insert([graph])
    return graph


def _check_graph_id_free(
    ctx: Services, project: Project, graph_id: str | None, *, param: str = "graph_id"
) -> None:
    if graph_id and ctx.store.find(
        Graph, {"project_uuid": project.uuid, "graph_id": graph_id}, limit=1
    ):
        raise BadRequest(f"graph_id {graph_id!r} is already taken", param=param)


def update_graph(ctx: Services, project: Project, graph_uuid: str, body: GraphUpdate) -> Graph:
    graph = resolve(ctx, project, graph_uuid)
    changes = body.model_dump(exclude_unset=True)
    if "time_zone" in changes:
        check_time_zone(changes["time_zone"], param="time_zone")
    updated = graph.model_copy(update={**changes, "updated_at": clock.now()})
    ctx.store.update(updated)
    return updated


def list_graphs(
    ctx: Services,
    project: Project,
    page: PageRequest,
    search: str | None = None,
    graph_type: str | None = None,
) -> Page[Graph]:
    """The project's graphs; ``graph_type`` "standard" leaves out the users' graphs
    (Zep v3 lists only those, a user's graph being reached through its user)."""
    scope = {"project_uuid": project.uuid}
    if graph_type:
        scope["type"] = graph_type
    return ctx.store.list_page(
        Graph,
        scope,
        page,
        search=search,
        search_fields=("name", "description", "graph_id"),
    )


def lookup_graph(
    ctx: Services,
    project: Project,
    *,
    graph_id: str | None,
    thread_id: str | None,
    user_id: str | None,
) -> Graph:
    """Resolve a legacy identifier (graph_id, thread_id or user_id) to its graph."""
    scope = {"project_uuid": project.uuid}
    if graph_id:
        found = ctx.store.find(Graph, {**scope, "graph_id": graph_id}, limit=1)
        if found:
            return found[0]
        raise NotFound("graph", graph_id, param="graph_id")
    if thread_id:
        threads = ctx.store.find(Thread, {**scope, "thread_id": thread_id}, limit=1)
        if threads:
            return resolve(ctx, project, threads[0].graph_uuid)
        raise NotFound("thread", thread_id, param="thread_id")
    if user_id:
        users = ctx.store.find(User, {**scope, "user_id": user_id}, limit=1)
        if users:
            return resolve(ctx, project, users[0].graph_uuid)
        raise NotFound("user", user_id, param="user_id")
    raise BadRequest("give one of graph_id, thread_id or user_id", param="graph_id")


def clone_graph(
    ctx: Services, project: Project, graph_uuid: str, graph_id: str | None = None
) -> tuple[Graph, Task]:
    """A new standard graph, returned at once, and the task that copies the source's
    records into it (ingest/clone.py). A user graph's copy is a standard graph too: a
    clone makes no user. ``graph_id``: the copy's id (Zep v3's ``target_graph_id``),
    unique in the project."""
    source = resolve(ctx, project, graph_uuid)
    time_zone = time_zone_of(ctx, project, source) if source.user_uuid else source.time_zone
    graph = _standard_graph(project, source.name, source.description, time_zone, graph_id)
    with ctx.store.transaction():
        _check_graph_id_free(ctx, project, graph_id, param="target_graph_id")
        ctx.store.insert([graph])
        task = tasks.enqueue(
            ctx, project.uuid, graph.uuid, CLONE_TASK, {"source_graph_uuid": source.uuid}
        )
    ctx.wake_worker()
    return graph, task


def purge_graph_data(ctx: Services, graph_uuid: str) -> None:
    """Delete everything stored in a graph (inside the caller's transaction). Plain
    deletes: no record whose search columns they would move is left. Marked for
    erasure (services/erasure.py)."""
    for kind in erasure.GRAPH_KINDS:
        ctx.store.delete(kind, {"graph_uuid": graph_uuid})
    erasure.mark(ctx, erasure.GRAPH_KINDS)


def delete_graph(ctx: Services, project: Project, graph_uuid: str) -> Task:
    graph = resolve(ctx, project, graph_uuid)
    if graph.type == "user":
        raise BadRequest(
            "a user graph is deleted with its user: DELETE /users/{user_uuid}", param="graph_uuid"
        )
    with ctx.store.transaction():
        purge_graph_data(ctx, graph.uuid)
        ctx.store.delete(Graph, {"uuid": graph.uuid, "project_uuid": project.uuid})
        erasure.drop_graph_events(ctx, project.uuid, graph.uuid)
        erasure.mark(ctx, (Graph,))
    return erasure.completed(ctx, project.uuid, graph.uuid, "graph.delete", "graph", graph.uuid)


def warm_graph(ctx: Services, project: Project, graph_uuid: str) -> Task:
    """``graph.warm``: the graph's in-memory copies (vector matrices, filter columns) are
    read into this process now, and the shared ones (term indexes) started; the task
    returned has already succeeded and its result says what was read and what is still
    being built. Done in the serving process, not by a worker, whose caches are its own."""
    graph = resolve(ctx, project, graph_uuid)
    warmed = ctx.store.maintenance.warm("graph_uuid", graph.uuid)
    return tasks.completed(ctx, project.uuid, graph.uuid, "graph.warm", dict(warmed))
