"""The Memory Engine ``me_memory_*`` tools that delete, count, copy and move trees, and
read and revert history; each runs the JSON-RPC method of the same name. Registered after
``memory_tools.py``'s, in the spec's order."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from mcp.server.mcpserver import Context as ToolContext
from pydantic import Field

from graphrecall.api.mcp.shapes import Call, Register


def add_tree_tools(tool: Register, memory_call: Call) -> None:
    _deletes(tool, memory_call)
    _transfers(tool, memory_call)
    _history(tool, memory_call)


def _deletes(tool: Register, memory_call: Call) -> None:
    """Delete by id, by path or a whole tree; count a tree."""

    @tool("me_memory_delete", "Permanently remove a memory by ID.")
    def me_memory_delete(
        ctx: ToolContext[Any, Any], id: Annotated[str, Field(description="The UUID of the memory")]
    ) -> str:
        return memory_call(ctx, "memory.delete", {"id": id})

    @tool("me_memory_delete_by_path", "Permanently remove one named memory by its path.")
    def me_memory_delete_by_path(
        ctx: ToolContext[Any, Any],
        path: Annotated[str, Field(min_length=1, description='e.g. "/share/auth/jwt-rotation"')],
    ) -> str:
        return memory_call(ctx, "memory.deleteByPath", {"path": path})

    @tool("me_memory_delete_tree", "Delete all memories at or below a tree path.")
    def me_memory_delete_tree(
        ctx: ToolContext[Any, Any],
        tree: Annotated[str, Field(min_length=1, description="Tree prefix")],
        dry_run: Annotated[bool, Field(description="Preview the count without deleting")],
    ) -> str:
        return memory_call(ctx, "memory.deleteTree", {"tree": tree, "dryRun": dry_run})

    @tool("me_memory_count", "Count memories matching a tree filter.")
    def me_memory_count(
        ctx: ToolContext[Any, Any],
        tree: Annotated[str, Field(min_length=1, description="Path, lquery or label search")],
        max_count: Annotated[int | None, Field(ge=1, description="Stop counting here")] = None,
    ) -> str:
        return memory_call(ctx, "memory.countTree", {"tree": tree, "maxCount": max_count})


def _transfers(tool: Register, memory_call: Call) -> None:
    """Copy and move a tree; show the tree."""

    @tool("me_memory_copy", "Copy memories from one tree prefix to another (new IDs).")
    def me_memory_copy(
        ctx: ToolContext[Any, Any],
        source: Annotated[str, Field(min_length=1, description="Source tree prefix")],
        destination: Annotated[str, Field(min_length=1, description="Destination prefix")],
        dry_run: Annotated[bool, Field(description="Only count")],
    ) -> str:
        params = {"source": source, "destination": destination, "dryRun": dry_run}
        return memory_call(ctx, "memory.copy", params)

    @tool("me_memory_mv", "Move memories from one tree prefix to another.")
    def me_memory_mv(
        ctx: ToolContext[Any, Any],
        source: Annotated[str, Field(min_length=1, description="Source tree prefix")],
        destination: Annotated[str, Field(description="Destination prefix (may be root)")],
        dry_run: Annotated[bool, Field(description="Only count")],
    ) -> str:
        params = {"source": source, "destination": destination, "dryRun": dry_run}
        return memory_call(ctx, "memory.move", params)

    @tool("me_memory_tree", "The tree of memories with counts at each node.")
    def me_memory_tree(
        ctx: ToolContext[Any, Any],
        tree: Annotated[str | None, Field(description="Root path to display from")] = None,
        levels: Annotated[int | None, Field(description="Maximum depth (null = unlimited)")] = None,
    ) -> str:
        params = {"tree": tree, "levels": levels if levels and levels > 0 else None}
        return memory_call(ctx, "memory.tree", params)


def _history(tool: Register, memory_call: Call) -> None:
    """The audit log and reverting to a version."""

    @tool("me_memory_history", "Read the audit log of memory changes (kept 30 days).")
    def me_memory_history(
        ctx: ToolContext[Any, Any],
        memoryId: Annotated[str | None, Field(description="A memory's UUID")] = None,
        path: Annotated[str | None, Field(description="A memory's tree/name path")] = None,
        tree: Annotated[str | None, Field(description="Events at or under this path")] = None,
        operation: Annotated[Literal["insert", "update", "delete"] | None, Field()] = None,
        operationId: Annotated[str | None, Field(description="One bulk operation")] = None,
        since: Annotated[str | None, Field(description="Events at or after (ISO 8601)")] = None,
        until: Annotated[str | None, Field(description="Events before (ISO 8601)")] = None,
        cursor: Annotated[str | None, Field(description="nextCursor of a prior page")] = None,
        limit: Annotated[int | None, Field(description="Maximum events (default 20)")] = None,
        order: Annotated[Literal["asc", "desc"] | None, Field()] = None,
    ) -> str:
        params: dict[str, Any] = {"memoryId": memoryId, "path": path, "tree": tree}
        params |= {"operation": operation}
        params |= {"operationId": operationId, "since": since, "until": until}
        params |= {"cursor": cursor, "limit": limit if limit and limit > 0 else None}
        return memory_call(ctx, "memory.history", params | {"order": order})

    @tool("me_memory_revert", "Restore an earlier version of a memory as a new version.")
    def me_memory_revert(
        ctx: ToolContext[Any, Any],
        version: Annotated[int, Field(gt=0, description="The version number to restore")],
        id: Annotated[str | None, Field(description="The memory's UUID (or pass path)")] = None,
        path: Annotated[str | None, Field(description="The memory's tree/name path")] = None,
        expectedVersionHash: Annotated[
            str | None, Field(description="Only revert if the current hash matches")
        ] = None,
    ) -> str:
        params: dict[str, Any] = {"id": id, "path": path, "version": version}
        params["expectedVersionHash"] = expectedVersionHash
        return memory_call(ctx, "memory.revert", params)
