"""Batches: bulk ingestion, as Zep's Batch API. A batch is created as a draft, items
(episodes of a graph or a user's graph, messages of a thread) are appended to it in
order, and ``process`` hands it to the background: its items become episodes and
background tasks (ingest/batches.py), done after live work, in order per thread."""

from __future__ import annotations

from typing import Any

from graphrecall.domain import clock, limits, validation
from graphrecall.domain.errors import BadRequest, NotFound
from graphrecall.domain.ids import check_uuid, new_id
from graphrecall.domain.inputs import BatchCreate, BatchItemInput, BatchItemsAdd
from graphrecall.domain.models import (
    BACKGROUND,
    TRACKING,
    Batch,
    BatchItem,
    Graph,
    Page,
    PageRequest,
    Project,
    Task,
    Thread,
    User,
)
from graphrecall.ingest import batches as background
from graphrecall.ingest.batches import Progress
from graphrecall.services import erasure
from graphrecall.services.container import Services

Target = tuple[Graph, User | None, Thread | None]


def create_batch(ctx: Services, project: Project, body: BatchCreate) -> Batch:
    stamp = clock.now()
    batch = Batch(
        uuid=new_id(),
        project_uuid=project.uuid,
        metadata=body.metadata,
        ignore_roles=sorted(set(body.ignore_roles)) if body.ignore_roles else None,
        strict_ontology=bool(body.strict_ontology),
        created_at=stamp,
        updated_at=stamp,
    )
    ctx.store.insert([batch])
    return batch


def get_batch(ctx: Services, project: Project, batch_uuid: str) -> Batch:
    """The batch; one being processed is settled first if its items have all ended."""
    batch_uuid = check_uuid(batch_uuid, param="batch_uuid")
    batch = ctx.store.get(Batch, batch_uuid, {"project_uuid": project.uuid})
    if batch is None:
        raise NotFound("batch", batch_uuid, param="batch_uuid")
    if batch.status in ("queued", "processing"):
        batch = background.settle(ctx.store, project.uuid, batch.uuid) or batch
    return batch


def progress(ctx: Services, batch: Batch) -> Progress | None:
    """How far a batch that was handed to processing has come (None for a draft)."""
    return None if batch.status == "draft" else background.progress(ctx.store, batch)


def list_batches(
    ctx: Services, project: Project, page: PageRequest, status: str | None = None
) -> Page[Batch]:
    scope: dict[str, Any] = {"project_uuid": project.uuid}
    if status:
        scope["status"] = status
    return ctx.store.list_page(Batch, scope, page)


def _target(
    ctx: Services, project: Project, i: int, item: BatchItemInput, seen: dict[str, Any]
) -> Target | None:
    """Where item ``i`` goes; None when its graph, user or thread does not exist (the item
    is rejected, not the request)."""
    field = "thread_uuid" if item.type == "thread_message" else None
    if field is None:
        field = "graph_uuid" if item.graph_uuid else "user_uuid"
    value = check_uuid(getattr(item, field), param=f"items[{i}].{field}")
    key = f"{field}:{value}"
    if key not in seen:
        seen[key] = _resolve(ctx, project, field, value)
    found: Target | None = seen[key]
    return found


def _resolve(ctx: Services, project: Project, field: str, value: str) -> Target | None:
    scope = {"project_uuid": project.uuid}
    if field == "thread_uuid":
        thread = ctx.store.get(Thread, value, scope)
        if thread is None:
            return None
        graph = ctx.store.get(Graph, thread.graph_uuid, scope)
        user = ctx.store.get(User, thread.user_uuid, scope)
        return (graph, user, thread) if graph is not None else None
    if field == "user_uuid":
        user = ctx.store.get(User, value, scope)
        graph = ctx.store.get(Graph, user.graph_uuid, scope) if user else None
        return (graph, user, None) if graph is not None else None
    graph = ctx.store.get(Graph, value, scope)
    if graph is None:  # a user's uuid works wherever a graph's does
        user = ctx.store.get(User, value, scope)
        graph = ctx.store.get(Graph, user.graph_uuid, scope) if user else None
    if graph is None:
        return None
    user = ctx.store.get(User, graph.user_uuid, scope) if graph.user_uuid else None
    return graph, user, None


def _check_item(i: int, item: BatchItemInput) -> dict[str, Any]:
    """The item's own fields, checked for its kind; returns what is kept of it."""

    def bad(field: str, message: str) -> BadRequest:
        return BadRequest(f"items[{i}].{field}: {message}", param=f"items[{i}].{field}")

    if item.type == "graph_episode":
        if item.data is None:
            raise bad("data", "a graph_episode item needs data")
        if bool(item.graph_uuid) == bool(item.user_uuid):
            raise bad("graph_uuid", "give exactly one of graph_uuid and user_uuid")
        for field in ("thread_uuid", "content", "role", "name"):
            if getattr(item, field) is not None:
                raise bad(field, "is for thread_message items")
        if item.data_type == "json":
            try:
                validation.loads(item.data, param=f"items[{i}].data")
            except BadRequest as exc:
                raise bad("data", f"data_type is json but {exc.message}") from None
        kept: dict[str, Any] = {
            "data": item.data,
            "data_type": item.data_type or "text",
            "source_description": item.source_description,
        }
    else:
        if not item.thread_uuid:
            raise bad("thread_uuid", "a thread_message item needs thread_uuid")
        if item.content is None:
            raise bad("content", "a thread_message item needs content")
        if item.role is None:
            raise bad("role", "a thread_message item needs role")
        for field in ("graph_uuid", "user_uuid", "data", "data_type", "source_description"):
            if getattr(item, field) is not None:
                raise bad(field, "is for graph_episode items (a message goes to its thread)")
        kept = {"content": item.content, "role": item.role, "name": item.name}
    param = f"items[{i}].reference_time"
    kept |= {
        "reference_time": clock.normalize(item.reference_time, param=param),
        "metadata": item.metadata,
        "document_id": item.document_id,
    }
    return {k: v for k, v in kept.items() if v is not None}


def add_items(
    ctx: Services, project: Project, batch_uuid: str, body: BatchItemsAdd
) -> tuple[list[BatchItem], list[dict[str, Any]]]:
    """Append items, in request order; an item whose graph, user or thread is not found
    is rejected (``{index, reason}``) and the others are added."""
    batch = get_batch(ctx, project, batch_uuid)
    kept = [_check_item(i, item) for i, item in enumerate(body.items)]
    seen: dict[str, Any] = {}
    targets = [_target(ctx, project, i, item, seen) for i, item in enumerate(body.items)]
    rejected = [
        {"index": i, "reason": f"{item.type}: its graph, user or thread was not found"}
        for i, (item, target) in enumerate(zip(body.items, targets, strict=True))
        if target is None
    ]
    with ctx.store.transaction():
        # Read again inside the write transaction: concurrent appends get distinct places.
        current = ctx.store.get(Batch, batch.uuid, {"project_uuid": project.uuid})
        if current is None:
            raise NotFound("batch", batch.uuid, param="batch_uuid")
        if current.status != "draft":
            raise BadRequest(
                f"batch {batch.uuid} is {current.status}: items are added to a draft batch",
                param="batch_uuid",
            )
        accepted = len(targets) - len(rejected)
        if current.item_count + accepted > limits.MAX_BATCH_ITEMS:
            raise BadRequest(f"a batch holds at most {limits.MAX_BATCH_ITEMS} items", param="items")
        items: list[BatchItem] = []
        for item, data, target in zip(body.items, kept, targets, strict=True):
            if target is None:
                continue
            graph, user, thread = target
            items.append(
                BatchItem(
                    uuid=new_id(),
                    project_uuid=project.uuid,
                    batch_uuid=batch.uuid,
                    sequence_index=current.item_count + len(items),
                    type=item.type,
                    graph_uuid=graph.uuid,
                    user_uuid=user.uuid if user else None,
                    thread_uuid=thread.uuid if thread else None,
                    episode_uuid=new_id(),
                    data=data,
                    created_at=clock.now(),
                )
            )
        ctx.store.insert(items)
        ctx.store.update(
            current.model_copy(
                update={"item_count": current.item_count + len(items), "updated_at": clock.now()}
            ),
            ["item_count", "updated_at"],
        )
    return items, rejected


def process_batch(ctx: Services, project: Project, batch_uuid: str) -> tuple[Batch, Task]:
    """Hand a draft batch to the background; returns it with its tracking task."""
    with ctx.store.transaction():
        batch = get_batch(ctx, project, batch_uuid)
        if batch.status != "draft":
            raise BadRequest(f"batch {batch.uuid} is already {batch.status}", param="batch_uuid")
        if batch.item_count == 0:
            raise BadRequest(f"batch {batch.uuid} has no items to process", param="batch_uuid")
        stamp = clock.now()
        tracker = Task(
            uuid=new_id(),
            project_uuid=project.uuid,
            type=background.TRACKING_TASK,
            priority=TRACKING,
            stage="queued",
            payload={"batch_uuid": batch.uuid},
            created_at=stamp,
            updated_at=stamp,
        )
        fan_out = tracker.model_copy(
            update={"uuid": new_id(), "type": background.ENQUEUE_TASK, "priority": BACKGROUND}
        )
        ctx.store.insert([tracker, fan_out])
        batch = batch.model_copy(
            update={"status": "queued", "task_uuid": tracker.uuid, "updated_at": stamp}
        )
        ctx.store.update(batch, ["status", "task_uuid", "updated_at"])
    ctx.wake_worker()
    return batch, tracker


def list_items(
    ctx: Services, project: Project, batch_uuid: str, page: PageRequest
) -> tuple[Page[BatchItem], dict[str, str]]:
    """A page of the batch's items in order, with each one's status."""
    batch = get_batch(ctx, project, batch_uuid)
    got = ctx.store.list_page(
        BatchItem, {"batch_uuid": batch.uuid, "project_uuid": project.uuid}, page
    )
    return got, background.item_statuses(ctx.store, got.items)


def delete_batch(ctx: Services, project: Project, batch_uuid: str) -> None:
    """Delete a draft or finished batch and its items (the episodes a processed batch
    made stay in their graphs). A batch still being processed cannot be deleted."""
    batch = get_batch(ctx, project, batch_uuid)
    if batch.status in ("queued", "processing"):
        raise BadRequest(
            f"batch {batch.uuid} is {batch.status}; delete it once it has finished",
            param="batch_uuid",
        )
    with ctx.store.transaction():
        ctx.store.delete(BatchItem, {"batch_uuid": batch.uuid, "project_uuid": project.uuid})
        ctx.store.delete(Batch, {"uuid": batch.uuid, "project_uuid": project.uuid})
        erasure.mark(ctx, (BatchItem, Batch))  # its items' text
    erasure.erase(ctx, "batch", batch.uuid)
