"""Subtree operations on a space's memories: count, tree listing, move, copy, delete.

Each is all or nothing, one transaction, every changed memory recorded in the audit log.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from graphrecall.domain import clock
from graphrecall.domain import predicates as p
from graphrecall.domain.errors import BadRequest, Conflict
from graphrecall.domain.ids import new_id
from graphrecall.domain.models import Memory
from graphrecall.domain.tree_paths import is_under, rebase, to_stored
from graphrecall.retrieval.memory_filters import tree_filter
from graphrecall.services.accounts.spaces import Caller
from graphrecall.services.container import Services
from graphrecall.services.memory_engine.writes import (
    Write,
    after,
    commit,
    erased,
    forget,
    new_version,
    record,
    rehash,
)


def _under(ctx: Services, caller: Caller, tree: str) -> list[Memory]:
    return ctx.store.find(
        Memory, {"space_uuid": caller.space.uuid}, where=p.PathUnder("tree", tree)
    )


def count(ctx: Services, caller: Caller, tree: str, max_count: int | None = None) -> int:
    """Memories matching a tree filter (any syntax); at most ``max_count``."""
    where = tree_filter(tree, caller.home)
    n = ctx.store.count(Memory, {"space_uuid": caller.space.uuid}, where)
    return min(n, max_count) if max_count is not None else n


def tree(
    ctx: Services, caller: Caller, base: str | None, levels: int | None
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


def _taken_slots(ctx: Services, caller: Caller, moved: Iterable[Memory]) -> set[tuple[str, str]]:
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


def move(ctx: Services, caller: Caller, source: str, destination: str, dry_run: bool) -> int:
    """Replace the prefix ``source`` with ``destination`` on every memory at or under it."""
    src = to_stored(source, caller.home, param="source")
    dst = to_stored(destination, caller.home, param="destination")
    write = Write(caller, "move")
    with ctx.store.transaction():
        rows = _under(ctx, caller, src)
        if dry_run or not rows or src == dst:
            return len(rows)
        stamp = clock.now()
        moved = [new_version(m, stamp, tree=rebase(m.tree, src, dst)) or m for m in rows]
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
            record(write, memory, "update")
        commit(ctx, write)
    return len(rows)


def copy(ctx: Services, caller: Caller, source: str, destination: str, dry_run: bool) -> int:
    """Copy every memory at or under ``source`` to ``destination`` with new ids, keeping
    name, meta, temporal range, content and vector."""
    src = to_stored(source, caller.home, param="source")
    dst = to_stored(destination, caller.home, param="destination")
    write = Write(caller, "copy")
    with ctx.store.transaction():
        rows = _under(ctx, caller, src)
        if dry_run or not rows:
            return len(rows)
        stamp = clock.now()
        copies = [
            rehash(
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
            record(write, memory, "insert", embed=original.uuid not in vectors)
        commit(ctx, write)
    after(ctx, write)
    return len(rows)


def delete_tree(ctx: Services, caller: Caller, tree_path: str, dry_run: bool) -> int:
    """Delete every memory at or under ``tree_path``, all or nothing."""
    root = to_stored(tree_path, caller.home, param="tree")
    write = Write(caller, "delete_tree")
    with ctx.store.transaction():
        rows = _under(ctx, caller, root)
        if dry_run or not rows:
            return len(rows)
        _delete_all(ctx, write, rows)
    erased(ctx, write, rows)
    return len(rows)


def _delete_all(ctx: Services, write: Write, rows: Sequence[Memory]) -> None:
    """Delete ``rows`` (inside the caller's transaction), with their history unless a
    retention window keeps it (``forget``); the caller erases them once committed."""
    ids = [m.uuid for m in rows]
    for start in range(0, len(ids), 500):
        ctx.store.delete(
            Memory, {"uuid": ids[start : start + 500], "space_uuid": write.caller.space.uuid}
        )
    forget(ctx, write, rows)


def delete_orphans(
    ctx: Services,
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
    write = Write(caller, "delete_orphans")
    with ctx.store.transaction():
        rows = ctx.store.find(Memory, {"space_uuid": caller.space.uuid}, where=where)
        orphans = sorted(
            (m for m in rows if m.name is not None and (m.tree, m.name) not in kept),
            key=lambda m: (m.tree, m.name or ""),
        )
        if dry_run or not orphans:
            return orphans
        _delete_all(ctx, write, orphans)
    erased(ctx, write, orphans)
    return orphans
