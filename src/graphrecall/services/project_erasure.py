"""Deleting a whole project (``graphrecall projects delete``): every record of the tenant
goes in one transaction (its graphs and what they hold, its users, threads, tasks,
Memory Engine spaces with their memories and history, keys, webhooks, templates,
ontologies, batches, groups), and the store erases their bytes from every file it writes
before the command returns (services/erasure.py, docs/security.md "Deletion"). The
receipt names the project and counts what went; it never holds their content.
"""

from __future__ import annotations

from typing import Any

from graphrecall.domain.errors import NotFound
from graphrecall.domain.models import (
    ApiKey,
    Batch,
    BatchItem,
    ContextTemplate,
    DebugLogging,
    Graph,
    Memory,
    MemoryEvent,
    Ontology,
    Project,
    Record,
    Space,
    SummaryInstructions,
    Task,
    Thread,
    User,
    UserGroup,
    UserGroupMember,
    WebhookDelivery,
    WebhookEndpoint,
)
from graphrecall.services import erasure
from graphrecall.services.container import Services
from graphrecall.services.graph import graphs

# The kinds a project owns by ``project_uuid``, children before their parents.
PROJECT_KINDS: tuple[type[Record], ...] = (
    BatchItem,
    Batch,
    UserGroupMember,
    UserGroup,
    WebhookDelivery,
    WebhookEndpoint,
    ContextTemplate,
    SummaryInstructions,
    Ontology,
    DebugLogging,
    Task,
    Thread,
    Graph,
    User,
    Space,
    ApiKey,
)
# A space's records, by ``space_uuid``.
SPACE_KINDS: tuple[type[Record], ...] = (MemoryEvent, Memory)


def find_project(ctx: Services, ident: str) -> Project:
    """A project by its uuid or its name (``graphrecall keys create --project NAME``)."""
    for scope in ({"uuid": ident}, {"name": ident}):
        found = ctx.store.find(Project, scope, limit=1)
        if found:
            return found[0]
    raise NotFound("project", ident, param="project")


def list_projects(ctx: Services) -> list[tuple[Project, dict[str, int]]]:
    """Every project with how many keys, users, graphs and spaces it holds."""
    out = []
    for project in ctx.store.find(Project, {}, order_by="created_at"):
        scope = {"project_uuid": project.uuid}
        counts = {
            "keys": ctx.store.count(ApiKey, scope),
            "users": ctx.store.count(User, scope),
            "graphs": ctx.store.count(Graph, scope),
            "spaces": ctx.store.count(Space, scope),
        }
        out.append((project, counts))
    return out


def delete_project(ctx: Services, project: Project) -> dict[str, Any]:
    """Delete ``project`` and everything it holds, erased; the receipt."""
    scope = {"project_uuid": project.uuid}
    graph_uuids = [g.uuid for g in ctx.store.find(Graph, scope)]
    space_uuids = [s.uuid for s in ctx.store.find(Space, scope)]
    counts: dict[str, int] = {"graphs": len(graph_uuids), "spaces": len(space_uuids)}
    with ctx.store.transaction():
        for graph_uuid in graph_uuids:
            graphs.purge_graph_data(ctx, graph_uuid)  # marks the graph kinds
        for space_uuid in space_uuids:
            for kind in SPACE_KINDS:
                counts[kind.__name__] = counts.get(kind.__name__, 0) + ctx.store.delete(
                    kind, {"space_uuid": space_uuid}
                )
        for kind in PROJECT_KINDS:
            counts[kind.__name__] = ctx.store.delete(kind, scope)
        ctx.store.delete(Project, {"uuid": project.uuid})
        erasure.mark(ctx, (*SPACE_KINDS, *PROJECT_KINDS, Project))
    receipt = erasure.erase(ctx, "project", project.uuid)
    return {**receipt, "deleted": {**receipt["deleted"], "counts": counts}}
