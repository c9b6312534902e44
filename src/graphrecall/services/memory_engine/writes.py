"""The write path every memory operation shares: versioned values, lookups by path,
the per-operation write record, the audit log and the embedding queue.

Every write is one transaction that also appends to the space's audit log and, when the
text changed, forgets the old vector and queues the memory for embedding by the worker.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import timedelta
from typing import Any

from graphrecall.domain import clock
from graphrecall.domain import predicates as p
from graphrecall.domain.errors import BadRequest, Conflict
from graphrecall.domain.ids import new_id
from graphrecall.domain.models import Memory, MemoryEvent
from graphrecall.domain.tree_paths import split_named, to_stored
from graphrecall.services import erasure, tasks
from graphrecall.services.accounts.spaces import Caller
from graphrecall.services.container import Services

Temporal = tuple[str, str]  # stored-form (start, end); a point has start == end
EMBED_TASK = "memory.embed"
EMBED_CHUNK = 64
HISTORY_RETENTION = timedelta(days=30)
STALE = (
    "Memory was modified; the version_hash is stale. Fetch the memory again to get the"
    " latest version_hash, re-apply your changes and retry"
)


@dataclass
class Write:
    """The rows one operation changes, logged and embedded together."""

    caller: Caller
    cause: str
    operation_id: str = field(default_factory=new_id)
    events: list[MemoryEvent] = field(default_factory=list)
    to_embed: list[str] = field(default_factory=list)


# -- values --------------------------------------------------------------------------------


def temporal_range(start: str, end: str | None, *, param: str = "temporal") -> Temporal:
    """``{start, end?}``: no end (or end == start) is the point [t, t]; else [start, end)."""
    if end is None or end == start:
        return (start, start)
    if end < start:
        raise BadRequest(f"{param}.end must not be before {param}.start", param=f"{param}.end")
    return (start, end)


def version_hash(
    tree: str, name: str | None, meta: dict[str, Any], temporal: Temporal | None, content: str
) -> str:
    """32 hex chars over the versioned fields; equal states hash equal."""
    doc = {"tree": tree, "name": name, "meta": meta, "temporal": temporal, "content": content}
    raw = json.dumps(doc, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.md5(raw.encode(), usedforsecurity=False).hexdigest()


def temporal_of(memory: Memory | MemoryEvent) -> Temporal | None:
    if memory.temporal_start is None or memory.temporal_end is None:
        return None
    return (memory.temporal_start, memory.temporal_end)


def rehash(memory: Memory) -> Memory:
    digest = version_hash(
        memory.tree, memory.name, memory.meta, temporal_of(memory), memory.content
    )
    return memory.model_copy(update={"version_hash": digest})


def new_version(memory: Memory, stamp: str, **changes: Any) -> Memory | None:
    """``memory`` with ``changes`` as a new version, or None when nothing changes."""
    if "temporal" in changes:
        temporal = changes.pop("temporal")
        changes["temporal_start"], changes["temporal_end"] = temporal or (None, None)
    changed = rehash(memory.model_copy(update=changes))
    if changed.version_hash == memory.version_hash:
        return None
    return changed.model_copy(update={"version": memory.version + 1, "updated_at": stamp})


# -- lookups ------------------------------------------------------------------------------


def split_path(caller: Caller, path: str, param: str) -> tuple[str, str]:
    tree, name = split_named(path)
    if not name:
        raise BadRequest(f"{param} must end in a name", param=param)
    return to_stored(tree, caller.home, param=param), name


def named(ctx: Services, caller: Caller, tree: str, name: str) -> Memory | None:
    found = ctx.store.find(
        Memory, {"space_uuid": caller.space.uuid, "tree": tree, "name": name}, limit=1
    )
    return found[0] if found else None


def check_slot(ctx: Services, caller: Caller, memory: Memory, param: str) -> None:
    """A named memory's (tree, name) must be free."""
    if memory.name is None:
        return
    holder = named(ctx, caller, memory.tree, memory.name)
    if holder is not None and holder.uuid != memory.uuid:
        raise Conflict(f"a memory named {memory.name!r} already exists in that tree", param=param)


# -- the audit log -------------------------------------------------------------------------


def record(write: Write, memory: Memory, operation: str, *, embed: bool = False) -> None:
    caller = write.caller
    write.events.append(
        MemoryEvent(
            uuid=new_id(),
            space_uuid=memory.space_uuid,
            memory_uuid=memory.uuid,
            at=clock.now(),
            operation=operation,  # type: ignore[arg-type]
            operation_id=write.operation_id,
            cause=write.cause,
            actor={"principalId": caller.principal_id, "principalName": caller.principal_name},
            content=memory.content,
            meta=memory.meta,
            tree=memory.tree,
            name=memory.name,
            temporal_start=memory.temporal_start,
            temporal_end=memory.temporal_end,
            version=memory.version,
            version_hash=memory.version_hash,
        )
    )
    if embed:
        write.to_embed.append(memory.uuid)


def commit(ctx: Services, write: Write) -> None:
    """Inside the write's transaction: the log entries, old vectors out, embedding queued."""
    if write.events:
        ctx.store.insert(write.events)
        ctx.store.delete(
            MemoryEvent,
            {"space_uuid": write.caller.space.uuid, "uuid": _expired_events(ctx, write)},
        )
    if not write.to_embed:
        return
    ctx.store.delete_embeddings(Memory, write.caller.space.uuid, write.to_embed)
    if ctx.embedder is None:
        return
    for start in range(0, len(write.to_embed), EMBED_CHUNK):
        tasks.enqueue(
            ctx,
            write.caller.project.uuid,
            None,
            EMBED_TASK,
            {
                "space_uuid": write.caller.space.uuid,
                "memories": write.to_embed[start : start + EMBED_CHUNK],
            },
        )


def _expired_events(ctx: Services, write: Write) -> list[str]:
    """Events past retention (event ids are UUIDv7, so an id bound is a time bound)."""
    ms = int((clock.now_dt() - HISTORY_RETENTION).timestamp() * 1000)
    bound = f"{ms:012x}"
    first = f"{bound[:8]}-{bound[8:]}-7000-8000-000000000000"
    old = ctx.store.find(
        MemoryEvent,
        {"space_uuid": write.caller.space.uuid},
        where=p.Column("uuid", "lt", first),
        limit=500,
    )
    return [e.uuid for e in old]


def forget(ctx: Services, write: Write, rows: Sequence[Memory]) -> None:
    """Inside the deleting transaction, after ``rows`` were deleted. By default their
    history goes with them (a privacy-first deviation from Memory Engine, whose history
    and revert outlive a delete: docs/memory-engine.md), so nothing serves or restores
    their content; with ``GRAPHRECALL_DELETED_HISTORY_SECONDS`` the delete is logged and
    the history kept that long (``expire_deleted_history`` erases it then). Either way
    the tables are marked for erasure (services/erasure.py)."""
    if ctx.deleted_history_seconds > 0:
        for memory in rows:
            record(write, memory, "delete")
    else:
        ids = [m.uuid for m in rows]
        for start in range(0, len(ids), 500):
            ctx.store.delete(
                MemoryEvent,
                {"space_uuid": write.caller.space.uuid, "memory_uuid": ids[start : start + 500]},
            )
    commit(ctx, write)
    erasure.mark(ctx, (Memory, MemoryEvent))


def erased(ctx: Services, write: Write, rows: Sequence[Memory]) -> None:
    """After the deleting transaction: erase, and keep the receipt as a succeeded task
    of the project (``graphrecall tasks``; it names the memories by id only)."""
    if not rows:
        return
    what = rows[0].uuid if len(rows) == 1 else f"{len(rows)} memories"
    erasure.completed(
        ctx,
        write.caller.project.uuid,
        None,
        f"memory.{write.cause}",
        "memory",
        what,
        {"space_uuid": write.caller.space.uuid, "memories": [m.uuid for m in rows][:1000]},
    )


def expire_deleted_history(ctx: Services, limit: int = 500) -> int:
    """Erase the history of memories deleted longer ago than the retention window
    (``deleted_history_seconds``; with none, any history a delete left, e.g. one logged
    before the window was shortened) and not brought back since; how many memories'
    histories went. An idle worker calls it (ingest/worker.py ``idle_jobs``), so a
    window is kept to within the worker's poll period."""
    cutoff = clock.to_iso(clock.now_dt() - timedelta(seconds=ctx.deleted_history_seconds))
    deletes = ctx.store.find(
        MemoryEvent, {"operation": "delete"}, where=p.Column("at", "lt", cutoff), limit=limit
    )
    gone: dict[str, set[str]] = {}
    for event in deletes:
        gone.setdefault(event.space_uuid, set()).add(event.memory_uuid)
    erased_count = 0
    with ctx.store.transaction():
        for space, ids in sorted(gone.items()):
            live = {
                m.uuid for m in ctx.store.find(Memory, {"space_uuid": space, "uuid": sorted(ids)})
            }
            dead = sorted(ids - live)
            if live:  # reverted since: the delete event is history like any other
                ctx.store.delete(
                    MemoryEvent,
                    {"space_uuid": space, "memory_uuid": sorted(live), "operation": "delete"},
                )
            if dead:
                ctx.store.delete(MemoryEvent, {"space_uuid": space, "memory_uuid": dead})
                erased_count += len(dead)
        if gone:
            erasure.mark(ctx, (MemoryEvent,))
    if gone:
        erasure.erase(ctx, "memory history", f"{erased_count} memories")
    return erased_count


def after(ctx: Services, write: Write) -> None:
    if write.to_embed and ctx.embedder is not None:
        ctx.wake_worker()
