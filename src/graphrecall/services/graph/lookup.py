"""``lookup.batch``: developer-assigned ids (a graph's ``graph_id``, a thread's
``thread_id``, a user's ``user_id``) resolved to uuids, many at once. The single lookups
(``graph.lookup``, ``thread.lookup``, ``user.lookup``) are in their own services."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from graphrecall.domain.errors import BadRequest
from graphrecall.domain.models import Graph, Project, Record, Thread, User
from graphrecall.services.container import Services

# Identifiers per list (each a 400 naming the list past it).
MAX_IDS = 1000
# Identifiers per store query.
CHUNK = 500
# The lists in the order their results are returned (the order the SDK sends them),
# each with its record kind and id field.
RESOURCES: tuple[tuple[str, str, type[Record], str], ...] = (
    ("graphs", "graph", Graph, "graph_id"),
    ("threads", "thread", Thread, "thread_id"),
    ("users", "user", User, "user_id"),
)


@dataclass(frozen=True)
class Found:
    resource_type: str
    legacy_id: str
    uuid: str | None


def lookup_batch(
    ctx: Services, project: Project, requested: dict[str, Sequence[str] | None]
) -> list[Found]:
    """One result per identifier given (repeats included), in request order within each
    resource type: graphs, then threads, then users. Another project's ids are not found."""
    for param, _, _, _ in RESOURCES:
        ids = requested.get(param) or ()
        if len(ids) > MAX_IDS:
            raise BadRequest(f"at most {MAX_IDS} identifiers per list", param=param)
    results: list[Found] = []
    for param, resource, kind, field in RESOURCES:
        ids = list(requested.get(param) or ())
        wanted = sorted(set(ids))
        uuids: dict[str, str] = {}
        for start in range(0, len(wanted), CHUNK):
            scope = {"project_uuid": project.uuid, field: wanted[start : start + CHUNK]}
            for record in ctx.store.find(kind, scope):
                # Ids are unique within a project; the first made wins if one repeats.
                uuids.setdefault(getattr(record, field), record.uuid)
        results += [Found(resource, legacy_id, uuids.get(legacy_id)) for legacy_id in ids]
    return results
