"""A space's memory audit log read back: history queries, revert (and undelete) to a
logged version, and the embedding backlog.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

from graphrecall.domain import clock
from graphrecall.domain import predicates as p
from graphrecall.domain.errors import BadRequest, Conflict, NotFound
from graphrecall.domain.models import Memory, MemoryEvent, PageRequest, Task
from graphrecall.domain.tree_paths import to_stored
from graphrecall.services.accounts.spaces import Caller
from graphrecall.services.container import Services
from graphrecall.services.memory_engine.writes import (
    EMBED_CHUNK,
    EMBED_TASK,
    HISTORY_RETENTION,
    STALE,
    Write,
    after,
    check_slot,
    commit,
    named,
    new_version,
    record,
    rehash,
    split_path,
    temporal_of,
)


@dataclass(frozen=True)
class HistoryQuery:
    memory_id: str | None = None
    path: str | None = None
    tree: str | None = None
    operation: str | None = None
    operation_id: str | None = None
    since: str | None = None
    until: str | None = None
    cursor: str | None = None
    limit: int = 20
    order: Literal["asc", "desc"] = "desc"


def history(ctx: Services, caller: Caller, q: HistoryQuery) -> tuple[list[MemoryEvent], str | None]:
    """Events (newest first unless ``order`` is asc) and the cursor of the next page."""
    if not (q.memory_id or q.path or q.tree or q.operation_id or q.since):
        raise BadRequest(
            "give at least one of memoryId, path, tree, operationId or since", param="memoryId"
        )
    scope: dict[str, Any] = {"space_uuid": caller.space.uuid}
    memory_id = _history_target(ctx, caller, q.path) if q.path else q.memory_id
    if memory_id:
        scope["memory_uuid"] = memory_id
    if q.operation:
        scope["operation"] = q.operation
    if q.operation_id:
        scope["operation_id"] = q.operation_id
    cutoff = clock.to_iso(clock.now_dt() - HISTORY_RETENTION)
    where: list[p.Predicate] = [p.Column("at", "gte", max(cutoff, q.since or ""))]
    if q.until:
        where.append(p.Column("at", "lt", q.until))
    if q.tree:
        where.append(p.PathUnder("tree", to_stored(q.tree, caller.home, param="tree")))
    page = ctx.store.list_page(
        MemoryEvent,
        scope,
        PageRequest(page_size=q.limit, cursor=q.cursor, order_by="uuid", order=q.order),
        where=p.all_of(where),
    )
    return page.items, page.next_cursor


def _history_target(ctx: Services, caller: Caller, path: str) -> str:
    """A path's memory: the live one, else the latest one the log saw there."""
    tree, name = split_path(caller, path, "path")
    live = named(ctx, caller, tree, name)
    if live is not None:
        return live.uuid
    seen = ctx.store.list_page(
        MemoryEvent,
        {"space_uuid": caller.space.uuid, "tree": tree, "name": name},
        PageRequest(page_size=1, order_by="uuid", order="desc"),
    ).items
    if not seen:
        raise NotFound("Memory", path, param="path")
    return seen[0].memory_uuid


def revert(
    ctx: Services,
    caller: Caller,
    *,
    memory_id: str | None,
    path: str | None,
    version: int,
    expected_hash: str | None = None,
) -> Memory:
    """Restore version ``version`` of a memory as a new version; a deleted memory comes
    back with its id (undelete)."""
    if path:
        memory_id = _history_target(ctx, caller, path)
    if not memory_id:
        raise BadRequest("give id or path", param="id")
    write = Write(caller, "revert")
    with ctx.store.transaction():
        events = ctx.store.find(
            MemoryEvent,
            {"space_uuid": caller.space.uuid, "memory_uuid": memory_id},
            where=p.Column("at", "gte", clock.to_iso(clock.now_dt() - HISTORY_RETENTION)),
        )
        states = [e for e in events if e.version == version and e.operation != "delete"]
        if not states:
            raise NotFound(
                "revertable version", f"{version} of memory {memory_id}", param="version"
            )
        target = states[-1]
        current = ctx.store.get(Memory, memory_id, {"space_uuid": caller.space.uuid})
        if current is not None and expected_hash and current.version_hash != expected_hash:
            raise Conflict(STALE, param="expectedVersionHash")
        stamp = clock.now()
        restore: dict[str, Any] = {
            "content": target.content,
            "meta": target.meta,
            "tree": target.tree,
            "name": target.name,
            "temporal": temporal_of(target),
        }
        if current is None:
            last = max(e.version for e in events)
            memory = rehash(
                Memory(
                    uuid=memory_id,
                    space_uuid=caller.space.uuid,
                    content=target.content,
                    meta=target.meta,
                    tree=target.tree,
                    name=target.name,
                    temporal_start=target.temporal_start,
                    temporal_end=target.temporal_end,
                    version=last + 1,
                    version_hash="",
                    created_at=min(e.at for e in events),
                    updated_at=stamp,
                )
            )
            check_slot(ctx, caller, memory, "version")
            ctx.store.insert([memory])
            record(write, memory, "insert", embed=True)
        else:
            changed = new_version(current, stamp, **restore)
            if changed is None:
                return current
            memory = changed
            check_slot(ctx, caller, memory, "version")
            ctx.store.update(memory)
            record(write, memory, "update", embed=memory.content != current.content)
        commit(ctx, write)
    after(ctx, write)
    return memory


def embedding_status(ctx: Services, caller: Caller) -> dict[str, Any]:
    """The space's embedding backlog: memories still without a vector."""
    missing = ctx.store.missing_embeddings(Memory, caller.space.uuid)
    oldest = None
    if missing:
        rows = ctx.store.find(Memory, {"space_uuid": caller.space.uuid, "uuid": missing[:500]})
        oldest = min((m.updated_at or m.created_at for m in rows), default=None)
    failed = ctx.store.count(
        Task,
        {"project_uuid": caller.project.uuid, "type": EMBED_TASK, "status": "failed"},
        p.JsonPath("payload", "space_uuid", "eq", caller.space.uuid),
    )
    running = ctx.store.count(
        Task,
        {"project_uuid": caller.project.uuid, "type": EMBED_TASK, "status": "processing"},
        p.JsonPath("payload", "space_uuid", "eq", caller.space.uuid),
    )
    return {
        "pending": len(missing),
        "inFlight": min(running * EMBED_CHUNK, len(missing)),
        "waiting": 0,
        "failed": failed,
        "oldestPendingAt": oldest,
    }
