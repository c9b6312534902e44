"""v3 ``/batches``: v4's batches under v3's names. A v3 item names its user, thread or
graph by the developer's id; they are resolved before anything is written (an unknown
one is a 404 naming ``items[i].user_id``, not a silently dropped item). Lists page by an
integer ``cursor``: the number of rows already read."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar, cast, get_args

from fastapi import Query
from pydantic import ValidationError

from graphrecall.api.zep_v3 import ids
from graphrecall.api.zep_v3 import wire as v3wire
from graphrecall.api.zep_v3.common import PAGE_SIZE_MAX, int_param, str_param, v3_fields
from graphrecall.api.zep_v3.payloads import BatchItemsV3
from graphrecall.api.zep_v4.common import CtxDep, Project, ProjectDep, Services, make_router
from graphrecall.domain import models as m
from graphrecall.domain.errors import BadRequest
from graphrecall.domain.inputs import BatchCreate, BatchItemsAdd
from graphrecall.domain.models import BatchStatus, Graph, Page, PageRequest, Thread, User
from graphrecall.ingest.batches import Progress
from graphrecall.services.graph import batches
from graphrecall.wire.errors import param_path

router = make_router("zep v3: batches")
BATCH_ID = {r"^batch_uuid$": "batch_id"}  # v4's name of v3's batch_id
T = TypeVar("T")


def _summary(batch: m.Batch, progress: Progress | None) -> v3wire.BatchV3:
    return v3wire.BatchV3(
        batch_id=batch.uuid,
        status=batch.status,
        metadata=batch.metadata,
        ignore_roles=list(batch.ignore_roles) if batch.ignore_roles is not None else None,
        strict_ontology=batch.strict_ontology,
        item_count=batch.item_count,
        progress=None
        if progress is None
        else v3wire.BatchProgressV3(
            total_items=progress.total,
            queued_items=progress.queued,
            processing_items=progress.processing,
            succeeded_items=progress.succeeded,
            failed_items=progress.failed,
            percent_complete=100.0
            * (progress.succeeded + progress.failed)
            / max(progress.total, 1),
        ),
        created_at=batch.created_at,
        updated_at=batch.updated_at,
    )


class _Names:
    """The developer ids of the graphs, users and threads items name, read once each."""

    def __init__(self, ctx: Services, project: Project) -> None:
        self.ctx, self.scope = ctx, {"project_uuid": project.uuid}
        self.seen: dict[tuple[type[Any], str], str | None] = {}

    def of(self, kind: type[Graph] | type[User] | type[Thread], uuid: str | None) -> str | None:
        if uuid is None:
            return None
        if (kind, uuid) not in self.seen:
            found = self.ctx.store.get(kind, uuid, self.scope)
            name = None
            if isinstance(found, Graph):
                name = found.graph_id
            elif isinstance(found, User):
                name = found.user_id
            elif isinstance(found, Thread):
                name = found.thread_id
            self.seen[(kind, uuid)] = name
        return self.seen[(kind, uuid)]


def _item(item: m.BatchItem, status: str, names: _Names) -> v3wire.BatchItemV3:
    return v3wire.BatchItemV3(
        item_id=item.uuid,
        kind=item.type,
        status=status,
        sequence_index=item.sequence_index,
        graph_uuid=item.graph_uuid,
        graph_id=names.of(Graph, item.graph_uuid),
        user_uuid=item.user_uuid,
        user_id=names.of(User, item.user_uuid),
        thread_id=names.of(Thread, item.thread_uuid),
        episode_uuid=item.episode_uuid,
        source_uuid=item.episode_uuid,
        document_id=item.data.get("document_id"),
        created_at=item.created_at,
    )


def _offset_page(
    fetch: Callable[[PageRequest], Page[T]], cursor: int, limit: int
) -> tuple[list[T], int | None]:
    """``limit`` rows after the first ``cursor`` (v3's integer cursor), read along the v4
    keyset pages in creation order; and the next cursor (None after the last row)."""
    request = PageRequest(page_size=PAGE_SIZE_MAX, order_by="created_at", order="asc")
    rows: list[T] = []
    seen = 0
    while True:
        page = fetch(request)
        for row in page.items:
            if seen >= cursor:
                rows.append(row)
            seen += 1
        if len(rows) > limit or page.next_cursor is None:
            return rows[:limit], (cursor + limit if len(rows) > limit else None)
        request = request.model_copy(update={"cursor": page.next_cursor})


@router.post("/batches", response_model=v3wire.BatchV3)
def create_batch(body: BatchCreate, ctx: Services = CtxDep, project: Project = ProjectDep) -> Any:
    return _summary(batches.create_batch(ctx, project, body), None)


@router.get("/batches", response_model=v3wire.BatchListV3)
def list_batches(
    limit: str | None = Query(None),
    cursor: str | None = Query(None),
    status: str | None = Query(None),
    ctx: Services = CtxDep,
    project: Project = ProjectDep,
) -> Any:
    wanted = str_param(status)
    if wanted is not None and wanted not in get_args(BatchStatus):
        raise BadRequest(
            f"status must be one of {', '.join(get_args(BatchStatus))}", param="status"
        )
    found, next_cursor = _offset_page(
        lambda p: batches.list_batches(ctx, project, p, cast(BatchStatus | None, wanted)),
        int_param(cursor, "cursor", ge=0) or 0,
        int_param(limit, "limit", ge=1, le=PAGE_SIZE_MAX) or PAGE_SIZE_MAX,
    )
    return v3wire.BatchListV3(batches=[_summary(b, None) for b in found], next_cursor=next_cursor)


@router.get("/batches/{batch_id}", response_model=v3wire.BatchV3)
def get_batch(batch_id: str, ctx: Services = CtxDep, project: Project = ProjectDep) -> Any:
    with v3_fields(BATCH_ID):
        batch = batches.get_batch(ctx, project, batch_id)
    return _summary(batch, batches.progress(ctx, batch))


@router.delete("/batches/{batch_id}", response_model=v3wire.SuccessV3)
def delete_batch(batch_id: str, ctx: Services = CtxDep, project: Project = ProjectDep) -> Any:
    with v3_fields(BATCH_ID):
        batches.delete_batch(ctx, project, batch_id)
    return v3wire.SuccessV3(message="deleted")


def _v4_items(ctx: Services, project: Project, body: BatchItemsV3) -> BatchItemsAdd:
    """The v4 body: each item's developer ids resolved to uuids (all before any write),
    its ``created_at`` its ``reference_time``; validated by v4's rules."""
    items = []
    for i, item in enumerate(body.items):
        fields = item.model_dump(
            exclude={"user_id", "graph_id", "thread_id", "created_at"}, exclude_none=True
        )
        fields["reference_time"] = item.created_at
        if item.thread_id:
            found = ids.thread(ctx, project, item.thread_id, param=f"items[{i}].thread_id")
            fields["thread_uuid"] = found.uuid
        if item.user_id:
            fields["user_uuid"] = ids.user(
                ctx, project, item.user_id, param=f"items[{i}].user_id"
            ).uuid
        if item.graph_id:
            fields["graph_uuid"] = ids.graph(
                ctx, project, item.graph_id, param=f"items[{i}].graph_id"
            ).uuid
        items.append(fields)
    try:
        return BatchItemsAdd.model_validate({"items": items})
    except ValidationError as exc:
        error = exc.errors()[0]
        param = param_path(tuple(error["loc"]))
        raise BadRequest(f"{param}: {error['msg']}", param=param) from None


@router.post("/batches/{batch_id}/items", response_model=list[v3wire.BatchItemV3])
def add_items(
    batch_id: str, body: BatchItemsV3, ctx: Services = CtxDep, project: Project = ProjectDep
) -> Any:
    request = _v4_items(ctx, project, body)
    with v3_fields(BATCH_ID):
        added, rejected = batches.add_items(ctx, project, batch_id, request)
    assert not rejected  # every target was resolved above
    names = _Names(ctx, project)
    return [_item(i, "pending", names) for i in added]


@router.get("/batches/{batch_id}/items", response_model=v3wire.BatchItemListV3)
def list_items(
    batch_id: str,
    limit: str | None = Query(None),
    cursor: str | None = Query(None),
    status: str | None = Query(None),
    ctx: Services = CtxDep,
    project: Project = ProjectDep,
) -> Any:
    """The batch's items in order, with each one's status."""
    if str_param(status) is not None:
        # v4 lists a batch's items unfiltered; filtering a page after reading it would
        # page wrongly, so the filter is refused rather than half-applied.
        raise BadRequest("filtering a batch's items by status is not built", param="status")
    statuses: dict[str, str] = {}

    def fetch(page: PageRequest) -> Page[m.BatchItem]:
        got, found = batches.list_items(ctx, project, batch_id, page)
        statuses.update(found)
        return got

    with v3_fields(BATCH_ID):
        found, next_cursor = _offset_page(
            fetch,
            int_param(cursor, "cursor", ge=0) or 0,
            int_param(limit, "limit", ge=1, le=PAGE_SIZE_MAX) or PAGE_SIZE_MAX,
        )
    names = _Names(ctx, project)
    return v3wire.BatchItemListV3(
        items=[_item(i, statuses[i.uuid], names) for i in found], next_cursor=next_cursor
    )


@router.post("/batches/{batch_id}/process", response_model=v3wire.BatchV3)
def process_batch(batch_id: str, ctx: Services = CtxDep, project: Project = ProjectDep) -> Any:
    with v3_fields(BATCH_ID):
        batch, _ = batches.process_batch(ctx, project, batch_id)
    return _summary(batch, batches.progress(ctx, batch))
