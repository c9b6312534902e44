"""The params of each JSON-RPC method, as the ``me`` client sends them (camelCase).

A shape error here is JSON-RPC ``-32602 Invalid params`` naming the field, as upstream's
zod schemas do; rules that need the data (a stale hash, a taken name) are application
errors raised by the services. Unknown keys are ignored so newer clients keep working.
"""

from __future__ import annotations

import re
import uuid
from typing import Annotated, Any, Literal

from pydantic import AfterValidator, BaseModel, ConfigDict, Field

from graphrecall.domain import clock, limits
from graphrecall.domain.inputs import QUERY_TERMS
from graphrecall.domain.tree_paths import MAX_PATH_CHARS

_TIMESTAMP = re.compile(
    r"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d{1,9})?)?(Z|z|[+-]\d{2}:?\d{2})$"
)
_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]*$")


def _uuidv7(value: str) -> str:
    try:
        parsed = uuid.UUID(value)
    except (ValueError, AttributeError):
        raise ValueError("Invalid UUID") from None
    if parsed.version != 7:
        raise ValueError("Invalid UUIDv7 (memory ids are version 7 UUIDs)")
    return str(parsed)


def _uuid(value: str) -> str:
    try:
        return str(uuid.UUID(value))
    except (ValueError, AttributeError):
        raise ValueError("Invalid UUID") from None


def _timestamp(value: str) -> str:
    """An ISO 8601 datetime with ``Z`` or an offset -> the stored UTC form."""
    if not _TIMESTAMP.match(value):
        raise ValueError("Invalid datetime: an ISO 8601 timestamp with Z or an offset")
    text = value.upper().replace("Z", "+00:00")
    if len(text) > 5 and text[-5] in "+-" and ":" not in text[-5:]:
        text = text[:-2] + ":" + text[-2:]
    try:
        return clock.to_iso(clock.parse_iso(text, param="timestamp"))
    except Exception:
        raise ValueError("Invalid datetime") from None


def _non_empty(value: dict[str, Any]) -> dict[str, Any]:
    if not value:
        raise ValueError("metaContains must be a non-empty object")
    return value


def _name(value: str) -> str:
    if not _NAME.match(value):
        raise ValueError(
            "a name starts with a letter or digit and holds only letters, digits, '.', '_' and '-'"
        )
    return value


UuidV7 = Annotated[str, AfterValidator(_uuidv7)]
AnyUuid = Annotated[str, AfterValidator(_uuid)]
Timestamp = Annotated[str, AfterValidator(_timestamp)]
TreePath = Annotated[str, Field(max_length=MAX_PATH_CHARS, pattern=r"^[A-Za-z0-9_~./-]*$")]
TreeFilter = Annotated[str, Field(max_length=MAX_PATH_CHARS)]
Name = Annotated[str, Field(min_length=1, max_length=128), AfterValidator(_name)]
Hash = Annotated[str, Field(min_length=32, max_length=32)]
Meta = dict[str, Any]
OnConflict = Literal["error", "replace", "ignore"]
MAX_KEEP = 25_000


class Params(BaseModel):
    # Strict: "7" is not a limit nor "true" a flag (upstream's zod schemas refuse them too).
    model_config = ConfigDict(extra="ignore", strict=True)


class TemporalIn(Params):
    start: Timestamp
    end: Timestamp | None = None


class Window(Params):
    start: Timestamp
    end: Timestamp


class TemporalFilterIn(Params):
    contains: Timestamp | None = None
    overlaps: Window | None = None
    within: Window | None = None
    before: Timestamp | None = None
    after: Timestamp | None = None


class Weights(Params):
    semantic: Annotated[float, Field(ge=0, le=1)] | None = None
    fulltext: Annotated[float, Field(ge=0, le=1)] | None = None


class MemoryIn(Params):
    id: UuidV7 | None = None
    content: Annotated[str, Field(min_length=1)]
    meta: Meta | None = None
    tree: TreePath
    name: Name | None = None
    temporal: TemporalIn | None = None


class Create(MemoryIn):
    onConflict: OnConflict | None = None


class BatchCreate(Params):
    memories: Annotated[list[MemoryIn], Field(min_length=1, max_length=1000)]
    onConflict: OnConflict | None = None


class ById(Params):
    id: UuidV7


class ByPath(Params):
    path: Annotated[str, Field(min_length=1, max_length=MAX_PATH_CHARS + 200)]


class Update(Params):
    id: UuidV7
    versionHash: Hash
    content: Annotated[str, Field(min_length=1)] | None = None
    meta: Meta | None = None
    tree: TreePath | None = None
    name: Name | None = None
    temporal: TemporalIn | None = None


class Search(Params):
    # Cost caps (issue 47, item 7): the vector leg reads no more than MAX_SEMANTIC_CHARS,
    # and each distinct fulltext word is a lexical lookup.
    semantic: Annotated[str, Field(max_length=limits.MAX_SEMANTIC_CHARS)] | None = None
    fulltext: Annotated[str, Field(max_length=limits.MAX_FULLTEXT_CHARS), QUERY_TERMS] | None = None
    grep: str | None = None
    tree: TreeFilter | None = None
    meta: Meta | None = None
    metaPredicate: str | None = None
    temporal: TemporalFilterIn | None = None
    limit: Annotated[int, Field(ge=1, le=1000)] | None = None
    candidateLimit: Annotated[int, Field(ge=1, le=1000)] | None = None
    semanticThreshold: Annotated[float, Field(ge=0, le=1)] | None = None
    weights: Weights | None = None
    orderBy: Literal["asc", "desc"] | None = None


class Tree(Params):
    tree: TreePath | None = None
    levels: Annotated[int, Field(ge=1, le=100)] | None = None


class Transfer(Params):
    source: Annotated[TreePath, Field(min_length=1)]
    destination: TreePath
    dryRun: bool | None = None


class DeleteTree(Params):
    tree: Annotated[TreePath, Field(min_length=1)]
    dryRun: bool | None = None


class CountTree(Params):
    tree: Annotated[TreeFilter, Field(min_length=1)]
    maxCount: Annotated[int, Field(ge=1, le=2**63 - 1)] | None = None


class Slot(Params):
    tree: Annotated[TreePath, Field(min_length=1)]
    name: Name


class DeleteOrphansInTree(Params):
    """Upstream caps ``keep`` at 25,000 slots; the 1 MiB body cap usually binds first."""

    root: Annotated[TreePath, Field(min_length=1)]
    metaContains: Annotated[Meta, AfterValidator(_non_empty)]
    keep: Annotated[list[Slot], Field(max_length=MAX_KEEP)]
    dryRun: bool | None = None


class History(Params):
    memoryId: AnyUuid | None = None
    path: str | None = None
    tree: TreePath | None = None
    operation: Literal["insert", "update", "delete"] | None = None
    operationId: AnyUuid | None = None
    since: Timestamp | None = None
    until: Timestamp | None = None
    cursor: Annotated[str, Field(max_length=2048)] | None = None
    limit: Annotated[int, Field(ge=1, le=1000)] | None = None
    order: Literal["asc", "desc"] | None = None


class Revert(Params):
    id: UuidV7 | None = None
    path: str | None = None
    version: Annotated[int, Field(gt=0)]
    expectedVersionHash: Hash | None = None


class Empty(Params):
    pass


class AccessEffective(Params):
    principalId: str | None = None


class ListMembers(Params):
    kind: Literal["u", "s"] | None = None
