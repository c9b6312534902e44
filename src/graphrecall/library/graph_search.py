"""``gr.graph.search_*``: one method per search scope, as the SDK has them, each a
:class:`~graphrecall.library.calls.Pager` over the search service's pages, whose items
are converted by the scope's wire converter (``wire/zep_v4/search.py``)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from graphrecall.library.calls import OMIT, Pager, body, checked_size, pages
from graphrecall.library.session import Part
from graphrecall.services import search as search_service
from graphrecall.services.search import SEARCH_PAGE_MAX
from graphrecall.wire.zep_v4 import bodies, wire
from graphrecall.wire.zep_v4 import search as scopes


class GraphSearch(Part):
    def _search(self, scope: str, graph_uuid: str, asked: dict[str, Any]) -> Pager[Any]:
        page_size, cursor = asked.pop("page_size"), asked.pop("cursor")
        size = checked_size(page_size, SEARCH_PAGE_MAX, SEARCH_PAGE_MAX)
        params = scopes.params(body(bodies.SearchBody, **asked))
        convert = scopes.SCOPES[scope][2]

        def read(at: str | None) -> tuple[list[Any], str | None, int | None]:
            graph, found, next_cursor = search_service.search(
                self._ctx, self._project, graph_uuid, scope, params, page_size=size, cursor=at
            )
            return convert(self._ctx, graph, found), next_cursor, None

        return pages(read, cursor)

    def search_edges(
        self,
        graph_uuid: str,
        *,
        query: str,
        page_size: int | None = None,
        cursor: str | None = None,
        bfs_origin_node_uuids: Sequence[str] | None = OMIT,
        center_node_uuid: str | None = OMIT,
        filter_low_quality_results: bool | None = OMIT,
        filters: Any = OMIT,
        mmr_lambda: float | None = OMIT,
        reranker: str | None = OMIT,
    ) -> Pager[wire.EdgeWire]:
        asked = dict(locals())
        return self._search("edges", graph_uuid, _args(asked))

    def search_nodes(
        self,
        graph_uuid: str,
        *,
        query: str,
        page_size: int | None = None,
        cursor: str | None = None,
        bfs_origin_node_uuids: Sequence[str] | None = OMIT,
        center_node_uuid: str | None = OMIT,
        filter_low_quality_results: bool | None = OMIT,
        filters: Any = OMIT,
        mmr_lambda: float | None = OMIT,
        reranker: str | None = OMIT,
    ) -> Pager[wire.NodeWire]:
        asked = dict(locals())
        return self._search("nodes", graph_uuid, _args(asked))

    def search_episodes(
        self,
        graph_uuid: str,
        *,
        query: str,
        page_size: int | None = None,
        cursor: str | None = None,
        bfs_origin_node_uuids: Sequence[str] | None = OMIT,
        center_node_uuid: str | None = OMIT,
        filter_low_quality_results: bool | None = OMIT,
        filters: Any = OMIT,
        mmr_lambda: float | None = OMIT,
        reranker: str | None = OMIT,
    ) -> Pager[wire.EpisodeWire]:
        asked = dict(locals())
        return self._search("episodes", graph_uuid, _args(asked))

    def search_observations(
        self,
        graph_uuid: str,
        *,
        query: str,
        page_size: int | None = None,
        cursor: str | None = None,
        bfs_origin_node_uuids: Sequence[str] | None = OMIT,
        center_node_uuid: str | None = OMIT,
        filter_low_quality_results: bool | None = OMIT,
        filters: Any = OMIT,
        mmr_lambda: float | None = OMIT,
        reranker: str | None = OMIT,
    ) -> Pager[wire.ObservationWire]:
        asked = dict(locals())
        return self._search("observations", graph_uuid, _args(asked))

    def search_thread_summaries(
        self,
        graph_uuid: str,
        *,
        query: str,
        page_size: int | None = None,
        cursor: str | None = None,
        bfs_origin_node_uuids: Sequence[str] | None = OMIT,
        center_node_uuid: str | None = OMIT,
        filter_low_quality_results: bool | None = OMIT,
        filters: Any = OMIT,
        mmr_lambda: float | None = OMIT,
        reranker: str | None = OMIT,
    ) -> Pager[wire.ThreadSummaryWire]:
        asked = dict(locals())
        return self._search("thread_summaries", graph_uuid, _args(asked))


def _args(local: dict[str, Any]) -> dict[str, Any]:
    """A search method's own arguments, less ``self`` and the graph."""
    return {k: v for k, v in local.items() if k not in ("self", "graph_uuid")}
