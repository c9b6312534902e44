"""The Memory Engine ``me_memory_*`` tools on single memories (context, create, search,
get, update), with the spec's names and parameters; each runs the JSON-RPC method of the
same name. Registered in the spec's order, which ``tree_tools.py`` continues."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from mcp.server.mcpserver import Context as ToolContext
from pydantic import Field

from graphrecall.api.mcp.shapes import (
    SEARCH_DESCRIPTION,
    Call,
    Register,
    TemporalArg,
    TemporalFilterArg,
    WeightsArg,
)


def add_memory_tools(tool: Register, memory_call: Call) -> None:
    _create(tool, memory_call)
    _search(tool, memory_call)
    _read_and_update(tool, memory_call)


def _create(tool: Register, memory_call: Call) -> None:
    """The active space, and a new memory."""

    @tool("me_memory_context", "Inspect the active space, principal and tree access.")
    def me_memory_context(ctx: ToolContext[Any, Any]) -> str:
        return memory_call(ctx, "access.effective", {})

    @tool("me_memory_create", "Store a new memory.")
    def me_memory_create(
        ctx: ToolContext[Any, Any],
        content: Annotated[str, Field(min_length=1, description="The content of the memory")],
        tree: Annotated[str, Field(description="Hierarchical path where the memory is stored")],
        id: Annotated[str | None, Field(description="UUIDv7 for idempotent creates")] = None,
        name: Annotated[str | None, Field(description="Leaf name, unique within the tree")] = None,
        meta: Annotated[dict[str, Any] | None, Field(description="Key-value metadata")] = None,
        temporal: Annotated[
            TemporalArg | None, Field(description="Time range of the memory")
        ] = None,
        on_conflict: Annotated[
            Literal["error", "replace", "ignore"] | None,
            Field(description="On an id or tree/name conflict: error (default), replace, ignore"),
        ] = None,
    ) -> str:
        params: dict[str, Any] = {"id": id, "content": content, "tree": tree, "name": name}
        params |= {"meta": meta, "temporal": temporal, "onConflict": on_conflict}
        return memory_call(ctx, "memory.create", params)


def _search(tool: Register, memory_call: Call) -> None:
    """Search and browse."""

    @tool("me_memory_search", SEARCH_DESCRIPTION)
    def me_memory_search(
        ctx: ToolContext[Any, Any],
        semantic: Annotated[
            str | None, Field(description="Natural language query for semantic search.")
        ] = None,
        fulltext: Annotated[
            str | None, Field(description="Keywords/phrases for BM25 matching.")
        ] = None,
        grep: Annotated[
            str | None,
            Field(description="POSIX regex filter on content (case-insensitive)."),
        ] = None,
        meta: Annotated[
            dict[str, Any] | None, Field(description="Filter by metadata (JSON containment).")
        ] = None,
        tree: Annotated[
            str | None, Field(description="Filter by tree path (see tree syntax).")
        ] = None,
        temporal: Annotated[TemporalFilterArg | None, Field(description="Temporal filter.")] = None,
        weights: Annotated[
            WeightsArg | None, Field(description="Weights for hybrid search ranking.")
        ] = None,
        candidateLimit: Annotated[
            int | None,
            Field(description="Candidates per search mode before RRF fusion (default 30)."),
        ] = None,
        semanticThreshold: Annotated[
            float | None,
            Field(description="Minimum semantic similarity (0-1) for vector candidates."),
        ] = None,
        limit: Annotated[
            int | None, Field(description="Maximum number of results (default 10, max 1000).")
        ] = None,
        order_by: Annotated[
            str | None,
            Field(description='Filter-only sort direction: "asc" or "desc" (default).'),
        ] = None,
    ) -> str:
        params: dict[str, Any] = {
            "semantic": semantic,
            "fulltext": fulltext,
            "grep": grep,
            "meta": meta,
            "tree": tree,
            "temporal": temporal,
            "weights": weights,
            "candidateLimit": candidateLimit if candidateLimit and candidateLimit > 0 else None,
            "semanticThreshold": semanticThreshold,
            "limit": limit if limit and limit > 0 else None,
            "orderBy": order_by,
        }
        return memory_call(ctx, "memory.search", params)


def _read_and_update(tool: Register, memory_call: Call) -> None:
    """Get by id or path, and update."""

    @tool("me_memory_get", "Retrieve a single memory by its ID.")
    def me_memory_get(
        ctx: ToolContext[Any, Any], id: Annotated[str, Field(description="The UUID of the memory")]
    ) -> str:
        return memory_call(ctx, "memory.get", {"id": id})

    @tool("me_memory_get_by_path", "Retrieve a named memory by its tree/name path.")
    def me_memory_get_by_path(
        ctx: ToolContext[Any, Any],
        path: Annotated[str, Field(min_length=1, description='e.g. "/share/auth/jwt-rotation"')],
    ) -> str:
        return memory_call(ctx, "memory.getByPath", {"path": path})

    @tool(
        "me_memory_update",
        "Modify a memory. Give the current version_hash; null fields stay unchanged;"
        ' meta is replaced, not merged; name "" clears the name.',
    )
    def me_memory_update(
        ctx: ToolContext[Any, Any],
        id: Annotated[str, Field(description="The UUID of the memory to update")],
        version_hash: Annotated[
            str, Field(min_length=32, max_length=32, description="Current version_hash")
        ],
        content: Annotated[str | None, Field(description="New content")] = None,
        meta: Annotated[dict[str, Any] | None, Field(description="New metadata (replaces)")] = None,
        tree: Annotated[str | None, Field(description="New tree path")] = None,
        name: Annotated[str | None, Field(description='New leaf name; "" clears it')] = None,
        temporal: Annotated[TemporalArg | None, Field(description="New time range")] = None,
    ) -> str:
        params: dict[str, Any] = {"id": id, "versionHash": version_hash, "content": content}
        params |= {"meta": meta, "tree": tree, "temporal": temporal}
        if name is None:  # keep the name
            return memory_call(ctx, "memory.update", params)
        return memory_call(ctx, "memory.update", params, name=name or None)  # "" clears it
