"""Batches in the background: turning a batch's items into episodes and tasks, and
knowing how far the batch has come.

Processing a batch (services/graph/batches.py) queues one background task, ``batch.enqueue``;
its handler, ``enqueue_items``, reads the items in order and, a page at a time in one
transaction each, inserts each item's episode (with the uuid the item was given) and
queues the episode tasks that ingest them: background priority, each a run of consecutive
items of one graph and one kind. The queue then takes them after live work, in order per
graph (so per thread). Redoing the handler after a crash skips the items that already
have a task.

An item's outcome is read, not stored: its episode processed means it succeeded; else its
task's status says queued, processing or failed. When the last task of a batch ends, its
worker settles the batch (``settle``): the batch and its tracking task get the final
status. ``settle`` is idempotent and is also called when a batch is read, so a crash
between a task's end and the settling leaves nothing stuck.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from graphrecall.domain import clock
from graphrecall.domain.ids import new_id
from graphrecall.domain.models import (
    BACKGROUND,
    Batch,
    BatchItem,
    Episode,
    PageRequest,
    Task,
)
from graphrecall.graph_model import graph_writes
from graphrecall.ingest import webhooks
from graphrecall.ingest.context import IngestContext
from graphrecall.store.base import Store

log = logging.getLogger(__name__)

ENQUEUE_TASK = "batch.enqueue"
TRACKING_TASK = "batch.process"
PAGE = 500  # items turned into episodes per transaction
RUN = 32  # items per episode task: a background run stays short, so live work waits little

ITEM_TASK_TYPE = {"graph_episode": "graph.add", "thread_message": "thread.add_messages"}
FINAL = frozenset({"succeeded", "partial", "failed"})


def _episode(item: BatchItem, stamp: str) -> Episode:
    data = item.data
    if item.type == "thread_message":
        return Episode(
            uuid=item.episode_uuid,
            graph_uuid=item.graph_uuid,
            content=data["content"],
            source="message",
            role=data.get("role"),
            role_name=data.get("name"),
            metadata=data.get("metadata"),
            reference_time=data.get("reference_time") or stamp,
            created_at=stamp,
            document_id=data.get("document_id"),
            thread_uuid=item.thread_uuid,
        )
    return Episode(
        uuid=item.episode_uuid,
        graph_uuid=item.graph_uuid,
        content=data["data"],
        source=data.get("data_type") or "text",
        source_description=data.get("source_description"),
        metadata=data.get("metadata"),
        reference_time=data.get("reference_time") or stamp,
        created_at=stamp,
        document_id=data.get("document_id"),
    )


def _runs(items: Sequence[BatchItem]) -> list[list[BatchItem]]:
    """Consecutive items of one graph and one kind, at most ``RUN`` each, in item order
    per graph (items of other graphs in between do not split a graph's run)."""
    open_runs: dict[tuple[str, str], list[BatchItem]] = {}
    runs: list[list[BatchItem]] = []
    for item in items:
        key = (item.graph_uuid, item.type)
        for other in [k for k in open_runs if k[0] == item.graph_uuid and k != key]:
            runs.append(open_runs.pop(other))  # the graph changed kind: keep its order
        current = open_runs.setdefault(key, [])
        current.append(item)
        if len(current) >= RUN:
            runs.append(open_runs.pop(key))
    runs.extend(open_runs.values())
    return sorted(runs, key=lambda run: run[0].sequence_index)


def enqueue_items(ctx: IngestContext, task: Task) -> dict[str, Any]:
    """The ``batch.enqueue`` handler: episodes and background tasks for the batch's items
    that have none yet."""
    store = ctx.store
    batch = store.get(Batch, task.payload["batch_uuid"], {"project_uuid": task.project_uuid})
    if batch is None:
        return {"items": 0}  # deleted meanwhile
    ignored = set(batch.ignore_roles or ())
    done = 0
    while True:
        items = store.find(
            BatchItem,
            {"batch_uuid": batch.uuid, "task_uuid": None},
            order_by="sequence_index",
            limit=PAGE,
        )
        if not items:
            break
        with store.transaction():
            # Each its own time of ingestion, in item order (a thread's order).
            episodes = [_episode(item, clock.now()) for item in items]
            graph_writes.insert_episodes(store, episodes)
            tasks: list[Task] = []
            for run in _runs(items):
                stamp = clock.now()
                roles = {i.episode_uuid: i.data.get("role") for i in run}
                tasks.append(
                    Task(
                        uuid=new_id(),
                        project_uuid=batch.project_uuid,
                        graph_uuid=run[0].graph_uuid,
                        type=ITEM_TASK_TYPE[run[0].type],
                        priority=BACKGROUND,
                        stage="queued",
                        payload={
                            "episodes": [i.episode_uuid for i in run],
                            "skip_extraction": [e for e, r in roles.items() if r in ignored],
                            "strict_ontology": batch.strict_ontology,
                            "batch_uuid": batch.uuid,
                        },
                        created_at=stamp,
                        updated_at=stamp,
                    )
                )
                for item in run:
                    store.update(
                        item.model_copy(update={"task_uuid": tasks[-1].uuid}), ["task_uuid"]
                    )
            store.insert(tasks)
        done += len(items)
    return {"items": done}


@dataclass
class Progress:
    total: int = 0
    queued: int = 0
    processing: int = 0
    succeeded: int = 0
    failed: int = 0

    @property
    def finished(self) -> bool:
        return self.queued == 0 and self.processing == 0

    @property
    def status(self) -> str:
        if not self.finished:
            return "processing" if self.processing or self.succeeded or self.failed else "queued"
        if self.failed == 0:
            return "succeeded"
        return "failed" if self.succeeded == 0 else "partial"


def item_statuses(store: Store, items: Sequence[BatchItem]) -> dict[str, str]:
    """Each item's status by its uuid: ``pending`` (a draft's), ``queued``,
    ``processing``, ``succeeded`` or ``failed``."""
    task_uuids = sorted({i.task_uuid for i in items if i.task_uuid})
    tasks = {t.uuid: t for t in (store.find(Task, {"uuid": task_uuids}) if task_uuids else [])}
    processed: set[str] = set()
    by_graph: dict[str, list[str]] = {}
    for item in items:
        task = tasks.get(item.task_uuid or "")
        if task is not None and task.status in ("processing", "failed", "partial"):
            by_graph.setdefault(item.graph_uuid, []).append(item.episode_uuid)
    for graph_uuid, uuids in by_graph.items():
        processed |= {
            e.uuid
            for e in store.find(Episode, {"graph_uuid": graph_uuid, "uuid": uuids})
            if e.processed
        }
    statuses: dict[str, str] = {}
    for item in items:
        task = tasks.get(item.task_uuid or "")
        if item.episode_uuid in processed:
            statuses[item.uuid] = "succeeded"
        elif task is None:
            statuses[item.uuid] = "queued" if item.task_uuid else "pending"
        elif task.status == "pending":
            statuses[item.uuid] = "queued"
        elif task.status == "processing":
            statuses[item.uuid] = "processing"
        elif task.status == "succeeded":
            statuses[item.uuid] = "succeeded"
        else:
            statuses[item.uuid] = "failed"
    return statuses


def progress(store: Store, batch: Batch) -> Progress:
    """How many of the batch's items are queued, processing, succeeded and failed: one
    read of its tasks, and of the episodes of the tasks that ended badly or are running."""
    counts = store.count_by(BatchItem, "task_uuid", {"batch_uuid": batch.uuid})
    result = Progress(total=sum(counts.values()), queued=counts.get(None, 0))
    task_uuids = sorted(u for u in counts if u is not None)
    uneven: list[str] = []
    for task in store.find(Task, {"uuid": task_uuids}) if task_uuids else []:
        n = counts[task.uuid]
        if task.status == "pending":
            result.queued += n
        elif task.status == "succeeded":
            result.succeeded += n
        else:
            uneven.append(task.uuid)  # processing or failed: item by item
    if uneven:
        page = PageRequest(page_size=PAGE, order="asc")
        scope = {"batch_uuid": batch.uuid, "task_uuid": uneven}
        for status in _each_status(store, scope, page):
            setattr(result, status, getattr(result, status) + 1)
    return result


def _each_status(store: Store, scope: dict[str, Any], page: PageRequest) -> list[str]:
    """The status of every item in ``scope``, a page at a time."""
    out: list[str] = []
    while True:
        got = store.list_page(BatchItem, scope, page)
        out.extend(item_statuses(store, got.items).values())
        if not got.next_cursor:
            return out
        page = page.model_copy(update={"cursor": got.next_cursor})


def settle(store: Store, project_uuid: str, batch_uuid: str) -> Batch | None:
    """Give a batch whose items have all ended its final status, on the batch and its
    tracking task (once; a settled batch is returned as it is). None if it is gone."""
    batch = store.get(Batch, batch_uuid, {"project_uuid": project_uuid})
    if batch is None or batch.status in FINAL or batch.status == "draft":
        return batch
    state = progress(store, batch)
    status = state.status
    if status == batch.status:
        return batch
    stamp = clock.now()
    with store.transaction():
        current = store.get(Batch, batch_uuid, {"project_uuid": project_uuid})
        if current is None or current.status in FINAL:
            return current
        batch = current.model_copy(update={"status": status, "updated_at": stamp})
        store.update(batch, ["status", "updated_at"])
        tracker = store.get(Task, batch.task_uuid or "", {"project_uuid": project_uuid})
        if tracker is not None:
            final = status in FINAL
            store.update(
                tracker.model_copy(
                    update={
                        "status": status if final else "processing",
                        "stage": "done" if final else "ingesting",
                        "result": {
                            "succeeded_items": state.succeeded,
                            "failed_items": state.failed,
                            "total_items": state.total,
                        }
                        if final
                        else None,
                        "updated_at": stamp,
                        "completed_at": stamp if final else None,
                    }
                ),
                ["status", "stage", "result", "updated_at", "completed_at"],
            )
        if status in FINAL:
            counts = {"succeeded_items": state.succeeded, "failed_items": state.failed}
            webhooks.batch_completed(
                store,
                batch,
                {**counts, "total_items": state.total},
                lambda: [
                    i.episode_uuid for i in store.iter_all(BatchItem, {"batch_uuid": batch.uuid})
                ],
            )
    if status in FINAL:
        log.info("batch %s %s (%d items)", batch_uuid, status, state.total)
    return batch
