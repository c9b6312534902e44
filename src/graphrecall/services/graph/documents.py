"""Documents: episodes that share a ``document_id`` (the chunks of one document) and the
document summaries ingestion keeps for them (ingest/documents.py)."""

from __future__ import annotations

from graphrecall.domain import limits
from graphrecall.domain.errors import BadRequest
from graphrecall.domain.models import DocumentSummary, Episode, Page, PageRequest, Project
from graphrecall.domain.predicates import Predicate
from graphrecall.services.container import Services
from graphrecall.services.graph import graphs


def list_document_episodes(
    ctx: Services, project: Project, graph_uuid: str, document_id: str, page: PageRequest
) -> Page[Episode]:
    """A document's episodes in the order they were added (a document that no episode of
    the graph names: an empty page, as a list is)."""
    graph = graphs.resolve(ctx, project, graph_uuid)
    if not document_id.strip() or len(document_id) > limits.MAX_DOCUMENT_ID_CHARS:
        raise BadRequest(
            f"document_id must be 1-{limits.MAX_DOCUMENT_ID_CHARS} characters",
            param="document_id",
        )
    scope = {"graph_uuid": graph.uuid, "document_id": document_id}
    return ctx.store.list_page(Episode, scope, page)


def list_document_summaries(
    ctx: Services,
    project: Project,
    graph_uuid: str,
    page: PageRequest,
    where: Predicate | None = None,
) -> Page[DocumentSummary]:
    graph = graphs.resolve(ctx, project, graph_uuid)
    return ctx.store.list_page(DocumentSummary, {"graph_uuid": graph.uuid}, page, where=where)
