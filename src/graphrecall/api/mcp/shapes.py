"""What the MCP tools share: the spec's argument shapes, how a result is written, and the
types of the registering and memory-calling functions."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Annotated, Any

from pydantic import BaseModel, ConfigDict, Field

# ``tool(name, description)``: the decorator that registers one tool on the server.
Register = Callable[[str, str], Callable[[Callable[..., str]], Callable[..., str]]]
# ``memory_call(tool_ctx, method, params, **explicit)``: one JSON-RPC method, run in process.
Call = Callable[..., str]


def text(result: Any) -> str:
    return json.dumps(result, indent=2, ensure_ascii=False)


def clean(value: Any) -> Any:
    """Drop nulls (null and omitted mean the same); models become plain dicts."""
    if isinstance(value, BaseModel):
        value = value.model_dump(exclude_none=True)
    if isinstance(value, dict):
        return {k: clean(v) for k, v in value.items() if v is not None}
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
