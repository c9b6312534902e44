"""``gr.graph.search_*``: one method per search scope, as the SDK has them, each a
:class:`~graphrecall.library.calls.Pager` over the search service's pages, whose items
are converted by the scope's wire converter (``wire/zep_v4/search.py``)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, TypedDict, Unpack

from graphrecall.library.calls import Pager, body, checked_size, pages
from graphrecall.library.session import Part
from graphrecall.services.graph import search as search_service
from graphrecall.services.graph.search import SEARCH_PAGE_MAX
from graphrecall.wire.zep_v4 import bodies, wire
from graphrecall.wire.zep_v4 import search as scopes


class SearchArgs(TypedDict, total=False):
    """The SDK's search arguments besides ``query`` (one left out keeps its default)."""

    page_size: int | None
    cursor: str | None
    bfs_origin_node_uuids: Sequence[str] | None
    center_node_uuid: str | None
    filter_low_quality_results: bool | None
    filters: Any
    mmr_lambda: float | None
    reranker: str | None


class GraphSearch(Part):
    def _search(self, scope: str, graph_uuid: str, query: str, args: SearchArgs) -> Pager[Any]:
        asked: dict[str, Any] = dict(args)
        page_size, cursor = asked.pop("page_size", None), asked.pop("cursor", None)
        size = checked_size(page_size, SEARCH_PAGE_MAX, SEARCH_PAGE_MAX)
        params = scopes.params(body(bodies.SearchBody, query=query, **asked))
        convert = scopes.SCOPES[scope][2]

        def read(at: str | None) -> tuple[list[Any], str | None, int | None]:
            graph, found, next_cursor = search_service.search(
                self._ctx, self._project, graph_uuid, scope, params, page_size=size, cursor=at
            )
            return convert(self._ctx, graph, found), next_cursor, None

        return pages(read, cursor)

    def search_edges(
        self, graph_uuid: str, *, query: str, **args: Unpack[SearchArgs]
    ) -> Pager[wire.EdgeWire]:
        return self._search("edges", graph_uuid, query, args)

    def search_nodes(
        self, graph_uuid: str, *, query: str, **args: Unpack[SearchArgs]
    ) -> Pager[wire.NodeWire]:
        return self._search("nodes", graph_uuid, query, args)

    def search_episodes(
        self, graph_uuid: str, *, query: str, **args: Unpack[SearchArgs]
    ) -> Pager[wire.EpisodeWire]:
        return self._search("episodes", graph_uuid, query, args)

    def search_observations(
        self, graph_uuid: str, *, query: str, **args: Unpack[SearchArgs]
    ) -> Pager[wire.ObservationWire]:
        return self._search("observations", graph_uuid, query, args)

    def search_thread_summaries(
        self, graph_uuid: str, *, query: str, **args: Unpack[SearchArgs]
    ) -> Pager[wire.ThreadSummaryWire]:
        return self._search("thread_summaries", graph_uuid, query, args)
