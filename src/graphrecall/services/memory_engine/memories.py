"""Memories of a space: create, read, update, delete; the service the APIs call.

Subtree operations live in ``memory_trees``, the audit log read back and revert in
``memory_history``, the shared write path in ``memory_writes``; their public functions
are re-exported here so that callers keep one entry point.

Every write is one transaction that also appends to the space's audit log and, when the
text changed, forgets the old vector and queues the memory for embedding by the worker
(``hasEmbedding`` is false until then). Updates use optimistic concurrency: the caller
sends the ``version_hash`` it last saw and a stale one is a conflict.

Inputs arrive validated for shape (ids, timestamps, names) by the API layer; paths arrive
in wire form and are normalised here, where the caller's home is known.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Literal

from graphrecall.domain import clock
from graphrecall.domain.errors import BadRequest, Conflict, NotFound
from graphrecall.domain.ids import new_id
from graphrecall.domain.models import Memory
from graphrecall.domain.tree_paths import to_stored
from graphrecall.services.accounts.spaces import Caller
from graphrecall.services.container import Services
from graphrecall.services.memory_engine.history import HistoryQuery as HistoryQuery
from graphrecall.services.memory_engine.history import embedding_status as embedding_status
from graphrecall.services.memory_engine.history import history as history
from graphrecall.services.memory_engine.history import revert as revert
from graphrecall.services.memory_engine.trees import copy as copy
from graphrecall.services.memory_engine.trees import count as count
from graphrecall.services.memory_engine.trees import delete_orphans as delete_orphans
from graphrecall.services.memory_engine.trees import delete_tree as delete_tree
from graphrecall.services.memory_engine.trees import move as move
from graphrecall.services.memory_engine.trees import tree as tree
from graphrecall.services.memory_engine.writes import (
    STALE,
    Write,
    after,
    check_slot,
    commit,
    erased,
    forget,
    named,
    new_version,
    record,
    rehash,
    split_path,
)
from graphrecall.services.memory_engine.writes import (
    Temporal as Temporal,
)
from graphrecall.services.memory_engine.writes import temporal_range as temporal_range
from graphrecall.services.memory_engine.writes import version_hash as version_hash

OnConflict = Literal["error", "replace", "ignore"]
Status = Literal["inserted", "updated", "skipped"]
MAX_BATCH = 1000


@dataclass(frozen=True)
class MemoryInput:
    """One memory to create; ``tree`` is in wire form, the rest already validated."""

    content: str
    tree: str
    id: str | None = None
    name: str | None = None
    meta: dict[str, Any] | None = None
    temporal: Temporal | None = None


# -- reads ---------------------------------------------------------------------------------


def get(ctx: Services, caller: Caller, memory_id: str, *, param: str = "id") -> Memory:
    memory = ctx.store.get(Memory, memory_id, {"space_uuid": caller.space.uuid})
    if memory is None:
        raise NotFound("Memory", memory_id, param=param)
    return memory


def get_by_path(ctx: Services, caller: Caller, path: str, *, param: str = "path") -> Memory:
    tree, name = split_path(caller, path, param)
    memory = named(ctx, caller, tree, name)
    if memory is None:
        raise NotFound("Memory", path, param=param)
    return memory


def with_embeddings(ctx: Services, caller: Caller, uuids: Sequence[str]) -> set[str]:
    """The ids among ``uuids`` (the caller's space's) whose current text has a vector."""
    return set(ctx.store.get_embeddings(Memory, caller.space.uuid, list(uuids)))


# -- creates -------------------------------------------------------------------------------


def create(
    ctx: Services, caller: Caller, item: MemoryInput, on_conflict: OnConflict = "error"
) -> tuple[Memory, Status]:
    write = Write(caller, "create")
    with ctx.store.transaction():
        memory, status = _create_one(ctx, write, item, on_conflict, clock.now(), "")
        commit(ctx, write)
    after(ctx, write)
    return memory, status


def batch_create(
    ctx: Services, caller: Caller, items: Sequence[MemoryInput], on_conflict: OnConflict = "error"
) -> list[tuple[str, Status]]:
    """All rows or none, results in input order; a key twice in one batch is an error."""
    keys: set[tuple[str, ...]] = set()
    for i, item in enumerate(items):
        param = f"memories[{i}]"
        key: tuple[str, ...] | None = None
        if item.name is not None:
            key = ("name", to_stored(item.tree, caller.home, param=f"{param}.tree"), item.name)
        elif item.id is not None:
            key = ("id", item.id)
        if key is not None and key in keys:
            raise BadRequest(
                f"{param}: the same id or tree/name appears twice in this batch", param=param
            )
        if key is not None:
            keys.add(key)
    write = Write(caller, "batch_create")
    stamp = clock.now()
    with ctx.store.transaction():
        results = [
            _create_one(ctx, write, item, on_conflict, stamp, f"memories[{i}].")
            for i, item in enumerate(items)
        ]
        commit(ctx, write)
    after(ctx, write)
    return [(m.uuid, status) for m, status in results]


def _create_one(
    ctx: Services,
    write: Write,
    item: MemoryInput,
    on_conflict: OnConflict,
    stamp: str,
    prefix: str,
) -> tuple[Memory, Status]:
    caller = write.caller
    tree = to_stored(item.tree, caller.home, param=f"{prefix}tree")
    meta = item.meta or {}
    # Ids are unique per space: another space's memory with this id is not looked at, so
    # the answer never tells whether an id is in use elsewhere.
    by_id = ctx.store.get(Memory, item.id, {"space_uuid": caller.space.uuid}) if item.id else None
    existing = named(ctx, caller, tree, item.name) if item.name is not None else by_id
    if existing is None:
        if by_id is not None:  # a named create whose id belongs to another memory
            raise Conflict(f"{prefix}id is already in use: {item.id}", param=f"{prefix}id")
        memory = rehash(
            Memory(
                uuid=item.id or new_id(),
                space_uuid=caller.space.uuid,
                content=item.content,
                meta=meta,
                tree=tree,
                name=item.name,
                temporal_start=item.temporal[0] if item.temporal else None,
                temporal_end=item.temporal[1] if item.temporal else None,
                version_hash="",
                created_at=stamp,
            )
        )
        ctx.store.insert([memory])
        record(write, memory, "insert", embed=True)
        return memory, "inserted"
    if on_conflict == "error":
        raise Conflict(
            "Memory already exists (id or tree/name conflict)",
            param=f"{prefix}name" if item.name is not None else f"{prefix}id",
        )
    if on_conflict == "ignore":
        return existing, "skipped"
    changes: dict[str, Any] = {"content": item.content, "meta": meta, "temporal": item.temporal}
    if item.name is None:  # matched by id: the tree and name are replaced too
        changes.update(tree=tree, name=None)
    updated = new_version(existing, stamp, **changes)
    if updated is None:
        return existing, "skipped"
    check_slot(ctx, caller, updated, f"{prefix}tree")
    ctx.store.update(updated)
    record(write, updated, "update", embed=updated.content != existing.content)
    return updated, "updated"


# -- updates and deletes -------------------------------------------------------------------


def update(
    ctx: Services, caller: Caller, memory_id: str, expected_hash: str, changes: dict[str, Any]
) -> Memory:
    """Apply ``changes`` (keys among content, meta, tree, name, temporal; a tree in wire
    form) when ``expected_hash`` is current. A patch that changes nothing keeps the
    version and the hash."""
    write = Write(caller, "update")
    with ctx.store.transaction():
        memory = get(ctx, caller, memory_id)
        if memory.version_hash != expected_hash:
            raise Conflict(STALE, param="versionHash")
        if "tree" in changes:
            changes = {**changes, "tree": to_stored(changes["tree"], caller.home, param="tree")}
        updated = new_version(memory, clock.now(), **changes)
        if updated is None:
            return memory
        check_slot(ctx, caller, updated, "name" if "name" in changes else "tree")
        ctx.store.update(updated)
        record(write, updated, "update", embed=updated.content != memory.content)
        commit(ctx, write)
    after(ctx, write)
    return updated


def delete(ctx: Services, caller: Caller, memory_id: str, *, param: str = "id") -> None:
    write = Write(caller, "delete")
    with ctx.store.transaction():
        memory = get(ctx, caller, memory_id, param=param)
        ctx.store.delete(Memory, {"uuid": memory.uuid, "space_uuid": caller.space.uuid})
        forget(ctx, write, [memory])
    erased(ctx, write, [memory])


def delete_by_path(ctx: Services, caller: Caller, path: str) -> None:
    delete(ctx, caller, get_by_path(ctx, caller, path).uuid, param="path")
