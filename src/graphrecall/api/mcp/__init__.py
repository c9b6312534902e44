"""MCP tools: the Memory Engine ``me_memory_*`` tools and the graph tools, served over
stdio (``graphrecall mcp``) and streamable HTTP (``/mcp``). ``server.py`` builds the
server from the tool modules; ``access.py`` says who is calling."""

from graphrecall.api.mcp.access import Access, HttpEndpoint, http_access, local_access
from graphrecall.api.mcp.server import build

__all__ = ["Access", "HttpEndpoint", "build", "http_access", "local_access"]
