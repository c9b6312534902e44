"""Validated inputs for creating and changing records.

These are what services accept. They carry the documented limits, so a bad value is
rejected with the offending field named before anything is written.
"""

from __future__ import annotations

import json
import re
from typing import Annotated, Any, Literal

from pydantic import (
    AfterValidator,
    BaseModel,
    ConfigDict,
    Field,
    ValidationInfo,
    field_validator,
    model_validator,
)

from graphrecall.domain import limits, validation
from graphrecall.domain.errors import BadRequest
from graphrecall.domain.models import EpisodeSource, Role

Scalar = str | int | float | bool


def _check_object_size(value: dict[str, Any] | None) -> dict[str, Any] | None:
    """A free JSON object is at most ``MAX_JSON_OBJECT_BYTES`` as compact UTF-8 JSON."""
    if value is None:
        return None
    size = len(json.dumps(value, ensure_ascii=False, separators=(",", ":")).encode())
    if size > limits.MAX_JSON_OBJECT_BYTES:
        raise ValueError(
            f"{size:,} bytes as JSON; at most {limits.MAX_JSON_OBJECT_BYTES:,} are allowed"
        )
    return value


def _check_metadata(value: dict[str, Any] | None) -> dict[str, Any] | None:
    if value is None:
        return None
    _check_object_size(value)
    if len(value) > limits.MAX_METADATA_KEYS:
        raise ValueError(f"at most {limits.MAX_METADATA_KEYS} metadata keys are allowed")
    for key, item in value.items():
        if item is None:
            continue
        if isinstance(item, list):
            if not all(isinstance(v, Scalar) for v in item):
                raise ValueError(f"metadata key {key!r}: arrays may hold only scalars")
        elif not isinstance(item, Scalar):
            raise ValueError(f"metadata key {key!r}: values must be scalars or arrays of scalars")
    return value


def _text(cap: int) -> Any:
    return Field(max_length=cap)


# The free-text fields, each with its cap (domain/limits.py; the table in docs/api.md).
# Every body model below uses these types, so a cap is declared once and a too-long value
# is a 400 naming the field wherever it appears.
def _check_terms(value: str) -> str:
    problem = validation.term_problem(value)
    if problem is not None:
        raise ValueError(problem)
    return value


Metadata = Annotated[dict[str, Any] | None, AfterValidator(_check_metadata)]
# A search or context query: its length, and (a cost cap) its distinct words.
QUERY_TERMS = AfterValidator(_check_terms)
SearchQuery = Annotated[str, Field(max_length=8192), QUERY_TERMS]
JsonObject = Annotated[dict[str, Any] | None, AfterValidator(_check_object_size)]
Name = Annotated[str, Field(min_length=1, max_length=limits.MAX_NAME_CHARS)]
OptionalName = Annotated[str | None, _text(limits.MAX_NAME_CHARS)]
PersonName = Annotated[str | None, _text(limits.MAX_PERSON_NAME_CHARS)]
Email = Annotated[str | None, _text(limits.MAX_EMAIL_CHARS)]
Description = Annotated[str | None, _text(limits.MAX_DESCRIPTION_CHARS)]
Summary = Annotated[str | None, _text(limits.MAX_SUMMARY_CHARS)]
Label = Annotated[str, Field(min_length=1, max_length=limits.MAX_LABEL_CHARS)]
Labels = Annotated[list[Label] | None, Field(max_length=limits.MAX_LABELS)]
SourceDescription = Annotated[str | None, _text(limits.MAX_SOURCE_DESCRIPTION_CHARS)]
TimeZone = Annotated[str | None, _text(limits.MAX_TIME_ZONE_CHARS)]
Timestamp = Annotated[str | None, _text(limits.MAX_TIMESTAMP_CHARS)]
DocumentId = Annotated[str | None, _text(limits.MAX_DOCUMENT_ID_CHARS)]
Guidance = Annotated[str | None, _text(limits.MAX_GUIDANCE_CHARS)]
_UPPER_SNAKE = re.compile(r"^[A-Z][A-Z0-9]*(_[A-Z0-9]+)*$")


def _check_fact_name(value: str) -> str:
    if not _UPPER_SNAKE.match(value):
        raise ValueError("must be UPPER_SNAKE_CASE, e.g. WORKS_AT")
    return value


class Input(BaseModel):
    # Unknown keys are ignored so newer clients keep working against this server. Strict:
    # "7" is not a number and "true" not a boolean (a client sending them has a bug the
    # server should name, not hide); bodies are JSON, which has both.
    model_config = ConfigDict(extra="ignore", strict=True)


class UserCreate(Input):
    user_id: Annotated[str | None, Field(min_length=1, max_length=limits.MAX_USER_ID_CHARS)] = None
    email: Email = None
    first_name: PersonName = None
    last_name: PersonName = None
    metadata: Metadata = None
    time_zone: TimeZone = None
    disable_default_ontology: bool | None = None
    content_policy: JsonObject = None


class UserUpdate(Input):
    email: Email = None
    first_name: PersonName = None
    last_name: PersonName = None
    metadata: Metadata = None
    time_zone: TimeZone = None
    disable_default_ontology: bool | None = None


class GraphCreate(Input):
    name: OptionalName = None
    description: Description = None
    time_zone: TimeZone = None
    content_policy: JsonObject = None


class GraphUpdate(Input):
    name: OptionalName = None
    description: Description = None
    time_zone: TimeZone = None


class EpisodeCreate(Input):
    # ``type`` is declared first so the ``data`` validator can see it.
    type: EpisodeSource = "text"
    data: Annotated[str, Field(min_length=1, max_length=limits.MAX_EPISODE_CHARS)]
    source_description: SourceDescription = None
    reference_time: Timestamp = None
    metadata: Metadata = None
    document_id: DocumentId = None
    strict_ontology: bool | None = None

    @field_validator("data")
    @classmethod
    def _json_parses(cls, value: str, info: ValidationInfo) -> str:
        if info.data.get("type") == "json":
            try:
                # The body's own rule (depth, ranges, text), for the document inside it:
                # its strings become names and attributes.
                validation.loads(value, param="data")
            except BadRequest as exc:
                raise ValueError(f"type is json but {exc.message}") from None
        return value


class MessageCreate(Input):
    role: Role
    content: Annotated[str, Field(min_length=1, max_length=limits.MAX_MESSAGE_CHARS)]
    name: OptionalName = None
    metadata: Metadata = None
    reference_time: Timestamp = None
    uuid: None = Field(default=None, description="reserved; must be unset")


class MessagesAdd(Input):
    messages: Annotated[
        list[MessageCreate], Field(min_length=1, max_length=limits.MAX_MESSAGES_PER_CALL)
    ]
    ignore_roles: list[Role] | None = None
    return_context: bool | None = None
    strict_ontology: bool | None = None


class NodeRef(Input):
    """Names an edge endpoint: an existing node by ``uuid``, or a node by ``name``
    (reused when the graph has one of that name, created otherwise)."""

    uuid: str | None = None
    name: Annotated[str | None, Field(min_length=1, max_length=limits.MAX_NAME_CHARS)] = None
    labels: Labels = None
    summary: Summary = None
    attributes: JsonObject = None

    @model_validator(mode="before")
    @classmethod
    def _accept_uuid_(cls, data: Any) -> Any:
        if isinstance(data, dict) and "uuid_" in data and "uuid" not in data:
            data = {**data, "uuid": data["uuid_"]}
            del data["uuid_"]
        return data

    @model_validator(mode="after")
    def _named(self) -> NodeRef:
        if not self.uuid and not self.name:
            raise ValueError("a node reference needs a uuid or a name")
        return self


class NodeCreate(Input):
    name: Name
    label: Annotated[str | None, _text(limits.MAX_LABEL_CHARS)] = None
    summary: Summary = None
    attributes: JsonObject = None
    metadata: Metadata = None


class NodesAdd(Input):
    nodes: Annotated[list[NodeCreate], Field(min_length=1, max_length=limits.MAX_NODES_PER_CALL)]


class NodeUpdate(Input):
    name: Name | None = None
    summary: Summary = None
    attributes: JsonObject = None


class EdgeCreate(Input):
    fact: Annotated[str, Field(min_length=1, max_length=limits.MAX_EPISODE_CHARS)]
    fact_name: Annotated[str, Field(max_length=100), AfterValidator(_check_fact_name)]
    source_node: NodeRef
    target_node: NodeRef
    attributes: JsonObject = None
    metadata: Metadata = None
    valid_at: Timestamp = None
    invalid_at: Timestamp = None
    expired_at: Timestamp = None


class EdgesAdd(Input):
    edges: Annotated[list[EdgeCreate], Field(min_length=1, max_length=limits.MAX_EDGES_PER_CALL)]
    deduplicate: bool | None = None


class HyperedgeMember(Input):
    """One member edge of a hyperedge: its own name and node pair (the fact is shared)."""

    name: Annotated[str, Field(max_length=100), AfterValidator(_check_fact_name)]
    source_node: NodeRef
    target_node: NodeRef


class HyperedgeAdd(Input):
    fact: Annotated[str, Field(min_length=1, max_length=limits.MAX_EPISODE_CHARS)]
    # At least two members: fewer cannot span the three nodes a hyperedge needs.
    edges: Annotated[
        list[HyperedgeMember], Field(min_length=2, max_length=limits.MAX_EDGES_PER_CALL)
    ]
    attributes: JsonObject = None
    metadata: Metadata = None
    valid_at: Timestamp = None
    invalid_at: Timestamp = None
    expired_at: Timestamp = None


class HyperedgeUpdate(Input):
    fact: Annotated[str | None, Field(min_length=1, max_length=limits.MAX_EPISODE_CHARS)] = None


class EdgeUpdate(Input):
    fact: Annotated[str | None, Field(min_length=1, max_length=limits.MAX_EPISODE_CHARS)] = None
    attributes: JsonObject = None


# Merged into the stored metadata, so its key count and shape are checked by the service.
class EpisodeUpdate(Input):
    metadata: JsonObject = None


class MessageUpdate(Input):
    metadata: JsonObject = None


Direction = Literal["in", "out", "both"]


class UserGroupCreate(Input):
    name: Name
    description: Description = None


class UserGroupUpdate(Input):
    name: Name | None = None
    description: Description = None
    expected_version: Annotated[int | None, Field(ge=1)] = None


class MembershipChange(Input):
    user_uuids: Annotated[list[str], Field(min_length=1, max_length=limits.MAX_UUID_LIST)]


class BatchCreate(Input):
    ignore_roles: list[Role] | None = None
    metadata: Metadata = None
    strict_ontology: bool | None = None


class BatchItemInput(Input):
    """One item of ``add_items``. Which fields a kind needs is checked by the service
    (services/graph/batches.py), which names the item's field in the error."""

    type: Literal["graph_episode", "thread_message"]
    data: Annotated[str | None, Field(min_length=1, max_length=limits.MAX_EPISODE_CHARS)] = None
    data_type: Literal["text", "json", "message"] | None = None
    content: Annotated[str | None, Field(min_length=1, max_length=limits.MAX_MESSAGE_CHARS)] = None
    role: Role | None = None
    name: Annotated[str | None, Field(max_length=limits.MAX_NAME_CHARS)] = None
    graph_uuid: str | None = None
    user_uuid: str | None = None
    thread_uuid: str | None = None
    document_id: DocumentId = None
    source_description: SourceDescription = None
    reference_time: Timestamp = None
    metadata: Metadata = None


class BatchItemsAdd(Input):
    items: Annotated[
        list[BatchItemInput], Field(min_length=1, max_length=limits.MAX_BATCH_ITEMS_PER_CALL)
    ]


class UserInstruction(Input):
    name: Annotated[str, Field(min_length=1, max_length=100)]
    text: Annotated[str, Field(min_length=1, max_length=limits.MAX_INSTRUCTION_CHARS)]


class SummaryInstructionsSet(Input):
    inherited: bool | None = None
    instructions: Annotated[
        list[UserInstruction] | None, Field(max_length=limits.MAX_SUMMARY_INSTRUCTIONS)
    ] = None
