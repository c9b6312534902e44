"""The graph tools: search a context graph, add an episode, get its context block, and add
thread messages; each calls the service its Zep route calls."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from mcp.server.mcpserver import Context as ToolContext
from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from pydantic import Field

from graphrecall.api.mcp.access import Access, Resolver
from graphrecall.api.mcp.shapes import text
from graphrecall.domain.errors import GraphRecallError
from graphrecall.domain.inputs import EpisodeCreate, MessagesAdd
from graphrecall.domain.models import Edge, Episode, Node
from graphrecall.services.get_context.assembly import ContextRequest, graph_context
from graphrecall.services.graph import episodes, graphs, threads
from graphrecall.services.graph import search as graph_search


def add_graph_tools(server: MCPServer[Any], resolve: Resolver) -> None:
    _search(server, resolve)
    _add_episode(server, resolve)
    _get_context(server, resolve)
    _add_messages(server, resolve)


def _graph_of(access: Access, graph_uuid: str | None, user_id: str | None) -> str:
    if graph_uuid:
        return graphs.resolve(access.ctx, access.project, graph_uuid).uuid
    if user_id:
        return graphs.lookup_graph(
            access.ctx, access.project, graph_id=None, thread_id=None, user_id=user_id
        ).uuid
    raise ToolError("give graph_uuid (a graph's or a user's UUID) or user_id")


def _search(server: MCPServer[Any], resolve: Resolver) -> None:
    """graph_search: one scope of a graph, best first."""

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
            graph = _graph_of(access, graph_uuid, user_id)
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
        return text({"results": [_graph_item(record, hit.score) for record, hit in found]})


def _add_episode(server: MCPServer[Any], resolve: Resolver) -> None:
    """graph_add_episode: one episode, processed in the background."""

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
            graph = _graph_of(access, graph_uuid, user_id)
            body = EpisodeCreate.model_validate(
                {"type": type, "data": data, "source_description": source_description}
            )
            episode, task = episodes.add_episode(access.ctx, access.project, graph, body)
        except GraphRecallError as exc:
            raise ToolError(exc.message) from None
        except ValueError as exc:  # pydantic: e.g. type json with data that is not JSON
            raise ToolError(str(exc)) from None
        return text({"episode_uuid": episode.uuid, "task_uuid": task.uuid})


def _get_context(server: MCPServer[Any], resolve: Resolver) -> None:
    """graph_get_context: the context block for a query."""

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
            graph = _graph_of(access, graph_uuid, user_id)
            request = ContextRequest(query=query, max_characters=max_characters)
            block = graph_context(access.ctx, access.project, graph, request)
        except GraphRecallError as exc:
            raise ToolError(exc.message) from None
        return text({"context": block.text, "truncated": block.truncated})


def _add_messages(server: MCPServer[Any], resolve: Resolver) -> None:
    """thread_add_messages: chat messages into a thread."""

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
        return text({"message_uuids": [r.uuid for r in rows], "task_uuid": task.uuid})


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
