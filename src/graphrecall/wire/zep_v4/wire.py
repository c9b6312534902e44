"""Zep v4 wire models (what the SDK parses) and the explicit conversions from domain
records. Field names and required fields follow reference/zep-v4-wire.md; ``None`` fields
are left out of responses, except those the SDK requires."""

from __future__ import annotations

from typing import Any, Generic, TypeVar

from pydantic import BaseModel, ConfigDict

from graphrecall.domain import models as m


class Wire(BaseModel):
    model_config = ConfigDict(extra="forbid")

    @property
    def uuid_(self) -> str:
        """``uuid`` under the name the zep-cloud SDK's models give it (its generator
        renames ``uuid``), so code written against the SDK reads library results too."""
        try:
            return str(self.__dict__["uuid"])
        except KeyError:
            raise AttributeError("uuid_") from None


class ErrorBody(Wire):
    code: str
    message: str
    param: str | None = None
    details: dict[str, Any] | None = None
    request_id: str | None = None


class ErrorResponse(Wire):
    error: ErrorBody


class TaskProgress(Wire):
    stage: str | None = None


class TaskWire(Wire):
    uuid: str
    type: str
    status: str
    progress: TaskProgress | None = None
    result: dict[str, Any] | None = None
    error: dict[str, Any] | None = None
    created_at: str
    started_at: str | None = None
    updated_at: str | None = None
    completed_at: str | None = None


class AsyncResult(Wire):
    task: TaskWire


class ProjectWire(Wire):
    uuid: str
    name: str
    description: str | None = None
    default_time_zone: str | None = None
    hyperedges_enabled: bool = True  # always on: the hyperedge routes are built
    include_policy_violating_episodes: bool = False
    created_at: str


class UserWire(Wire):
    uuid: str
    graph_uuid: str
    user_id: str | None = None
    email: str | None = None
    first_name: str | None = None
    last_name: str | None = None
    metadata: dict[str, Any] | None = None
    time_zone: str | None = None
    disable_default_ontology: bool | None = None
    created_at: str


class GraphWire(Wire):
    uuid: str
    type: str
    graph_id: str | None = None
    name: str | None = None
    description: str | None = None
    time_zone: str | None = None
    user_uuid: str | None = None
    created_at: str
    updated_at: str


class ThreadWire(Wire):
    uuid: str
    user_uuid: str
    graph_uuid: str
    thread_id: str | None = None
    created_at: str
    updated_at: str


class MessageWire(Wire):
    uuid: str
    thread_uuid: str | None = None
    role: str | None = None
    name: str | None = None
    content: str
    metadata: dict[str, Any] | None = None
    reference_time: str | None = None
    created_at: str
    processed: bool
    # Why it is not processed: {code, message, task_uuid} (services/episode_errors.py).
    processing_error: dict[str, Any] | None = None


class EpisodeWire(Wire):
    uuid: str
    content: str
    source: str
    source_description: str | None = None
    role: str | None = None
    role_name: str | None = None
    metadata: dict[str, Any] | None = None
    reference_time: str | None = None
    created_at: str
    document_id: str | None = None
    thread_uuid: str | None = None
    graph_uuid: str
    user_uuid: str | None = None
    processed: bool
    processing_error: dict[str, Any] | None = None  # as MessageWire's
    score: float | None = None
    relevance: float | None = None


class NodeWire(Wire):
    uuid: str
    name: str
    labels: list[str]
    summary: str | None = None
    attributes: dict[str, Any] | None = None
    created_at: str
    graph_uuid: str
    user_uuid: str | None = None
    degree: int | None = None
    score: float | None = None
    relevance: float | None = None
    episode_uuids: list[str]
    episode_uuids_truncated: bool


class EdgeWire(Wire):
    uuid: str
    name: str
    fact: str
    attributes: dict[str, Any] | None = None
    episode_uuids: list[str]
    created_at: str
    valid_at: str | None = None
    invalid_at: str | None = None
    expired_at: str | None = None
    graph_uuid: str
    user_uuid: str | None = None
    scope: str = "entity"
    source_node_uuid: str
    source_node_name: str | None = None
    source_node_labels: list[str] | None = None
    target_node_uuid: str
    target_node_name: str | None = None
    target_node_labels: list[str] | None = None
    hyperedge_uuid: str | None = None
    score: float | None = None
    relevance: float | None = None


class ObservationWire(Wire):
    uuid: str
    name: str
    labels: list[str]
    summary: str
    attributes: dict[str, Any] | None = None
    episode_uuids: list[str]
    created_at: str
    graph_uuid: str
    user_uuid: str | None = None
    score: float | None = None
    relevance: float | None = None


class ThreadSummaryWire(Wire):
    uuid: str
    summary: str
    thread_uuid: str
    graph_uuid: str
    created_at: str
    last_summarized_at: str | None = None
    last_summarized_episode_valid_at: str | None = None
    score: float | None = None
    relevance: float | None = None


class EdgeNodeRefWire(Wire):
    uuid: str
    name: str
    labels: list[str]
    summary: str | None = None
    attributes: dict[str, Any] | None = None


class AddedNodeWire(Wire):
    uuid: str
    name: str
    label: str | None = None
    summary: str | None = None
    attributes: dict[str, Any] | None = None
    metadata: dict[str, Any] | None = None
    created_at: str


class AddedEdgeWire(Wire):
    uuid: str
    fact: str
    fact_name: str
    source_node_uuid: str
    target_node_uuid: str
    source_node: EdgeNodeRefWire
    target_node: EdgeNodeRefWire
    attributes: dict[str, Any] | None = None
    metadata: dict[str, Any] | None = None
    valid_at: str | None = None
    invalid_at: str | None = None
    expired_at: str | None = None


class AddEpisodeResult(Wire):
    episode: EpisodeWire
    task: TaskWire


class AddMessagesResult(Wire):
    messages: list[MessageWire]
    task: TaskWire
    context: str | None = None


class AddNodesResult(Wire):
    nodes: list[AddedNodeWire]
    task: TaskWire


class AddEdgesResult(Wire):
    edges: list[AddedEdgeWire]
    task: TaskWire


class NeighborEntry(Wire):
    node: NodeWire
    edges: list[EdgeWire]


class SubgraphResponse(Wire):
    nodes: list[NodeWire]
    edges: list[EdgeWire]
    truncated: bool
    truncation_reason: str | None = None


T = TypeVar("T")


class PageWire(Wire, Generic[T]):
    items: list[T]
    next_cursor: str | None = None
    total_size: int | None = None


# -- conversions ----------------------------------------------------------------------


def task(t: m.Task) -> TaskWire:
    return TaskWire(
        uuid=t.uuid,
        type=t.type,
        status=t.status,
        progress=TaskProgress(stage=t.stage) if t.stage else None,
        result=t.result,
        error=t.error,
        created_at=t.created_at,
        started_at=t.started_at,
        updated_at=t.updated_at,
        completed_at=t.completed_at,
    )


def project(p: m.Project) -> ProjectWire:
    return ProjectWire(
        uuid=p.uuid, name=p.name, default_time_zone=p.default_time_zone, created_at=p.created_at
    )


def user(u: m.User) -> UserWire:
    return UserWire(**u.model_dump(exclude={"project_uuid", "node_uuid", "updated_at"}))


def graph(g: m.Graph) -> GraphWire:
    return GraphWire(**g.model_dump(exclude={"project_uuid"}))


def thread(t: m.Thread) -> ThreadWire:
    return ThreadWire(**t.model_dump(exclude={"project_uuid"}))


def message(e: m.Episode, error: dict[str, Any] | None = None) -> MessageWire:
    return MessageWire(
        uuid=e.uuid,
        thread_uuid=e.thread_uuid,
        role=e.role,
        name=e.role_name,
        content=e.content,
        metadata=e.metadata,
        reference_time=e.reference_time,
        created_at=e.created_at,
        processed=e.processed,
        processing_error=error,
    )


def episode(
    e: m.Episode,
    g: m.Graph,
    score: float | None = None,
    relevance: float | None = None,
    error: dict[str, Any] | None = None,
) -> EpisodeWire:
    # What the episode is searched by is the index's, not the API's.
    fields = e.model_dump(exclude=set(m.Episode.derived_fields))
    return EpisodeWire(
        **fields, user_uuid=g.user_uuid, score=score, relevance=relevance, processing_error=error
    )


def observation(
    o: m.Observation,
    g: m.Graph,
    episode_uuids: list[str],
    score: float | None = None,
    relevance: float | None = None,
) -> ObservationWire:
    return ObservationWire(
        **o.model_dump(exclude={"updated_at"}),
        episode_uuids=episode_uuids,
        user_uuid=g.user_uuid,
        score=score,
        relevance=relevance,
    )


def thread_summary(
    t: m.ThreadSummary, score: float | None = None, relevance: float | None = None
) -> ThreadSummaryWire:
    return ThreadSummaryWire(**t.model_dump(), score=score, relevance=relevance)


def node(v: m.NodeView, g: m.Graph) -> NodeWire:
    n = v.node
    return NodeWire(
        uuid=n.uuid,
        name=n.name,
        labels=n.labels,
        summary=n.summary,
        attributes=n.attributes,
        created_at=n.created_at,
        graph_uuid=n.graph_uuid,
        user_uuid=g.user_uuid,
        degree=v.degree,
        score=v.score,
        relevance=v.relevance,
        episode_uuids=v.episode_uuids,
        episode_uuids_truncated=v.episode_uuids_truncated,
    )


def edge(v: m.EdgeView, g: m.Graph) -> EdgeWire:
    e = v.edge
    return EdgeWire(
        uuid=e.uuid,
        name=e.name,
        fact=e.fact,
        attributes=e.attributes,
        episode_uuids=v.episode_uuids,
        created_at=e.created_at,
        valid_at=e.valid_at,
        invalid_at=e.invalid_at,
        expired_at=e.expired_at,
        graph_uuid=e.graph_uuid,
        user_uuid=g.user_uuid,
        source_node_uuid=e.source_node_uuid,
        source_node_name=v.source.name if v.source else None,
        source_node_labels=v.source.labels if v.source else None,
        target_node_uuid=e.target_node_uuid,
        target_node_name=v.target.name if v.target else None,
        target_node_labels=v.target.labels if v.target else None,
        hyperedge_uuid=e.hyperedge_uuid,
        score=v.score,
        relevance=v.relevance,
    )


def added_node(n: m.Node) -> AddedNodeWire:
    extra = [label for label in n.labels if label != "Entity"]
    return AddedNodeWire(
        uuid=n.uuid,
        name=n.name,
        label=extra[0] if extra else None,
        summary=n.summary,
        attributes=n.attributes,
        metadata=n.metadata,
        created_at=n.created_at,
    )


def node_ref(n: m.Node) -> EdgeNodeRefWire:
    return EdgeNodeRefWire(
        uuid=n.uuid, name=n.name, labels=n.labels, summary=n.summary, attributes=n.attributes
    )


def added_edge(e: m.Edge, source: m.Node, target: m.Node) -> AddedEdgeWire:
    return AddedEdgeWire(
        uuid=e.uuid,
        fact=e.fact,
        fact_name=e.name,
        source_node_uuid=source.uuid,
        target_node_uuid=target.uuid,
        source_node=node_ref(source),
        target_node=node_ref(target),
        attributes=e.attributes,
        metadata=e.metadata,
        valid_at=e.valid_at,
        invalid_at=e.invalid_at,
        expired_at=e.expired_at,
    )
