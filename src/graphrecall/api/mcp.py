"""MCP tools (the official MCP Python SDK): the Memory Engine ``me_memory_*`` tools with
the spec's names and parameters, plus graph tools (search a graph, get its context block,
add an episode or thread messages).

Served two ways: ``graphrecall mcp`` over stdio (in-process, on the local database) and
streamable HTTP at ``/mcp`` of ``graphrecall serve``, where the caller sends its API key
as ``Authorization: Bearer <key>`` and picks a space with ``X-Me-Space`` (or ``?space=``).
A memory tool is the JSON-RPC method of the same name run in-process, so both faces
validate and answer identically; a failure is an MCP error result carrying the message.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from typing import Annotated, Any, Literal

from mcp.server.mcpserver import Context as ToolContext
from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.shared.exceptions import MCPError
from mcp.types import INVALID_PARAMS
from pydantic import BaseModel, ConfigDict, Field
from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from graphrecall import __version__
from graphrecall.api.deps import api_key_from
from graphrecall.api.memory_engine import rpc
from graphrecall.domain import validation
from graphrecall.domain.errors import BadRequest, GraphRecallError
from graphrecall.domain.inputs import EpisodeCreate, MessagesAdd
from graphrecall.domain.models import Edge, Episode, Node, Project
from graphrecall.services.accounts import projects, spaces
from graphrecall.services.accounts.spaces import Caller
from graphrecall.services.container import Services
from graphrecall.services.get_context.assembly import ContextRequest, graph_context
from graphrecall.services.graph import episodes, graphs, threads
from graphrecall.services.graph import search as graph_search

INSTRUCTIONS = (
    "graphrecall: persistent memory for this workspace. Search prior decisions, context and"
    " conventions with me_memory_search before nontrivial work (semantic for meaning,"
    " fulltext for exact words, both for hybrid); store durable facts with me_memory_create,"
    " one self-contained idea per memory, under a deliberate tree path. graph_search,"
    " graph_get_context, graph_add_episode and thread_add_messages work on the context"
    " graphs of users and graphs."
)
STATE_KEY = "graphrecall_mcp"


@dataclass(frozen=True)
class Access:
    """What a tool call may touch: the service context, the project, and (for memory
    tools) the caller in a space."""

    ctx: Services
    project: Project
    caller: Caller | None


Resolver = Callable[["ToolContext[Any, Any]"], Access]


def _text(result: Any) -> str:
    return json.dumps(result, indent=2, ensure_ascii=False)


def _clean(value: Any) -> Any:
    """Drop nulls (null and omitted mean the same); models become plain dicts."""
    if isinstance(value, BaseModel):
        value = value.model_dump(exclude_none=True)
    if isinstance(value, dict):
        return {k: _clean(v) for k, v in value.items() if v is not None}
    return value


# -- argument shapes of the spec ------------------------------------------------------------


class _Arg(BaseModel):
    model_config = ConfigDict(extra="forbid")


class Range(_Arg):
    start: Annotated[str, Field(description="Start of range (ISO 8601 with Z or offset)")]
    end: Annotated[str, Field(description="End of range (exclusive)")]


class TemporalFilterArg(_Arg):
    contains: Annotated[
        str | None, Field(description="Find memories whose time range contains this point.")
    ] = None
    overlaps: Annotated[
        Range | None, Field(description="Find memories overlapping this range ({start, end}).")
    ] = None
    within: Annotated[
        Range | None, Field(description="Find memories fully within this range ({start, end}).")
    ] = None
    before: Annotated[str | None, Field(description="Memories strictly before this point.")] = None
    after: Annotated[str | None, Field(description="Memories strictly after this point.")] = None


class WeightsArg(_Arg):
    fulltext: Annotated[
        float | None, Field(description="Weight for BM25 keyword matching (0-1).")
    ] = None
    semantic: Annotated[
        float | None, Field(description="Weight for semantic similarity (0-1).")
    ] = None


class TemporalArg(_Arg):
    start: Annotated[str, Field(description="ISO timestamp for start of time range")]
    end: Annotated[
        str | None, Field(description="ISO timestamp for end (omit or null for point-in-time)")
    ] = None


SEARCH_DESCRIPTION = """Search and browse memories using text matching and/or filters.

Supports three search modes: semantic (meaning-based), fulltext (keyword-based via BM25), or \
hybrid (both combined via Reciprocal Rank Fusion). Choose the mode deliberately: use semantic \
search for concepts and intent, fulltext for exact words or identifiers, and hybrid when both \
kinds of matching are useful. Combine any search mode with tree, meta, and temporal filters.

tree syntax: a bare path (/work/projects) matches that node and all descendants; \
/work/projects/* all descendants at any depth; /work/*{2} exactly 2 levels below; \
*/!draft/* paths that do not contain draft; */api/* any path containing api; \
api & v2 boolean search over path labels.

Provide at least one of semantic, fulltext, or a filter (tree, meta, temporal, grep). \
order_by only applies to filter-only searches. Each result carries a score from 0 to 1, \
where 1 is the best match."""


def build(resolve: Resolver) -> MCPServer[Any]:
    """The MCP server; ``resolve`` says who is calling (fixed for stdio, per request for
    HTTP)."""
    server: MCPServer[Any] = MCPServer(
        name="graphrecall", version=__version__, instructions=INSTRUCTIONS, log_level="WARNING"
    )

    def memory_call(
        tool: ToolContext[Any, Any], method: str, params: dict[str, Any], **explicit: Any
    ) -> str:
        """Run ``method`` with ``params`` minus nulls, plus ``explicit`` (nulls kept)."""
        access = resolve(tool)
        if access.caller is None:
            raise ToolError(
                "no memory space selected: send the X-Me-Space header (or ?space=), or start"
                " `graphrecall mcp --space SLUG`"
            )
        try:
            arguments = _clean(params) | explicit
            return _text(rpc.call(access.ctx, access.caller, method, arguments))
        except rpc.RpcError as exc:
            raise ToolError(exc.message) from None

    def tool(name: str, description: str) -> Callable[[Callable[..., str]], Callable[..., str]]:
        return server.tool(name=name, description=description, structured_output=False)

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

    _graph_tools(server, resolve)
    _no_prompts(server)
    return server


def _no_prompts(server: MCPServer[Any]) -> None:
    """graphrecall offers no prompts, so every ``prompts/get`` names an unknown one: that
    is the caller's invalid params (-32602, as the MCP specification says), not the
    library's error code 0."""

    async def get_prompt(name: str, arguments: Any = None, context: Any = None) -> Any:
        raise MCPError(INVALID_PARAMS, f"Unknown prompt: {name}")

    # The library's handler calls server.get_prompt; this instance's answers instead.
    server.get_prompt = get_prompt  # type: ignore[method-assign]


def _graph_tools(server: MCPServer[Any], resolve: Resolver) -> None:
    def graph_of(access: Access, graph_uuid: str | None, user_id: str | None) -> str:
        if graph_uuid:
            return graphs.resolve(access.ctx, access.project, graph_uuid).uuid
        if user_id:
            return graphs.lookup_graph(
                access.ctx, access.project, graph_id=None, thread_id=None, user_id=user_id
            ).uuid
        raise ToolError("give graph_uuid (a graph's or a user's UUID) or user_id")

    @server.tool(
        name="graph_search",
        description="Search a context graph: facts (edges), entities (nodes) or episodes.",
        structured_output=False,
    )
    def graph_search_tool(
        ctx: ToolContext[Any, Any],
        query: Annotated[str, Field(min_length=1, max_length=400, description="Search text")],
        graph_uuid: Annotated[str | None, Field(description="A graph's or a user's UUID")] = None,
        user_id: Annotated[str | None, Field(description="Your id of the user")] = None,
        scope: Annotated[Literal["edges", "nodes", "episodes"], Field()] = "edges",
        limit: Annotated[int, Field(ge=1, le=50, description="Maximum results")] = 10,
    ) -> str:
        access = resolve(ctx)
        try:
            graph = graph_of(access, graph_uuid, user_id)
            _, found, _ = graph_search.search(
                access.ctx,
                access.project,
                graph,
                scope,
                graph_search.SearchParams(query=query),
                page_size=limit,
                cursor=None,
            )
        except GraphRecallError as exc:
            raise ToolError(exc.message) from None
        return _text({"results": [_graph_item(record, hit.score) for record, hit in found]})

    @server.tool(
        name="graph_add_episode",
        description="Add an episode (text, JSON or a message) to a context graph; it is"
        " processed into entities and facts in the background.",
        structured_output=False,
    )
    def graph_add_episode(
        ctx: ToolContext[Any, Any],
        data: Annotated[str, Field(min_length=1, max_length=10_000, description="The content")],
        graph_uuid: Annotated[str | None, Field(description="A graph's or a user's UUID")] = None,
        user_id: Annotated[str | None, Field(description="Your id of the user")] = None,
        type: Annotated[Literal["text", "json", "message"], Field()] = "text",
        source_description: Annotated[str | None, Field()] = None,
    ) -> str:
        access = resolve(ctx)
        try:
            graph = graph_of(access, graph_uuid, user_id)
            body = EpisodeCreate.model_validate(
                {"type": type, "data": data, "source_description": source_description}
            )
            episode, task = episodes.add_episode(access.ctx, access.project, graph, body)
        except GraphRecallError as exc:
            raise ToolError(exc.message) from None
        except ValueError as exc:  # pydantic: e.g. type json with data that is not JSON
            raise ToolError(str(exc)) from None
        return _text({"episode_uuid": episode.uuid, "task_uuid": task.uuid})

    @server.tool(
        name="graph_get_context",
        description="The context block (dated facts, entities, summaries) of a graph for a"
        " query, ready to paste into a prompt.",
        structured_output=False,
    )
    def graph_get_context(
        ctx: ToolContext[Any, Any],
        query: Annotated[str, Field(min_length=1, description="What the context is for")],
        graph_uuid: Annotated[str | None, Field(description="A graph's or a user's UUID")] = None,
        user_id: Annotated[str | None, Field(description="Your id of the user")] = None,
        max_characters: Annotated[int | None, Field(ge=1, description="Size budget")] = None,
    ) -> str:
        access = resolve(ctx)
        try:
            graph = graph_of(access, graph_uuid, user_id)
            request = ContextRequest(query=query, max_characters=max_characters)
            block = graph_context(access.ctx, access.project, graph, request)
        except GraphRecallError as exc:
            raise ToolError(exc.message) from None
        return _text({"context": block.text, "truncated": block.truncated})

    @server.tool(
        name="thread_add_messages",
        description="Add chat messages to a thread; they become episodes of the user's graph.",
        structured_output=False,
    )
    def thread_add_messages(
        ctx: ToolContext[Any, Any],
        thread_uuid: Annotated[str, Field(description="The thread's UUID")],
        messages: Annotated[
            list[dict[str, Any]],
            Field(min_length=1, description='[{"role": "user", "content": "...", "name": ...}]'),
        ],
    ) -> str:
        access = resolve(ctx)
        try:
            body = MessagesAdd.model_validate({"messages": messages})
            rows, task = threads.add_messages(access.ctx, access.project, thread_uuid, body)
        except GraphRecallError as exc:
            raise ToolError(exc.message) from None
        except ValueError as exc:
            raise ToolError(str(exc)) from None
        return _text({"message_uuids": [r.uuid for r in rows], "task_uuid": task.uuid})


def _graph_item(record: Any, score: float) -> dict[str, Any]:
    if isinstance(record, Edge):
        out: dict[str, Any] = {"uuid": record.uuid, "fact": record.fact, "name": record.name}
        out |= {"valid_at": record.valid_at, "invalid_at": record.invalid_at}
    elif isinstance(record, Node):
        out = {"uuid": record.uuid, "name": record.name, "summary": record.summary}
        out["labels"] = record.labels
    elif isinstance(record, Episode):
        out = {"uuid": record.uuid, "content": record.content}
        out["created_at"] = record.created_at
    else:  # pragma: no cover - the tool only searches these scopes
        out = {"uuid": record.uuid}
    return out | {"score": score}


# -- HTTP: who is calling ----------------------------------------------------------------------


def http_access(tool: ToolContext[Any, Any]) -> Access:
    request = tool.request_context.request
    access = getattr(getattr(request, "state", None), STATE_KEY, None)
    if not isinstance(access, Access):  # pragma: no cover - the endpoint always sets it
        raise ToolError("unauthenticated")
    return access


class HttpEndpoint:
    """``/mcp``: authenticates the caller (API key, optional space), then hands the request
    to the SDK's streamable HTTP transport."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        request = Request(scope, receive)
        ctx: Services = request.app.state.ctx
        key = api_key_from(request.headers.get("authorization"))
        slug = request.headers.get(rpc.SPACE_HEADER) or request.query_params.get("space")
        try:
            access = await run_in_threadpool(_authenticate, ctx, key, slug)
        except GraphRecallError as exc:
            response = JSONResponse(
                {"error": {"code": exc.code, "message": exc.message}}, status_code=exc.status
            )
            await response(scope, receive, send)
            return
        scope.setdefault("state", {})[STATE_KEY] = access
        if scope["method"] != "POST":
            await self.app(scope, receive, send)
            return
        # The body the request middleware buffered, checked as every face checks its
        # input; a refusal is a JSON-RPC error naming the field, as the transport's own.
        body = await request.body()
        try:
            validation.loads(body)
        except BadRequest as exc:
            code = (
                rpc.PARSE_ERROR if isinstance(exc, validation.InvalidJson) else rpc.INVALID_PARAMS
            )
            error = rpc.RpcError(code, exc.message, {"param": exc.param or "body"})
            response = JSONResponse({"jsonrpc": "2.0", "id": None, "error": error.body()}, 400)
            await response(scope, receive, send)
            return
        sent = False

        async def replay() -> Message:
            nonlocal sent
            if not sent:
                sent = True
                return {"type": "http.request", "body": body, "more_body": False}
            return await receive()

        await self.app(scope, replay, send)


def _authenticate(ctx: Services, key: str | None, slug: str | None) -> Access:
    project = projects.authenticate(ctx.store, key)
    caller = spaces.authenticate(ctx.store, key, slug) if slug else None
    return Access(ctx, project, caller)


def local_access(ctx: Services, slug: str | None, key: str | None) -> Access:
    """The caller of ``graphrecall mcp`` (stdio): a key's project, else the space's, else
    the default project; memory tools need a space."""
    if key:
        return _authenticate(ctx, key, slug)
    caller = spaces.local_caller(ctx.store, slug) if slug else None
    project = caller.project if caller else projects.get_or_create_project(ctx.store)
    return Access(ctx, project, caller)
