"""Domain records. Free of wire quirks: the API layer converts them explicitly.

Every record that belongs to a graph carries ``graph_uuid``; every record of a tenant
carries ``project_uuid``. The store persists these models field by field.
"""

from __future__ import annotations

from typing import Annotated, Any, ClassVar, Generic, Literal, TypeVar

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field

from graphrecall.domain import validation

# Read back through the serialisation guard (validation.clip): a stored value always
# serialises, whatever was written before the input check.
Json = Annotated[dict[str, Any], BeforeValidator(validation.clip)]
TaskStatus = Literal["pending", "processing", "succeeded", "partial", "failed"]
EpisodeSource = Literal["text", "json", "message", "fact_triple"]
Role = Literal["system", "assistant", "user", "function", "tool"]


class Record(BaseModel):
    model_config = ConfigDict(extra="forbid")

    # Fields derived from other records (what the record is searched or sorted by), kept
    # right by the writers of those records (graph_model/graph_writes.py). A record update
    # leaves them alone, so a copy read before they moved cannot write back stale values.
    derived_fields: ClassVar[frozenset[str]] = frozenset()

    uuid: str


class Project(Record):
    name: str
    default_time_zone: str | None = None
    created_at: str


class ApiKey(Record):
    project_uuid: str
    name: str | None = None
    prefix: str
    key_hash: str
    created_at: str
    revoked_at: str | None = None


class User(Record):
    project_uuid: str
    graph_uuid: str
    node_uuid: str
    user_id: str | None = None
    email: str | None = None
    first_name: str | None = None
    last_name: str | None = None
    metadata: Json | None = None
    time_zone: str | None = None
    disable_default_ontology: bool | None = None
    created_at: str
    updated_at: str


class Graph(Record):
    project_uuid: str
    type: Literal["user", "standard"]
    graph_id: str | None = None
    name: str | None = None
    description: str | None = None
    time_zone: str | None = None
    user_uuid: str | None = None
    created_at: str
    updated_at: str


class Thread(Record):
    project_uuid: str
    graph_uuid: str
    user_uuid: str
    thread_id: str | None = None
    created_at: str
    updated_at: str


class Episode(Record):
    """Raw input. A thread message is an episode with ``thread_uuid`` and ``role`` set."""

    graph_uuid: str
    content: str
    source: EpisodeSource = "text"
    source_description: str | None = None
    role: Role | None = None
    role_name: str | None = None
    metadata: Json | None = None
    reference_time: str
    created_at: str
    document_id: str | None = None
    thread_uuid: str | None = None
    processed: bool = False
    # What the episode is also found by (graph_model/indexed_text.py): the start of the
    # messages before it in its thread, the facts extracted from it, the start of its reply.
    search_context: str | None = None
    search_facts: str | None = None
    search_replies: str | None = None

    derived_fields: ClassVar[frozenset[str]] = frozenset(
        {"search_context", "search_facts", "search_replies"}
    )


class Node(Record):
    graph_uuid: str
    name: str
    labels: list[str] = Field(default_factory=list)
    summary: str | None = None
    attributes: Json | None = None
    metadata: Json | None = None
    created_at: str
    updated_at: str
    # The live (unexpired) edges of its graph touching it, each end counted (graph_model/degree.py).
    degree: int = 0

    derived_fields: ClassVar[frozenset[str]] = frozenset({"degree"})


class Edge(Record):
    graph_uuid: str
    name: str
    fact: str
    source_node_uuid: str
    target_node_uuid: str
    attributes: Json | None = None
    metadata: Json | None = None
    created_at: str
    updated_at: str
    valid_at: str | None = None
    invalid_at: str | None = None
    expired_at: str | None = None
    # Set on the member edges of a hyperedge (one fact over three or more nodes): they
    # share it, their fact and their timestamps.
    hyperedge_uuid: str | None = None


class Hyperedge(Record):
    """A hyperedge's identity (services/graph/hyperedges.py); its fact, timestamps and nodes are
    on its member edges (``Edge.hyperedge_uuid``). Kept while it has a member."""

    graph_uuid: str
    created_at: str


class Observation(Record):
    graph_uuid: str
    name: str
    labels: list[str] = Field(default_factory=list)
    summary: str
    attributes: Json | None = None
    created_at: str
    updated_at: str


class ThreadSummary(Record):
    graph_uuid: str
    thread_uuid: str
    summary: str
    created_at: str
    last_summarized_at: str | None = None
    last_summarized_episode_valid_at: str | None = None


# Task priorities (``Task.priority``): the queue claims live work before background work,
# and never claims a tracking task (its status is written by the work it tracks).
LIVE = 0
BACKGROUND = 1
TRACKING = -1


class Task(Record):
    project_uuid: str
    graph_uuid: str | None = None
    type: str
    priority: int = LIVE
    status: TaskStatus = "pending"
    stage: str | None = None
    payload: Json = Field(default_factory=dict)
    result: Json | None = None
    error: Json | None = None
    created_at: str
    started_at: str | None = None
    updated_at: str
    completed_at: str | None = None


R = TypeVar("R")


class Page(BaseModel, Generic[R]):
    items: list[R]
    next_cursor: str | None = None
    total_size: int | None = None


class PageRequest(BaseModel):
    """One page of a list: keyset cursor over (order_by, uuid)."""

    model_config = ConfigDict(frozen=True)

    page_size: int = 50
    cursor: str | None = None
    order_by: str = "uuid"
    order: Literal["asc", "desc"] = "desc"


class NodeView(BaseModel):
    """A node with what readers need besides its row: provenance and, on request, degree."""

    node: Node
    episode_uuids: list[str]
    episode_uuids_truncated: bool
    degree: int | None = None
    score: float | None = None
    relevance: float | None = None


class HyperedgeView(BaseModel):
    """A hyperedge with its member edges (ordered by uuid), which carry its shared fact
    and timestamps."""

    hyperedge: Hyperedge
    members: list[Edge]


class EdgeView(BaseModel):
    """An edge with its endpoints' current names and labels and its supporting episodes."""

    edge: Edge
    source: Node | None
    target: Node | None
    episode_uuids: list[str]
    score: float | None = None
    relevance: float | None = None


class Ontology(Record):
    """Entity and edge types for a graph or a project; ``uuid`` is the owner's uuid."""

    project_uuid: str
    owner_type: Literal["graph", "project"]
    data: Json
    updated_at: str


# -- the Memory Engine face ----------------------------------------------------------


class Space(Record):
    """A Memory Engine tenant inside a project, selected by its 12-character ``slug``."""

    project_uuid: str
    slug: str
    name: str
    created_at: str


class Memory(Record):
    """A Memory Engine record. ``tree`` is stored dotted (root ``""``); the temporal range
    is the point ``[start, start]`` when start == end, else ``[start, end)``."""

    space_uuid: str
    content: str
    meta: Json = Field(default_factory=dict)
    tree: str = ""
    name: str | None = None
    temporal_start: str | None = None
    temporal_end: str | None = None
    version: int = 1
    version_hash: str
    created_at: str
    updated_at: str | None = None


class MemoryEvent(Record):
    """One entry of a space's audit log: a memory's state after an insert or update, or
    the state it had when deleted. Rows of one bulk operation share ``operation_id``."""

    space_uuid: str
    memory_uuid: str
    at: str
    operation: Literal["insert", "update", "delete"]
    operation_id: str
    cause: str
    actor: Json = Field(default_factory=dict)
    content: str
    meta: Json = Field(default_factory=dict)
    tree: str = ""
    name: str | None = None
    temporal_start: str | None = None
    temporal_end: str | None = None
    version: int
    version_hash: str


BatchStatus = Literal["draft", "queued", "processing", "succeeded", "partial", "failed"]
BatchItemType = Literal["graph_episode", "thread_message"]


class Batch(Record):
    """A bulk ingestion job of a project (services/graph/batches.py): items are appended while
    it is a draft, then processed in the background at a lower priority than live work."""

    project_uuid: str
    status: BatchStatus = "draft"
    metadata: Json | None = None
    ignore_roles: list[Role] | None = None
    strict_ontology: bool = False
    item_count: int = 0  # items appended so far: the next item's sequence_index
    task_uuid: str | None = None  # the tracking task, once processing was asked for
    created_at: str
    updated_at: str


class BatchItem(Record):
    """One item of a batch: an episode (or a thread message) to ingest, kept as given
    (``data``) until the batch is processed, then an episode of ``graph_uuid`` with the
    uuid ``episode_uuid``, processed by the task ``task_uuid``."""

    project_uuid: str
    batch_uuid: str
    sequence_index: int
    type: BatchItemType
    graph_uuid: str
    user_uuid: str | None = None
    thread_uuid: str | None = None
    episode_uuid: str
    task_uuid: str | None = None
    data: Json
    created_at: str


class SummaryInstructions(Record):
    """Instructions that steer a user's summary (ingest/derive.py), set for the project
    (``uuid`` = the project's) or for one user (``uuid`` = the user's, overriding the
    project's). ``data``: ``{"instructions": [{"name", "text"}]}``."""

    project_uuid: str
    owner_type: Literal["project", "user"]
    data: Json
    updated_at: str


class UserGroup(Record):
    """A named set of a project's users (services/graph/user_groups.py): a security grouping in
    Zep, not a data container. ``version`` counts its updates (optimistic concurrency)."""

    project_uuid: str
    name: str
    description: str | None = None
    version: int = 1
    created_at: str
    updated_at: str


class UserGroupMember(Record):
    """One user's membership of one group."""

    project_uuid: str
    group_uuid: str
    user_uuid: str
    created_at: str


class WebhookEndpoint(Record):
    """Where a project's events are posted (``uuid`` = the project's; ingest/webhooks.py),
    signed with ``secret``; ``events`` lists the event names it receives."""

    project_uuid: str
    url: str
    secret: str
    events: list[str]
    created_at: str
    updated_at: str


WebhookStatus = Literal["pending", "delivered", "failed"]


class WebhookDelivery(Record):
    """One event to post (an outbox row, written with the change it reports): retried
    with backoff until a 2xx or the last attempt."""

    project_uuid: str
    event_name: str
    payload: Json
    status: WebhookStatus = "pending"
    attempts: int = 0
    next_attempt_at: str
    last_error: str | None = None
    created_at: str
    delivered_at: str | None = None


class ContextTemplate(Record):
    """A named context-block template of a project (see docs/context.md)."""

    project_uuid: str
    name: str
    template: str
    created_at: str
    updated_at: str


class DebugLogging(Record):
    """A project's debug logging switch (``uuid`` = the project's): episodes ingested
    before ``enabled_until`` get a debug log and ingestion traces (ingest/trace.py)."""

    project_uuid: str
    enabled_until: str
    updated_at: str


DebugLogStatus = Literal["running", "completed", "error"]


class EpisodeDebugLog(Record):
    """What ingestion did with one episode (``uuid`` = the episode's), in words:
    ``entries`` are ``{"level", "logged_at", "message"}``, oldest first."""

    graph_uuid: str
    status: DebugLogStatus
    entries: list[dict[str, Any]] = Field(default_factory=list)
    # (Not ``error``: that name is a JSON column of tasks, store/rows.JSON_FIELDS.)
    error_message: str | None = None
    started_at: str
    completed_at: str | None = None


class IngestionTrace(Record):
    """One ingestion step of one episode (``combined_extraction``, ``resolve_nodes``,
    ``resolve_edges``): its input and output as the Zep wire has them, each output
    entry with the explanation of the decision taken on it."""

    graph_uuid: str
    episode_uuid: str
    step: str
    seq: int  # the step's position within the episode's traces
    status: Literal["recorded", "failed"] = "recorded"
    input: Json
    output: Json
    error_message: str | None = None
    created_at: str


class DocumentSummary(Record):
    """A summary of the episodes of one document (``Episode.document_id``) of a graph,
    kept up to date by ingestion as thread summaries are."""

    graph_uuid: str
    document_id: str
    summary: str
    created_at: str
    last_summarized_at: str | None = None
    last_summarized_episode_valid_at: str | None = None
