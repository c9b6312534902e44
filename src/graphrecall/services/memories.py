"""Memories of a space: create, read, update, delete, subtree operations, audit log, revert.

Every write is one transaction that also appends to the space's audit log and, when the
text changed, forgets the old vector and queues the memory for embedding by the worker
(``hasEmbedding`` is false until then). Updates use optimistic concurrency: the caller
sends the ``version_hash`` it last saw and a stale one is a conflict.

Inputs arrive validated for shape (ids, timestamps, names) by the API layer; paths arrive
in wire form and are normalised here, where the caller's home is known.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from datetime import timedelta
from typing import Any, Literal

from graphrecall.domain import clock
from graphrecall.domain import predicates as p
from graphrecall.domain.errors import BadRequest, Conflict, NotFound
from graphrecall.domain.ids import new_id
from graphrecall.domain.models import Memory, MemoryEvent, PageRequest, Task
from graphrecall.domain.tree_paths import is_under, rebase, split_named, to_stored
from graphrecall.retrieval.memory_filters import tree_filter
from graphrecall.services import tasks
from graphrecall.services.context import Context
from graphrecall.services.spaces import Caller

OnConflict = Literal["error", "replace", "ignore"]
Status = Literal["inserted", "updated", "skipped"]
Temporal = tuple[str, str]  # stored-form (start, end); a point has start == end
EMBED_TASK = "memory.embed"
EMBED_CHUNK = 64
HISTORY_RETENTION = timedelta(days=30)
MAX_BATCH = 1000
STALE = (
    "Memory was modified; the version_hash is stale. Fetch the memory again to get the"
    " latest version_hash, re-apply your changes and retry"
)


@dataclass(frozen=True)
class MemoryInput:
    """One memory to create; ``tree`` is in wire form, the rest already validated."""

    content: str
    tree: str
    id: str | None = None
    name: str | None = None
    meta: dict[str, Any] | None = None
    temporal: Temporal | None = None


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


@dataclass
class _Write:
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


def _rehash(memory: Memory) -> Memory:
    digest = version_hash(
        memory.tree, memory.name, memory.meta, temporal_of(memory), memory.content
    )
    return memory.model_copy(update={"version_hash": digest})


def _with(memory: Memory, stamp: str, **changes: Any) -> Memory | None:
    """``memory`` with ``changes`` as a new version, or None when nothing changes."""
    if "temporal" in changes:
        temporal = changes.pop("temporal")
        changes["temporal_start"], changes["temporal_end"] = temporal or (None, None)
    changed = _rehash(memory.model_copy(update=changes))
    if changed.version_hash == memory.version_hash:
        return None
    return changed.model_copy(update={"version": memory.version + 1, "updated_at": stamp})


# -- reads ---------------------------------------------------------------------------------


def get(ctx: Context, caller: Caller, memory_id: str, *, param: str = "id") -> Memory:
    memory = ctx.store.get(Memory, memory_id, {"space_uuid": caller.space.uuid})
    if memory is None:
        raise NotFound("Memory", memory_id, param=param)
    return memory


def _split(caller: Caller, path: str, param: str) -> tuple[str, str]:
    tree, name = split_named(path)
    if not name:
        raise BadRequest(f"{param} must end in a name", param=param)
    return to_stored(tree, caller.home, param=param), name


def _named(ctx: Context, caller: Caller, tree: str, name: str) -> Memory | None:
    found = ctx.store.find(
        Memory, {"space_uuid": caller.space.uuid, "tree": tree, "name": name}, limit=1
    )
    return found[0] if found else None


def get_by_path(ctx: Context, caller: Caller, path: str, *, param: str = "path") -> Memory:
    tree, name = _split(caller, path, param)
    memory = _named(ctx, caller, tree, name)
    if memory is None:
        raise NotFound("Memory", path, param=param)
    return memory


def with_embeddings(ctx: Context, caller: Caller, uuids: Sequence[str]) -> set[str]:
    """The ids among ``uuids`` (the caller's space's) whose current text has a vector."""
    return set(ctx.store.get_embeddings(Memory, caller.space.uuid, list(uuids)))


# -- creates -------------------------------------------------------------------------------


def create(
    ctx: Context, caller: Caller, item: MemoryInput, on_conflict: OnConflict = "error"
) -> tuple[Memory, Status]:
    write = _Write(caller, "create")
    with ctx.store.transaction():
        memory, status = _create_one(ctx, write, item, on_conflict, clock.now(), "")
        _commit(ctx, write)
    _after(ctx, write)
    return memory, status


def batch_create(
    ctx: Context, caller: Caller, items: Sequence[MemoryInput], on_conflict: OnConflict = "error"
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
    write = _Write(caller, "batch_create")
    stamp = clock.now()
    with ctx.store.transaction():
        results = [
            _create_one(ctx, write, item, on_conflict, stamp, f"memories[{i}].")
            for i, item in enumerate(items)
        ]
        _commit(ctx, write)
    _after(ctx, write)
    return [(m.uuid, status) for m, status in results]


def _create_one(
    ctx: Context,
    write: _Write,
    item: MemoryInput,
    on_conflict: OnConflict,
    stamp: str,
    prefix: str,
) -> tuple[Memory, Status]:
    caller = write.caller
    tree = to_stored(item.tree, caller.home, param=f"{prefix}tree")
    meta = item.meta or {}
    by_id = ctx.store.get(Memory, item.id) if item.id else None
    if by_id is not None and by_id.space_uuid != caller.space.uuid:
        raise Conflict(f"{prefix}id is already in use: {item.id}", param=f"{prefix}id")
    existing = _named(ctx, caller, tree, item.name) if item.name is not None else by_id
    if existing is None:
        if by_id is not None:  # a named create whose id belongs to another memory
            raise Conflict(f"{prefix}id is already in use: {item.id}", param=f"{prefix}id")
        memory = _rehash(
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
        _record(write, memory, "insert", embed=True)
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
    updated = _with(existing, stamp, **changes)
    if updated is None:
        return existing, "skipped"
    _check_slot(ctx, caller, updated, f"{prefix}tree")
    ctx.store.update(updated)
    _record(write, updated, "update", embed=updated.content != existing.content)
    return updated, "updated"


def _check_slot(ctx: Context, caller: Caller, memory: Memory, param: str) -> None:
    """A named memory's (tree, name) must be free."""
    if memory.name is None:
        return
    holder = _named(ctx, caller, memory.tree, memory.name)
    if holder is not None and holder.uuid != memory.uuid:
        raise Conflict(f"a memory named {memory.name!r} already exists in that tree", param=param)


# -- updates and deletes -------------------------------------------------------------------


def update(
    ctx: Context, caller: Caller, memory_id: str, expected_hash: str, changes: dict[str, Any]
) -> Memory:
    """Apply ``changes`` (keys among content, meta, tree, name, temporal; a tree in wire
    form) when ``expected_hash`` is current. A patch that changes nothing keeps the
    version and the hash."""
    write = _Write(caller, "update")
    with ctx.store.transaction():
        memory = get(ctx, caller, memory_id)
        if memory.version_hash != expected_hash:
            raise Conflict(STALE, param="versionHash")
        if "tree" in changes:
            changes = {**changes, "tree": to_stored(changes["tree"], caller.home, param="tree")}
        updated = _with(memory, clock.now(), **changes)
        if updated is None:
            return memory
        _check_slot(ctx, caller, updated, "name" if "name" in changes else "tree")
        ctx.store.update(updated)
        _record(write, updated, "update", embed=updated.content != memory.content)
        _commit(ctx, write)
    _after(ctx, write)
    return updated


def delete(ctx: Context, caller: Caller, memory_id: str, *, param: str = "id") -> None:
    write = _Write(caller, "delete")
    with ctx.store.transaction():
        memory = get(ctx, caller, memory_id, param=param)
        ctx.store.delete(Memory, {"uuid": memory.uuid, "space_uuid": caller.space.uuid})
        _record(write, memory, "delete")
        _commit(ctx, write)


def delete_by_path(ctx: Context, caller: Caller, path: str) -> None:
    delete(ctx, caller, get_by_path(ctx, caller, path).uuid, param="path")


# -- subtrees ------------------------------------------------------------------------------


def _under(ctx: Context, caller: Caller, tree: str) -> list[Memory]:
    return ctx.store.find(
        Memory, {"space_uuid": caller.space.uuid}, where=p.PathUnder("tree", tree)
    )


def count(ctx: Context, caller: Caller, tree: str, max_count: int | None = None) -> int:
    """Memories matching a tree filter (any syntax); at most ``max_count``."""
    where = tree_filter(tree, caller.home)
    n = ctx.store.count(Memory, {"space_uuid": caller.space.uuid}, where)
    return min(n, max_count) if max_count is not None else n


def tree(
    ctx: Context, caller: Caller, base: str | None, levels: int | None
) -> list[tuple[str, int]]:
    """(stored path, memories at or below it) for each strict descendant of ``base`` down
    to ``levels`` levels; the caller's own home counts under ``~`` only."""
    root = to_stored(base, caller.home, param="tree")
    per_tree = ctx.store.count_by(
        Memory, "tree", {"space_uuid": caller.space.uuid}, p.PathUnder("tree", root)
    )
    depth = len(root.split(".")) if root else 0
    counts: dict[str, int] = {}
    for path, n in per_tree.items():
        labels = path.split(".") if path else []
        last = len(labels) if levels is None else min(len(labels), depth + levels)
        for end in range(depth + 1, last + 1):
            prefix = ".".join(labels[:end])
            counts[prefix] = counts.get(prefix, 0) + n
    own = sum(n for path, n in per_tree.items() if is_under(path, caller.home))
    if own:
        for prefix in list(counts):
            if caller.home.startswith(prefix + "."):
                counts[prefix] -= own
                if counts[prefix] <= 0:
                    del counts[prefix]
    return sorted(counts.items())


def _taken_slots(ctx: Context, caller: Caller, moved: Iterable[Memory]) -> set[tuple[str, str]]:
    """(tree, name) slots of named memories in the trees ``moved`` will occupy."""
    trees = sorted({m.tree for m in moved if m.name is not None})
    taken: set[tuple[str, str]] = set()
    for start in range(0, len(trees), 500):
        for memory in ctx.store.find(
            Memory,
            {"space_uuid": caller.space.uuid, "tree": trees[start : start + 500]},
            where=p.Column("name", "is_not_null"),
        ):
            taken.add((memory.tree, memory.name or ""))
    return taken


def move(ctx: Context, caller: Caller, source: str, destination: str, dry_run: bool) -> int:
    """Replace the prefix ``source`` with ``destination`` on every memory at or under it."""
    src = to_stored(source, caller.home, param="source")
    dst = to_stored(destination, caller.home, param="destination")
    write = _Write(caller, "move")
    with ctx.store.transaction():
        rows = _under(ctx, caller, src)
        if dry_run or not rows or src == dst:
            return len(rows)
        stamp = clock.now()
        moved = [_with(m, stamp, tree=rebase(m.tree, src, dst)) or m for m in rows]
        # A slot held by a memory that moves too is vacated by the move.
        vacated = {(m.tree, m.name) for m in rows if m.name is not None}
        taken = _taken_slots(ctx, caller, moved) - vacated
        for memory in moved:
            if memory.name is not None and (memory.tree, memory.name) in taken:
                raise Conflict(
                    f"cannot move: {memory.name!r} already exists in the destination",
                    param="destination",
                )
        for memory in moved:
            ctx.store.update(memory)
            _record(write, memory, "update")
        _commit(ctx, write)
    return len(rows)


def copy(ctx: Context, caller: Caller, source: str, destination: str, dry_run: bool) -> int:
    """Copy every memory at or under ``source`` to ``destination`` with new ids, keeping
    name, meta, temporal range, content and vector."""
    src = to_stored(source, caller.home, param="source")
    dst = to_stored(destination, caller.home, param="destination")
    write = _Write(caller, "copy")
    with ctx.store.transaction():
        rows = _under(ctx, caller, src)
        if dry_run or not rows:
            return len(rows)
        stamp = clock.now()
        copies = [
            _rehash(
                m.model_copy(
                    update={
                        "uuid": new_id(),
                        "tree": rebase(m.tree, src, dst),
                        "version": 1,
                        "created_at": stamp,
                        "updated_at": None,
                    }
                )
            )
            for m in rows
        ]
        taken = _taken_slots(ctx, caller, copies)
        for memory in copies:
            if memory.name is not None and (memory.tree, memory.name) in taken:
                raise Conflict(
                    f"cannot copy: {memory.name!r} already exists in the destination",
                    param="destination",
                )
        ctx.store.insert(copies)
        vectors = ctx.store.get_embeddings(Memory, caller.space.uuid, [m.uuid for m in rows])
        pairs = [
            (c.uuid, vectors[m.uuid])
            for m, c in zip(rows, copies, strict=True)
            if m.uuid in vectors
        ]
        if pairs:
            ctx.store.set_embeddings(Memory, caller.space.uuid, pairs)
        for memory, original in zip(copies, rows, strict=True):
            _record(write, memory, "insert", embed=original.uuid not in vectors)
        _commit(ctx, write)
    _after(ctx, write)
    return len(rows)


def delete_tree(ctx: Context, caller: Caller, tree_path: str, dry_run: bool) -> int:
    """Delete every memory at or under ``tree_path``, all or nothing."""
    root = to_stored(tree_path, caller.home, param="tree")
    write = _Write(caller, "delete_tree")
    with ctx.store.transaction():
        rows = _under(ctx, caller, root)
        if dry_run or not rows:
            return len(rows)
        _delete_all(ctx, write, rows)
    return len(rows)


def _delete_all(ctx: Context, write: _Write, rows: Sequence[Memory]) -> None:
    """Delete ``rows`` (inside the caller's transaction), each recorded in history."""
    ids = [m.uuid for m in rows]
    for start in range(0, len(ids), 500):
        ctx.store.delete(
            Memory, {"uuid": ids[start : start + 500], "space_uuid": write.caller.space.uuid}
        )
    for memory in rows:
        _record(write, memory, "delete")
    _commit(ctx, write)


def delete_orphans(
    ctx: Context,
    caller: Caller,
    root: str,
    meta_contains: dict[str, Any],
    keep: Sequence[tuple[str, str]],
    dry_run: bool,
) -> list[Memory]:
    """Delete every named memory at or under ``root`` whose meta contains
    ``meta_contains`` and whose (tree, name) slot is not in ``keep``, all or nothing.

    Returns the deleted (with ``dry_run``, the would-delete) memories ordered by slot.
    Unnamed memories are never touched; an empty ``meta_contains`` is refused so that
    "delete everything not in my list" cannot be expressed.
    """
    if not meta_contains:
        raise BadRequest("metaContains must be a non-empty object", param="metaContains")
    base = to_stored(root, caller.home, param="root")
    kept = {
        (to_stored(tree, caller.home, param=f"keep.{i}.tree"), name)
        for i, (tree, name) in enumerate(keep)
    }
    where = p.And(
        (
            p.PathUnder("tree", base),
            p.Column("name", "is_not_null"),
            p.JsonContains("meta", meta_contains),
        )
    )
    write = _Write(caller, "delete_orphans")
    with ctx.store.transaction():
        rows = ctx.store.find(Memory, {"space_uuid": caller.space.uuid}, where=where)
        orphans = sorted(
            (m for m in rows if m.name is not None and (m.tree, m.name) not in kept),
            key=lambda m: (m.tree, m.name or ""),
        )
        if dry_run or not orphans:
            return orphans
        _delete_all(ctx, write, orphans)
    return orphans


# -- the audit log -------------------------------------------------------------------------


def _record(write: _Write, memory: Memory, operation: str, *, embed: bool = False) -> None:
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


def _commit(ctx: Context, write: _Write) -> None:
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


def _expired_events(ctx: Context, write: _Write) -> list[str]:
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


def _after(ctx: Context, write: _Write) -> None:
    if write.to_embed and ctx.embedder is not None:
        ctx.wake_worker()


def history(ctx: Context, caller: Caller, q: HistoryQuery) -> tuple[list[MemoryEvent], str | None]:
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


def _history_target(ctx: Context, caller: Caller, path: str) -> str:
    """A path's memory: the live one, else the latest one the log saw there."""
    tree, name = _split(caller, path, "path")
    live = _named(ctx, caller, tree, name)
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
    ctx: Context,
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
    write = _Write(caller, "revert")
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
            memory = _rehash(
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
            _check_slot(ctx, caller, memory, "version")
            ctx.store.insert([memory])
            _record(write, memory, "insert", embed=True)
        else:
            changed = _with(current, stamp, **restore)
            if changed is None:
                return current
            memory = changed
            _check_slot(ctx, caller, memory, "version")
            ctx.store.update(memory)
            _record(write, memory, "update", embed=memory.content != current.content)
        _commit(ctx, write)
    _after(ctx, write)
    return memory


def embedding_status(ctx: Context, caller: Caller) -> dict[str, Any]:
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
