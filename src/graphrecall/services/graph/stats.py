"""What a project or one graph holds: record counts, ingestion state and index state
(``graphrecall stats``, ``GraphRecall.stats``)."""

from __future__ import annotations

from typing import Any

from graphrecall.domain.models import (
    Edge,
    Episode,
    Graph,
    Node,
    Observation,
    Project,
    Task,
    Thread,
    ThreadSummary,
    User,
)
from graphrecall.services.container import Services
from graphrecall.services.graph import graphs

KINDS: tuple[tuple[str, type[Any]], ...] = (
    ("episodes", Episode),
    ("nodes", Node),
    ("edges", Edge),
    ("observations", Observation),
    ("thread_summaries", ThreadSummary),
)


def stats(ctx: Services, project: Project, graph_uuid: str | None = None) -> dict[str, Any]:
    """Counts of every record kind (in one graph, or in every graph of the project), the
    ingestion tasks by status with the last one finished, and the state of the text and
    vector indexes."""
    store = ctx.store
    if graph_uuid is not None:
        graph = graphs.resolve(ctx, project, graph_uuid)
        graph_uuids = [graph.uuid]
        out: dict[str, Any] = {"graph_uuid": graph.uuid, "graph_type": graph.type}
        if graph.user_uuid:
            out["user_uuid"] = graph.user_uuid
        threads = store.count(Thread, {"graph_uuid": graph.uuid})
    else:
        graph_uuids = [g.uuid for g in store.find(Graph, {"project_uuid": project.uuid})]
        out = {
            "project": project.name,
            "users": store.count(User, {"project_uuid": project.uuid}),
            "graphs": len(graph_uuids),
        }
        threads = store.count(Thread, {"project_uuid": project.uuid})
    counts = {"threads": threads}
    for name, kind in KINDS:
        counts[name] = sum(store.count(kind, {"graph_uuid": g}) for g in graph_uuids)
    out["counts"] = counts
    task_scope: dict[str, Any] = {"project_uuid": project.uuid}
    if graph_uuid is not None:
        task_scope["graph_uuid"] = graph_uuids[0]
    by_status = store.count_by(Task, "status", task_scope)
    out["tasks"] = {status: by_status.get(status, 0) for status in _STATUSES}
    finished = store.find(
        Task,
        {**task_scope, "status": "succeeded"},
        order_by="completed_at",
        limit=1,
        descending=True,
    )
    out["last_ingestion"] = finished[0].completed_at if finished else None
    out["indexes"] = {
        "vector": store.maintenance.vector_index_status(),
        "text": store.maintenance.text_index_status(),
    }
    return out


_STATUSES = ("pending", "processing", "succeeded", "partial", "failed")
