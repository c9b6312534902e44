"""Zep v3 wire models, and the reshaping of v4 answers into them.

Field names follow the v3 SDK's models (``zep_cloud/types`` of zep-cloud 3.30.0): an
edge's episodes are ``episodes`` (v4: ``episode_uuids``), an episode's speaker is
``role`` and its role ``role_type`` (v4: ``role_name`` and ``role``), a thread and an
episode carry the developer's ``thread_id``/``user_id``. Each conversion starts from the
v4 wire item (``wire/zep_v4/wire.py``), so what a record shows is decided once."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict

from graphrecall.domain import models as m
from graphrecall.wire.zep_v4 import wire as v4


class Wire(BaseModel):
    model_config = ConfigDict(extra="forbid")


class UserV3(Wire):
    uuid: str
    user_id: str | None = None
    email: str | None = None
    first_name: str | None = None
    last_name: str | None = None
    metadata: dict[str, Any] | None = None
    time_zone: str | None = None
    disable_default_ontology: bool | None = None
    graph_uuid: str
    project_uuid: str
    created_at: str
    updated_at: str


class UserListV3(Wire):
    users: list[UserV3]
    total_count: int
    row_count: int


class ThreadV3(Wire):
    uuid: str
    thread_id: str | None = None
    user_id: str | None = None
    user_uuid: str
    graph_uuid: str
    project_uuid: str
    created_at: str


class ThreadListV3(Wire):
    threads: list[ThreadV3]
    total_count: int
    response_count: int


class MessageV3(Wire):
    uuid: str
    role: str
    name: str | None = None
    content: str
    metadata: dict[str, Any] | None = None
    created_at: str
    processed: bool


class MessageListV3(Wire):
    messages: list[MessageV3]
    row_count: int
    total_count: int
    thread_created_at: str
    user_id: str | None = None
    user_uuid: str


class AddMessagesV3(Wire):
    message_uuids: list[str]
    task_id: str
    context: str | None = None


class ContextV3(Wire):
    context: str


class SuccessV3(Wire):
    message: str


class TaskErrorV3(Wire):
    code: str | None = None
    message: str | None = None
    details: dict[str, Any] | None = None


class TaskProgressV3(Wire):
    stage: str | None = None
    message: str | None = None


class TaskV3(Wire):
    task_id: str
    type: str
    status: str
    progress: TaskProgressV3 | None = None
    error: TaskErrorV3 | None = None
    created_at: str
    started_at: str | None = None
    updated_at: str | None = None
    completed_at: str | None = None


class GraphV3(Wire):
    uuid: str
    graph_id: str | None = None
    name: str | None = None
    description: str | None = None
    time_zone: str | None = None
    project_uuid: str
    created_at: str
    updated_at: str


class GraphListV3(Wire):
    graphs: list[GraphV3]
    page_number: int
    page_size: int
    row_count: int
    total_count: int


class EpisodeV3(Wire):
    uuid: str
    content: str
    created_at: str
    source: str
    source_description: str | None = None
    role: str | None = None
    role_type: str | None = None
    metadata: dict[str, Any] | None = None
    document_id: str | None = None
    thread_id: str | None = None
    processed: bool
    task_id: str | None = None
    score: float | None = None
    relevance: float | None = None


class EpisodesV3(Wire):
    episodes: list[EpisodeV3]


class EdgeV3(Wire):
    uuid: str
    name: str
    fact: str
    attributes: dict[str, Any] | None = None
    episodes: list[str]
    created_at: str
    valid_at: str | None = None
    invalid_at: str | None = None
    expired_at: str | None = None
    scope: str | None = None
    source_node_uuid: str
    source_node_name: str | None = None
    source_node_labels: list[str] | None = None
    target_node_uuid: str
    target_node_name: str | None = None
    target_node_labels: list[str] | None = None
    hyperedge_uuid: str | None = None
    score: float | None = None
    relevance: float | None = None


class NodeV3(Wire):
    uuid: str
    name: str
    labels: list[str]
    summary: str  # required by the v3 SDK: "" when the node has none yet
    attributes: dict[str, Any] | None = None
    created_at: str
    degree: int | None = None
    episodes: list[str]
    episodes_truncated: bool
    score: float | None = None
    relevance: float | None = None


class UserNodeV3(Wire):
    node: NodeV3 | None = None


class MentionsV3(Wire):
    nodes: list[NodeV3]
    edges: list[EdgeV3]


class ObservationV3(Wire):
    """v3's ``DerivedNode``."""

    uuid: str
    name: str
    labels: list[str]
    summary: str
    attributes: dict[str, Any] | None = None
    episode_ids: list[str]
    created_at: str
    score: float | None = None
    relevance: float | None = None


class SagaV3(Wire):
    """v3's ``GraphitiSagaNode``: a thread summary as search finds it (named by its
    thread's id)."""

    uuid: str
    name: str
    summary: str
    created_at: str
    last_summarized_at: str | None = None
    last_summarized_episode_valid_at: str | None = None
    score: float | None = None
    relevance: float | None = None


class ThreadSummaryV3(Wire):
    uuid: str
    thread_id: str | None = None
    summary: str
    created_at: str
    last_summarized_at: str | None = None
    last_summarized_episode_valid_at: str | None = None


class FactTripleV3(Wire):
    edge: EdgeV3
    source_node: NodeV3
    target_node: NodeV3
    task_id: str


class AddNodesV3(Wire):
    nodes: list[v4.AddedNodeWire]  # the same fields in v3
    task_id: str


class TemplateV3(Wire):
    uuid: str
    template_id: str
    template: str


class TemplateListV3(Wire):
    templates: list[TemplateV3]


class SubgraphV3(Wire):
    nodes: list[NodeV3]
    edges: list[EdgeV3]
    truncated: bool
    truncation_reason: str | None = None


class NeighborV3(Wire):
    node: NodeV3
    edges: list[EdgeV3]


class ProjectInfoV3(Wire):
    uuid: str
    name: str
    description: str | None = None
    default_time_zone: str | None = None
    created_at: str


class ProjectV3(Wire):
    project: ProjectInfoV3


class CloneV3(Wire):
    graph_id: str | None = None
    task_id: str


class InstructionV3(Wire):
    name: str
    text: str


class InstructionsV3(Wire):
    instructions: list[InstructionV3]


class EntityTypesV3(Wire):
    entity_types: list[dict[str, Any]]
    edge_types: list[dict[str, Any]]


class UserGroupV3(Wire):
    uuid: str
    name: str
    description: str | None = None
    version: int
    member_count: int
    project_uuid: str
    created_at: str
    updated_at: str


class UserGroupListV3(Wire):
    user_groups: list[UserGroupV3]
    total_count: int
    row_count: int


class UserGroupsOfUserV3(Wire):
    user_groups: list[UserGroupV3]


class MembershipV3(Wire):
    added_count: int | None = None
    removed_count: int | None = None
    no_op_count: int


class BatchProgressV3(Wire):
    total_items: int
    queued_items: int
    processing_items: int
    succeeded_items: int
    failed_items: int
    percent_complete: float


class BatchV3(Wire):
    batch_id: str
    status: str
    metadata: dict[str, Any] | None = None
    ignore_roles: list[str] | None = None
    strict_ontology: bool
    item_count: int
    progress: BatchProgressV3 | None = None
    created_at: str
    updated_at: str


class BatchListV3(Wire):
    batches: list[BatchV3]
    next_cursor: int | None = None


class BatchItemV3(Wire):
    item_id: str
    kind: str
    status: str
    sequence_index: int
    graph_uuid: str
    graph_id: str | None = None
    user_uuid: str | None = None
    user_id: str | None = None
    thread_id: str | None = None
    episode_uuid: str
    source_uuid: str
    document_id: str | None = None
    created_at: str


class BatchItemListV3(Wire):
    items: list[BatchItemV3]
    next_cursor: int | None = None


class SearchResultsV3(Wire):
    edges: list[EdgeV3] | None = None
    nodes: list[NodeV3] | None = None
    episodes: list[EpisodeV3] | None = None
    observations: list[ObservationV3] | None = None
    thread_summaries: list[SagaV3] | None = None
    context: str | None = None


# -- conversions ----------------------------------------------------------------------


def user(u: m.User) -> UserV3:
    return UserV3(**u.model_dump(exclude={"node_uuid"}))


def thread(t: m.Thread, user_id: str | None) -> ThreadV3:
    return ThreadV3(**t.model_dump(exclude={"updated_at"}), user_id=user_id)


def message(w: v4.MessageWire) -> MessageV3:
    # v3's created_at is the message's own time (v4: reference_time); a v3 role is
    # never absent ("norole" stands for none).
    return MessageV3(
        uuid=w.uuid,
        role=w.role or "norole",
        name=w.name,
        content=w.content,
        metadata=w.metadata,
        created_at=w.reference_time or w.created_at,
        processed=w.processed,
    )


def task(w: v4.TaskWire) -> TaskV3:
    error = None
    if w.error is not None:
        error = TaskErrorV3(
            code=_text(w.error.get("code")),
            message=_text(w.error.get("message")),
            details={k: v for k, v in w.error.items() if k not in ("code", "message")} or None,
        )
    return TaskV3(
        task_id=w.uuid,
        type=w.type,
        status=w.status,
        progress=TaskProgressV3(stage=w.progress.stage) if w.progress else None,
        error=error,
        created_at=w.created_at,
        started_at=w.started_at,
        updated_at=w.updated_at,
        completed_at=w.completed_at,
    )


def _text(value: Any) -> str | None:
    return None if value is None else str(value)


def graph(g: m.Graph) -> GraphV3:
    return GraphV3(**g.model_dump(exclude={"type", "user_uuid"}))


def episode(
    w: v4.EpisodeWire, thread_id: str | None = None, task_id: str | None = None
) -> EpisodeV3:
    return EpisodeV3(
        uuid=w.uuid,
        content=w.content,
        created_at=w.reference_time or w.created_at,  # v3's is the episode's own time
        source=w.source,
        source_description=w.source_description,
        role=w.role_name,
        role_type=w.role,
        metadata=w.metadata,
        document_id=w.document_id,
        thread_id=thread_id,
        processed=w.processed,
        task_id=task_id,
        score=w.score,
        relevance=w.relevance,
    )


def edge(w: v4.EdgeWire) -> EdgeV3:
    fields = w.model_dump(exclude={"episode_uuids", "graph_uuid", "user_uuid"})
    return EdgeV3(**fields, episodes=w.episode_uuids)


def node(w: v4.NodeWire) -> NodeV3:
    return NodeV3(
        uuid=w.uuid,
        name=w.name,
        labels=w.labels,
        summary=w.summary or "",
        attributes=w.attributes,
        created_at=w.created_at,
        degree=w.degree,
        episodes=w.episode_uuids,
        episodes_truncated=w.episode_uuids_truncated,
        score=w.score,
        relevance=w.relevance,
    )


def observation(w: v4.ObservationWire) -> ObservationV3:
    fields = w.model_dump(exclude={"episode_uuids", "graph_uuid", "user_uuid"})
    return ObservationV3(**fields, episode_ids=w.episode_uuids)


def saga(w: v4.ThreadSummaryWire, thread_id: str | None) -> SagaV3:
    fields = w.model_dump(exclude={"thread_uuid", "graph_uuid"})
    return SagaV3(**fields, name=thread_id or w.thread_uuid)


def thread_summary(w: v4.ThreadSummaryWire, thread_id: str | None) -> ThreadSummaryV3:
    fields = w.model_dump(exclude={"thread_uuid", "graph_uuid", "score", "relevance"})
    return ThreadSummaryV3(**fields, thread_id=thread_id)
