"""The JSON-RPC methods of ``/api/v1/memory/rpc``: params model, handler, result shape.

Handlers convert validated params to service calls and domain records to wire shapes;
the logic lives in ``services.memories`` and ``services.memory_search``.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel

from graphrecall.domain.errors import BadRequest
from graphrecall.domain.models import Memory
from graphrecall.domain.tree_paths import to_display, to_display_named
from graphrecall.retrieval.memory_filters import TemporalFilter
from graphrecall.services.accounts import projects
from graphrecall.services.accounts.spaces import Caller
from graphrecall.services.container import Services
from graphrecall.services.memory_engine import memories
from graphrecall.services.memory_engine import search as memory_search
from graphrecall.services.memory_engine.memories import MemoryInput, Temporal
from graphrecall.wire.memory_engine import params as P
from graphrecall.wire.memory_engine import wire


@dataclass(frozen=True)
class Method:
    params: type[BaseModel]
    handler: Callable[[Services, Caller, Any], Any]


def _temporal(t: P.TemporalIn | None, param: str = "temporal") -> Temporal | None:
    return None if t is None else memories.temporal_range(t.start, t.end, param=param)


def _wire(ctx: Services, caller: Caller, items: Sequence[Memory]) -> list[dict[str, Any]]:
    embedded = memories.with_embeddings(ctx, caller, [m.uuid for m in items])
    return [wire.memory(m, caller.home, m.uuid in embedded) for m in items]


def _one(ctx: Services, caller: Caller, memory: Memory) -> dict[str, Any]:
    return _wire(ctx, caller, [memory])[0]


def _input(m: P.MemoryIn, param: str) -> MemoryInput:
    return MemoryInput(
        content=m.content,
        tree=m.tree,
        id=m.id,
        name=m.name,
        meta=m.meta,
        temporal=_temporal(m.temporal, f"{param}temporal"),
    )


def create(ctx: Services, caller: Caller, p: P.Create) -> Any:
    memory, _ = memories.create(ctx, caller, _input(p, ""), p.onConflict or "error")
    return _one(ctx, caller, memory)


def batch_create(ctx: Services, caller: Caller, p: P.BatchCreate) -> Any:
    items = [_input(m, f"memories[{i}].") for i, m in enumerate(p.memories)]
    results = memories.batch_create(ctx, caller, items, p.onConflict or "error")
    return {"results": [{"id": uuid, "status": status} for uuid, status in results]}


def get(ctx: Services, caller: Caller, p: P.ById) -> Any:
    return _one(ctx, caller, memories.get(ctx, caller, p.id))


def get_by_path(ctx: Services, caller: Caller, p: P.ByPath) -> Any:
    return _one(ctx, caller, memories.get_by_path(ctx, caller, p.path))


def update(ctx: Services, caller: Caller, p: P.Update) -> Any:
    given = p.model_fields_set
    changes: dict[str, Any] = {
        key: getattr(p, key) for key in ("content", "meta", "tree") if getattr(p, key) is not None
    }
    if "name" in given:  # null clears the name
        changes["name"] = p.name
    if "temporal" in given:  # null clears the range
        changes["temporal"] = _temporal(p.temporal)
    return _one(ctx, caller, memories.update(ctx, caller, p.id, p.versionHash, changes))


def delete(ctx: Services, caller: Caller, p: P.ById) -> Any:
    memories.delete(ctx, caller, p.id)
    return {"deleted": True}


def delete_by_path(ctx: Services, caller: Caller, p: P.ByPath) -> Any:
    memories.delete_by_path(ctx, caller, p.path)
    return {"deleted": True}


def search(ctx: Services, caller: Caller, p: P.Search) -> Any:
    temporal = None
    if p.temporal is not None:
        t = p.temporal
        temporal = TemporalFilter(
            contains=t.contains,
            overlaps=(t.overlaps.start, t.overlaps.end) if t.overlaps else None,
            within=(t.within.start, t.within.end) if t.within else None,
            before=t.before,
            after=t.after,
        )
        if temporal == TemporalFilter():
            raise BadRequest("temporal: give at least one predicate", param="temporal")
    weights = p.weights or P.Weights()
    result = memory_search.search(
        ctx,
        caller,
        memory_search.MemoryQuery(
            semantic=p.semantic,
            fulltext=p.fulltext,
            grep=p.grep,
            meta=p.meta,
            # "" is "no predicate", as upstream's truthiness test has it
            meta_predicate=p.metaPredicate or None,
            tree=p.tree,
            temporal=temporal,
            weight_semantic=1.0 if weights.semantic is None else weights.semantic,
            weight_fulltext=1.0 if weights.fulltext is None else weights.fulltext,
            candidate_limit=p.candidateLimit,
            semantic_threshold=p.semanticThreshold,
            limit=p.limit or memory_search.DEFAULT_LIMIT,
            order_by=p.orderBy or "desc",
        ),
    )
    items = _wire(ctx, caller, [m for m, _ in result.hits])
    for item, (_, score) in zip(items, result.hits, strict=True):
        item["score"] = round(score, 6)
    return {"results": items, "total": result.total, "limit": result.limit}


def tree(ctx: Services, caller: Caller, p: P.Tree) -> Any:
    nodes = memories.tree(ctx, caller, p.tree, p.levels)
    return {"nodes": [{"path": to_display(path, caller.home), "count": n} for path, n in nodes]}


def copy(ctx: Services, caller: Caller, p: P.Transfer) -> Any:
    return {"count": memories.copy(ctx, caller, p.source, p.destination, bool(p.dryRun))}


def move(ctx: Services, caller: Caller, p: P.Transfer) -> Any:
    return {"count": memories.move(ctx, caller, p.source, p.destination, bool(p.dryRun))}


def delete_tree(ctx: Services, caller: Caller, p: P.DeleteTree) -> Any:
    return {"count": memories.delete_tree(ctx, caller, p.tree, bool(p.dryRun))}


def delete_orphans_in_tree(ctx: Services, caller: Caller, p: P.DeleteOrphansInTree) -> Any:
    keep = [(slot.tree, slot.name) for slot in p.keep]
    orphans = memories.delete_orphans(ctx, caller, p.root, p.metaContains, keep, bool(p.dryRun))
    paths = [to_display_named(m.tree, m.name or "", caller.home) for m in orphans]
    return {"count": len(paths), "paths": paths}


def count_tree(ctx: Services, caller: Caller, p: P.CountTree) -> Any:
    if not p.tree.strip():
        raise BadRequest("tree filter is required", param="tree")
    return {"count": memories.count(ctx, caller, p.tree, p.maxCount)}


def embedding_status(ctx: Services, caller: Caller, p: P.Empty) -> Any:
    return memories.embedding_status(ctx, caller)


def history(ctx: Services, caller: Caller, p: P.History) -> Any:
    limit = p.limit or 20
    events, next_cursor = memories.history(
        ctx,
        caller,
        memories.HistoryQuery(
            memory_id=p.memoryId,
            path=p.path,
            tree=p.tree,
            operation=p.operation,
            operation_id=p.operationId,
            since=p.since,
            until=p.until,
            cursor=p.cursor,
            limit=limit,
            order=p.order or "desc",
        ),
    )
    return {
        "events": [wire.event(e, caller.home) for e in events],
        "limit": limit,
        "nextCursor": next_cursor,
    }


def revert(ctx: Services, caller: Caller, p: P.Revert) -> Any:
    memory = memories.revert(
        ctx,
        caller,
        memory_id=p.id,
        path=p.path,
        version=p.version,
        expected_hash=p.expectedVersionHash,
    )
    return _one(ctx, caller, memory)


def access_effective(ctx: Services, caller: Caller, p: P.AccessEffective) -> Any:
    """Every key of the space's project has owner access to the whole space."""
    if p.principalId and p.principalId != caller.principal_id:
        raise BadRequest("only the caller's own access can be inspected", param="principalId")
    space = caller.space
    return {
        "space": {"id": space.uuid, "slug": space.slug, "name": space.name},
        "principal": {
            "id": caller.principal_id,
            "kind": "s",
            "name": caller.principal_name,
            "ownerId": None,
            "admin": True,
        },
        "authenticatedAs": None,
        "access": [{"treePath": "/", "access": 3, "accessName": "owner"}],
    }


def list_members(ctx: Services, caller: Caller, p: P.ListMembers) -> Any:
    """The space's members are the live API keys of its project, each a service-account
    principal ("s"): there are no user accounts here."""
    if p.kind == "u":
        return {"members": []}
    keys = projects.project_keys(ctx.store, caller.project)
    return {"members": [{"id": k.uuid, "name": k.name or k.prefix, "kind": "s"} for k in keys]}


METHODS: dict[str, Method] = {
    "memory.create": Method(P.Create, create),
    "memory.batchCreate": Method(P.BatchCreate, batch_create),
    "memory.get": Method(P.ById, get),
    "memory.getByPath": Method(P.ByPath, get_by_path),
    "memory.update": Method(P.Update, update),
    "memory.delete": Method(P.ById, delete),
    "memory.deleteByPath": Method(P.ByPath, delete_by_path),
    "memory.search": Method(P.Search, search),
    "memory.tree": Method(P.Tree, tree),
    "memory.copy": Method(P.Transfer, copy),
    "memory.move": Method(P.Transfer, move),
    "memory.deleteTree": Method(P.DeleteTree, delete_tree),
    "memory.deleteOrphansInTree": Method(P.DeleteOrphansInTree, delete_orphans_in_tree),
    "memory.countTree": Method(P.CountTree, count_tree),
    "memory.embeddingStatus": Method(P.Empty, embedding_status),
    "memory.history": Method(P.History, history),
    "memory.revert": Method(P.Revert, revert),
    "access.effective": Method(P.AccessEffective, access_effective),
    "space.listMembers": Method(P.ListMembers, list_members),
}
