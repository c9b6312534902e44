"""Documents: a document's episodes and document summaries (services/documents.py)."""

from __future__ import annotations

from typing import Any

from fastapi import Body as BodyParam
from fastapi import Depends

from graphrecall.api.zep_v4.common import (
    CtxDep,
    Project,
    ProjectDep,
    Services,
    make_router,
    paging,
    wire_page,
)
from graphrecall.domain.models import DocumentSummary, PageRequest
from graphrecall.services.graph import documents, graphs
from graphrecall.wire.zep_v4 import wire
from graphrecall.wire.zep_v4.bodies import FilteredListBody
from graphrecall.wire.zep_v4.paging import Paging

router = make_router("documents")
# A document's chunks in the order they were added (the SDK sends no ordering).
_episode_paging = paging(
    Paging(("created_at", "uuid"), default_order_by="created_at", default_order="asc")
)
_summary_paging = paging(Paging(("uuid", "created_at")))


class DocumentSummaryWire(wire.Wire):
    uuid: str
    document_id: str
    summary: str
    created_at: str
    last_summarized_at: str | None = None
    last_summarized_episode_valid_at: str | None = None


def _summary(s: DocumentSummary) -> DocumentSummaryWire:
    return DocumentSummaryWire(**s.model_dump(exclude={"graph_uuid"}))


# The SDK puts a document id into the path as it is: "reports/2024.pdf" arrives as two
# segments, so the id takes the rest of the path up to "/episodes".
@router.get(
    "/graphs/{graph_uuid}/documents/{document_id:path}/episodes",
    response_model=wire.PageWire[wire.EpisodeWire],
)
def list_document_episodes(
    graph_uuid: str,
    document_id: str,
    page: PageRequest = Depends(_episode_paging),
    ctx: Services = CtxDep,
    project: Project = ProjectDep,
) -> Any:
    graph = graphs.resolve(ctx, project, graph_uuid)
    result = documents.list_document_episodes(ctx, project, graph.uuid, document_id, page)
    return wire_page(result, [wire.episode(e, graph) for e in result.items])


@router.post(
    "/graphs/{graph_uuid}/document-summaries/list",
    response_model=wire.PageWire[DocumentSummaryWire],
)
def list_document_summaries(
    graph_uuid: str,
    body: FilteredListBody | None = BodyParam(default=None),
    page: PageRequest = Depends(_summary_paging),
    ctx: Services = CtxDep,
    project: Project = ProjectDep,
) -> Any:
    where = (body or FilteredListBody()).predicate("list:document_summaries")
    result = documents.list_document_summaries(ctx, project, graph_uuid, page, where)
    return wire_page(result, [_summary(s) for s in result.items])
