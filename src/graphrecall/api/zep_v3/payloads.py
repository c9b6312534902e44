"""v3 request bodies: the v4 inputs under v3's field names, so validation (limits, the
field a 400 names) is the v4 one."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import AliasChoices, Field

from graphrecall.domain import limits
from graphrecall.domain.inputs import (
    Direction,
    EpisodeCreate,
    MessageCreate,
    MessagesAdd,
    NodesAdd,
    UserInstruction,
)
from graphrecall.wire.zep_v4.bodies import Body, RerankerName

DeveloperId = Annotated[str, Field(min_length=1, max_length=limits.MAX_USER_ID_CHARS)]


class ThreadCreateV3(Body):
    thread_id: DeveloperId
    user_id: DeveloperId


class MessageV3(MessageCreate):
    """A v3 message: its time is ``created_at`` (v4: ``reference_time``)."""

    reference_time: str | None = Field(
        default=None, validation_alias=AliasChoices("created_at", "reference_time")
    )


class MessagesAddV3(MessagesAdd):
    # Each item is a MessageCreate (a subclass): the v4 service reads it as one.
    messages: Annotated[  # type: ignore[assignment]
        list[MessageV3], Field(min_length=1, max_length=limits.MAX_MESSAGES_PER_CALL)
    ]


class GraphTarget(Body):
    """v3 names the graph of a graph call by ``user_id`` (the user's graph) or
    ``graph_id``; zep-cloud 2.x said ``group_id``."""

    user_id: str | None = None
    graph_id: str | None = Field(
        default=None, validation_alias=AliasChoices("graph_id", "group_id")
    )


class EpisodeAddV3(EpisodeCreate):
    """``graph.add``: v3's ``created_at`` is the episode's time (v4: ``reference_time``)."""

    user_id: str | None = None
    graph_id: str | None = Field(
        default=None, validation_alias=AliasChoices("graph_id", "group_id")
    )
    reference_time: str | None = Field(
        default=None, validation_alias=AliasChoices("created_at", "reference_time")
    )


class EpisodeBatchItemV3(EpisodeCreate):
    reference_time: str | None = Field(
        default=None, validation_alias=AliasChoices("created_at", "reference_time")
    )


class EpisodeBatchV3(GraphTarget):
    episodes: Annotated[list[EpisodeBatchItemV3], Field(min_length=1, max_length=20)]


class GraphCreateV3(Body):
    graph_id: DeveloperId
    name: Annotated[str | None, Field(max_length=limits.MAX_NAME_CHARS)] = None
    description: str | None = None
    time_zone: str | None = None


class SearchV3(GraphTarget):
    query: str = Field(max_length=8192)
    scope: (
        Literal["edges", "nodes", "episodes", "observations", "thread_summaries", "auto"] | None
    ) = None
    reranker: RerankerName | None = None
    limit: int | None = Field(default=None, ge=1, le=50)
    mmr_lambda: float | None = Field(default=None, ge=0.0, le=1.0)
    center_node_uuid: str | None = None
    bfs_origin_node_uuids: list[str] | None = Field(default=None, max_length=5)
    search_filters: dict[str, Any] | None = None
    max_characters: int | None = Field(default=None, ge=1, le=50000)
    return_raw_results: bool | None = None


class ItemListV3(Body):
    """The body of ``graph.edge/node.get_by_user_id`` and friends."""

    limit: int | None = Field(default=None, ge=1)
    uuid_cursor: str | None = None
    cursor: str | None = None
    filters: dict[str, Any] | None = None  # v3's search_filters language


class EpisodeListV3(Body):
    """``graph.episode.list_by_user_id`` / ``list_by_graph_id`` (3.30): ``cursor`` is the
    last uuid of the page before (episode uuids are time-ordered)."""

    limit: int | None = Field(default=None, ge=1)
    cursor: str | None = None
    direction: Literal["asc", "desc"] | None = None
    order_by: Literal["created_at", "uuid"] | None = None
    mentioned_node_uuids: list[str] | None = Field(default=None, max_length=limits.MAX_UUID_LIST)
    episode_metadata_filters: dict[str, Any] | None = None


class FactTripleV3(GraphTarget):
    """``graph.add_fact_triple``: one fact between two nodes named (or given by uuid)."""

    fact: str
    fact_name: str
    source_node_name: str | None = None
    source_node_uuid: str | None = None
    source_node_labels: list[str] | None = None
    source_node_summary: str | None = None
    source_node_attributes: dict[str, Any] | None = None
    target_node_name: str | None = None
    target_node_uuid: str | None = None
    target_node_labels: list[str] | None = None
    target_node_summary: str | None = None
    target_node_attributes: dict[str, Any] | None = None
    edge_attributes: dict[str, Any] | None = None
    metadata: dict[str, Any] | None = None
    valid_at: str | None = None
    invalid_at: str | None = None
    expired_at: str | None = None

    def as_v4(self) -> dict[str, Any]:
        """The v4 ``EdgesAdd`` body with this one edge (validated by it)."""

        def node(side: str) -> dict[str, Any]:
            fields = ("uuid", "name", "labels", "summary", "attributes")
            return {f: getattr(self, f"{side}_node_{f}") for f in fields}

        edge = {
            "fact": self.fact,
            "fact_name": self.fact_name,
            "source_node": node("source"),
            "target_node": node("target"),
            "attributes": self.edge_attributes,
            "metadata": self.metadata,
            "valid_at": self.valid_at,
            "invalid_at": self.invalid_at,
            "expired_at": self.expired_at,
        }
        return {"edges": [edge]}


class NodesAddV3(GraphTarget, NodesAdd):
    """``graph.add_nodes``: v4's body, on the graph v3 names."""


class TemplateCreateV3(Body):
    template_id: DeveloperId
    template: str


class TemplateUpdateV3(Body):
    template: str


class SubgraphV3(GraphTarget):
    seed_node_uuids: list[str] = Field(max_length=limits.MAX_UUID_LIST)
    depth: int = Field(default=1, ge=1, le=5)
    direction: Direction | None = None
    max_nodes: int = Field(default=100, ge=1, le=1000)
    max_edges: int = Field(default=200, ge=1, le=2000)
    search_filters: dict[str, Any] | None = None


class NeighborsV3(Body):
    """``graph.node.get_neighbors``: ``cursor`` is the one the previous page's
    ``Zep-Next-Cursor`` header gave."""

    cursor: str | None = Field(default=None, max_length=2048)
    direction: Direction | None = None
    direction_sort: Literal["asc", "desc"] | None = None
    order_by: Literal["uuid", "created_at"] | None = None
    limit: int | None = Field(default=None, ge=1)
    filters: dict[str, Any] | None = None


class ProjectUpdateV3(Body):
    default_time_zone: str | None = None


class CloneV3(Body):
    source_graph_id: str | None = None
    source_user_id: str | None = None
    target_graph_id: Annotated[str | None, Field(max_length=limits.MAX_USER_ID_CHARS)] = None
    target_user_id: str | None = None


class InstructionsAddV3(Body):
    instructions: Annotated[
        list[UserInstruction], Field(min_length=1, max_length=limits.MAX_SUMMARY_INSTRUCTIONS)
    ]
    user_ids: list[str] | None = Field(default=None, max_length=limits.MAX_UUID_LIST)


class InstructionsDeleteV3(Body):
    instruction_names: list[str] | None = None
    user_ids: list[str] | None = Field(default=None, max_length=limits.MAX_UUID_LIST)


class EntityTypesV3(Body):
    """``graph.set_entity_types`` / ``set_ontology``: the types, and whose they are (the
    project's when no id is given). The types are validated as v4's ontology."""

    entity_types: list[dict[str, Any]] | None = None
    edge_types: list[dict[str, Any]] | None = None
    user_ids: list[str] | None = Field(default=None, max_length=limits.MAX_UUID_LIST)
    graph_ids: list[str] | None = Field(default=None, max_length=limits.MAX_UUID_LIST)


class BatchItemV3In(Body):
    """One v3 batch item: its user, graph or thread named by the developer's id."""

    type: str
    user_id: str | None = None
    graph_id: str | None = None
    thread_id: str | None = None
    data: str | None = None
    data_type: str | None = None
    content: str | None = None
    role: str | None = None
    name: str | None = None
    created_at: str | None = None
    metadata: dict[str, Any] | None = None
    source_description: str | None = None
    document_id: str | None = None


class BatchItemsV3(Body):
    items: Annotated[
        list[BatchItemV3In], Field(min_length=1, max_length=limits.MAX_BATCH_ITEMS_PER_CALL)
    ]
