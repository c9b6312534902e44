"""Request bodies that exist only on the wire (list and lookup envelopes)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from graphrecall.domain import limits
from graphrecall.domain.inputs import Direction, Guidance, SearchQuery, TimeZone
from graphrecall.domain.predicates import Predicate
from graphrecall.retrieval import filters as filter_language
from graphrecall.retrieval import rerank
from graphrecall.retrieval.filters import Target
from graphrecall.retrieval.request import DEFAULT_RERANKER

# The rerankers' names come from their registry (retrieval/rerank): pydantic validates a
# request against them and the OpenAPI schema lists them.
if TYPE_CHECKING:
    RerankerName = str
else:
    RerankerName = Literal[rerank.NAMES]


class Body(BaseModel):
    # As domain/inputs.Input: unknown keys ignored, no coercion of "7" or "true".
    model_config = ConfigDict(extra="ignore", strict=True)


class SearchListBody(Body):
    search: str | None = Field(default=None, max_length=500)


class LookupBody(Body):
    graph_id: str | None = None
    thread_id: str | None = None
    user_id: str | None = None


class LookupBatchBody(Body):
    """``lookup.batch``: lists of developer-assigned ids (lengths checked by the service,
    which names the list)."""

    graphs: list[str] | None = None
    threads: list[str] | None = None
    users: list[str] | None = None


class GraphQueryBody(Body):
    """``graph.query`` (and ``query_stream``, which sets ``stream``)."""

    query: SearchQuery
    graph_uuids: list[str]
    mode: str | None = Field(default=None, max_length=64)
    generate_answer: bool | None = None
    guidance: Guidance = None
    stream: bool | None = None


class ThreadCreateBody(Body):
    user_uuid: str


class FilteredListBody(Body):
    """A list or graph request body; ``filters`` is parsed by the filter language so that
    errors name paths like ``filters.property_filters[0].value``."""

    filters: dict[str, Any] | None = None

    def parsed(self) -> filter_language.Filters:
        return filter_language.parse(self.filters)

    def predicate(self, target: Target) -> Predicate | None:
        return filter_language.to_predicate(self.parsed(), target)


class NeighborsBody(FilteredListBody):
    direction: Direction = "both"


class SubgraphBody(FilteredListBody):
    seed_node_uuids: list[str] = Field(max_length=limits.MAX_UUID_LIST)
    depth: int = Field(default=1, ge=1, le=5)
    direction: Direction = "both"
    max_nodes: int = Field(default=100, ge=1, le=1000)
    max_edges: int = Field(default=200, ge=1, le=2000)


class ProjectUpdateBody(Body):
    default_time_zone: TimeZone = None
    hyperedges_enabled: bool | None = None
    include_policy_violating_episodes: bool | None = None


class SearchBody(FilteredListBody):
    query: SearchQuery
    reranker: RerankerName = DEFAULT_RERANKER
    mmr_lambda: float | None = Field(default=None, ge=0.0, le=1.0)
    center_node_uuid: str | None = None
    bfs_origin_node_uuids: list[str] | None = Field(default=None, max_length=5)
    filter_low_quality_results: bool | None = None
