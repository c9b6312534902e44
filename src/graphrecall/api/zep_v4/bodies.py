"""Request bodies that exist only on the wire (list and lookup envelopes)."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from graphrecall.domain import limits
from graphrecall.domain.errors import NotImplementedYet
from graphrecall.domain.inputs import Direction


class Body(BaseModel):
    model_config = ConfigDict(extra="ignore")


class SearchListBody(Body):
    search: str | None = Field(default=None, max_length=500)


class LookupBody(Body):
    graph_id: str | None = None
    thread_id: str | None = None
    user_id: str | None = None


class ThreadCreateBody(Body):
    user_uuid: str


class EpisodeListFilters(Body):
    mentioned_node_uuids: list[str] | None = Field(default=None, max_length=limits.MAX_UUID_LIST)
    metadata_filters: dict[str, Any] | None = None
    content_policy_violated: bool | None = None


class EpisodeListBody(Body):
    filters: EpisodeListFilters | None = None


class FilteredListBody(Body):
    filters: dict[str, Any] | None = None


class NeighborsBody(Body):
    direction: Direction = "both"
    filters: dict[str, Any] | None = None


class SubgraphBody(Body):
    seed_node_uuids: list[str] = Field(max_length=limits.MAX_UUID_LIST)
    depth: int = Field(default=1, ge=1, le=5)
    direction: Direction = "both"
    max_nodes: int = Field(default=100, ge=1, le=1000)
    max_edges: int = Field(default=200, ge=1, le=2000)
    filters: dict[str, Any] | None = None


class ProjectUpdateBody(Body):
    default_time_zone: str | None = None
    hyperedges_enabled: bool | None = None
    include_policy_violating_episodes: bool | None = None


def reject_filters(filters: dict[str, Any] | None, supported: tuple[str, ...] = ()) -> None:
    """Filters of the search issue's filter language are not built yet: say so (501)
    rather than ignore them and return unfiltered data as if filtered."""
    for key, value in (filters or {}).items():
        if value is not None and key not in supported:
            raise NotImplementedYet(
                f"filter {key!r} is not supported on this endpoint yet", param=f"filters.{key}"
            )
