"""/batches: bulk ingestion (services/batches.py)."""

from __future__ import annotations

from typing import Any

from fastapi import Depends, Query

from graphrecall.api.zep_v4.common import CtxDep, Project, ProjectDep, Services, make_router, paging
from graphrecall.domain import models as m
from graphrecall.domain.inputs import BatchCreate, BatchItemsAdd
from graphrecall.domain.models import BatchStatus, PageRequest
from graphrecall.ingest.batches import Progress
from graphrecall.services.graph import batches
from graphrecall.wire.zep_v4 import wire
from graphrecall.wire.zep_v4.paging import Paging

router = make_router("batch")
_paging = paging(Paging(("uuid", "created_at")))
_item_paging = paging(
    Paging(("sequence_index",), default_order_by="sequence_index", default_order="asc")
)


class BatchProgressWire(wire.Wire):
    stage: str
    total_items: int
    succeeded_items: int
    failed_items: int
    processing_items: int


class BatchWire(wire.Wire):
    uuid: str
    status: str
    metadata: dict[str, Any] | None = None
    strict_ontology: bool
    progress: BatchProgressWire | None = None
    created_at: str


class BatchItemWire(wire.Wire):
    uuid: str
    type: str
    status: str
    sequence_index: int
    graph_uuid: str
    user_uuid: str | None = None
    thread_uuid: str | None = None
    episode_uuid: str
    source_uuid: str
    created_at: str


class RejectedBatchItemWire(wire.Wire):
    index: int
    reason: str


class BatchItemsResponse(wire.Wire):
    items: list[BatchItemWire]
    rejected_items: list[RejectedBatchItemWire]


class ProcessBatchResult(wire.Wire):
    batch: BatchWire
    task: wire.TaskWire


def _batch(batch: m.Batch, progress: Progress | None) -> BatchWire:
    return BatchWire(
        uuid=batch.uuid,
        status=batch.status,
        metadata=batch.metadata,
        strict_ontology=batch.strict_ontology,
        progress=None
        if progress is None
        else BatchProgressWire(
            stage="done" if progress.finished else "ingesting",
            total_items=progress.total,
            succeeded_items=progress.succeeded,
            failed_items=progress.failed,
            processing_items=progress.processing,
        ),
        created_at=batch.created_at,
    )


def _item(item: m.BatchItem, status: str) -> BatchItemWire:
    return BatchItemWire(
        uuid=item.uuid,
        type=item.type,
        status=status,
        sequence_index=item.sequence_index,
        graph_uuid=item.graph_uuid,
        user_uuid=item.user_uuid,
        thread_uuid=item.thread_uuid,
        episode_uuid=item.episode_uuid,
        source_uuid=item.episode_uuid,
        created_at=item.created_at,
    )


@router.post("/batches", response_model=BatchWire)
def create_batch(body: BatchCreate, ctx: Services = CtxDep, project: Project = ProjectDep) -> Any:
    return _batch(batches.create_batch(ctx, project, body), None)


@router.get("/batches", response_model=wire.PageWire[BatchWire])
def list_batches(
    status: BatchStatus | None = Query(None),
    page: PageRequest = Depends(_paging),
    ctx: Services = CtxDep,
    project: Project = ProjectDep,
) -> Any:
    result = batches.list_batches(ctx, project, page, status)
    # A page lists statuses as stored; GET /batches/{uuid} adds the progress.
    return wire.PageWire[BatchWire](
        items=[_batch(b, None) for b in result.items],
        next_cursor=result.next_cursor,
        total_size=result.total_size,
    )


@router.get("/batches/{batch_uuid}", response_model=BatchWire)
def get_batch(batch_uuid: str, ctx: Services = CtxDep, project: Project = ProjectDep) -> Any:
    batch = batches.get_batch(ctx, project, batch_uuid)
    return _batch(batch, batches.progress(ctx, batch))


@router.delete("/batches/{batch_uuid}")
def delete_batch(
    batch_uuid: str, ctx: Services = CtxDep, project: Project = ProjectDep
) -> dict[str, str]:
    """The SDK parses no body here; a small JSON one keeps every 2xx a JSON response."""
    batches.delete_batch(ctx, project, batch_uuid)
    return {"message": "batch deleted", "uuid": batch_uuid}


@router.post("/batches/{batch_uuid}/items", response_model=BatchItemsResponse)
def add_items(
    batch_uuid: str, body: BatchItemsAdd, ctx: Services = CtxDep, project: Project = ProjectDep
) -> Any:
    items, rejected = batches.add_items(ctx, project, batch_uuid, body)
    return BatchItemsResponse(
        items=[_item(i, "pending") for i in items],
        rejected_items=[RejectedBatchItemWire(**r) for r in rejected],
    )


@router.get("/batches/{batch_uuid}/items", response_model=wire.PageWire[BatchItemWire])
def list_items(
    batch_uuid: str,
    page: PageRequest = Depends(_item_paging),
    ctx: Services = CtxDep,
    project: Project = ProjectDep,
) -> Any:
    result, statuses = batches.list_items(ctx, project, batch_uuid, page)
    return wire.PageWire[BatchItemWire](
        items=[_item(i, statuses[i.uuid]) for i in result.items],
        next_cursor=result.next_cursor,
        total_size=result.total_size,
    )


@router.post("/batches/{batch_uuid}/process", response_model=ProcessBatchResult)
def process_batch(batch_uuid: str, ctx: Services = CtxDep, project: Project = ProjectDep) -> Any:
    batch, task = batches.process_batch(ctx, project, batch_uuid)
    return ProcessBatchResult(
        batch=_batch(batch, batches.progress(ctx, batch)), task=wire.task(task)
    )
