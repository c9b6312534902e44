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

from collections.abc import Callable
from typing import Any

from mcp.server.mcpserver import Context as ToolContext
from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.shared.exceptions import MCPError
from mcp.types import INVALID_PARAMS

from graphrecall import __version__
from graphrecall.api.mcp.access import Resolver
from graphrecall.api.mcp.graph_tools import add_graph_tools
from graphrecall.api.mcp.memory_tools import add_memory_tools
from graphrecall.api.mcp.shapes import clean, text
from graphrecall.api.mcp.tree_tools import add_tree_tools
from graphrecall.api.memory_engine import rpc

INSTRUCTIONS = (
    "graphrecall: persistent memory for this workspace. Search prior decisions, context and"
    " conventions with me_memory_search before nontrivial work (semantic for meaning,"
    " fulltext for exact words, both for hybrid); store durable facts with me_memory_create,"
    " one self-contained idea per memory, under a deliberate tree path. graph_search,"
    " graph_get_context, graph_add_episode and thread_add_messages work on the context"
    " graphs of users and graphs."
)


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
            arguments = clean(params) | explicit
            return text(rpc.call(access.ctx, access.caller, method, arguments))
        except rpc.RpcError as exc:
            raise ToolError(exc.message) from None

    def tool(name: str, description: str) -> Callable[[Callable[..., str]], Callable[..., str]]:
        return server.tool(name=name, description=description, structured_output=False)

    add_memory_tools(tool, memory_call)
    add_tree_tools(tool, memory_call)
    add_graph_tools(server, resolve)
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
