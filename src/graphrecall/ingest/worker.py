"""The in-process ingestion worker.

Tasks live in the store, so nothing is lost when the process stops: on start, tasks left
``processing`` go back to ``pending`` and are redone (each task's work is idempotent and
committed in one transaction with the task's completion). One worker thread takes tasks
oldest first, so the episodes of a graph are processed in the order they were added.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Sequence
from typing import Any

from graphrecall.domain import clock
from graphrecall.domain.models import Edge, Node, Record, Task
from graphrecall.ingest.context import IngestContext
from graphrecall.ingest.embedding import embed_records
from graphrecall.ingest.memories import process_memories
from graphrecall.ingest.pipeline import process_episodes
from graphrecall.store.base import Store

log = logging.getLogger(__name__)

Handler = Callable[[IngestContext, Task], dict[str, Any] | None]


def _fetch(store: Store, kind: type[Record], graph_uuid: str, uuids: Sequence[str]) -> list[Any]:
    return store.find(kind, {"graph_uuid": graph_uuid, "uuid": list(uuids)}) if uuids else []


def process_graph_items(ctx: IngestContext, task: Task) -> dict[str, Any]:
    assert task.graph_uuid is not None
    nodes: list[Node] = _fetch(ctx.store, Node, task.graph_uuid, task.payload.get("nodes", []))
    edges: list[Edge] = _fetch(ctx.store, Edge, task.graph_uuid, task.payload.get("edges", []))
    embed_records(ctx.store, ctx.embedder, nodes)
    embed_records(ctx.store, ctx.embedder, edges)
    return {"edges": [{"uuid": e.uuid} for e in edges]} if edges else {}


HANDLERS: dict[str, Handler] = {
    "graph.add": process_episodes,
    "thread.add_messages": process_episodes,
    "graph.add_nodes": process_graph_items,
    "graph.add_edges": process_graph_items,
    "memory.embed": process_memories,
}


def run_task(ctx: IngestContext, task: Task) -> Task:
    """Do one claimed task. The handler commits its own work (per episode); the task is
    marked succeeded afterwards, or failed with the error; a failed task's episodes stay
    unprocessed and the task can be retried (``graphrecall tasks retry``)."""
    store = ctx.store
    handler = HANDLERS.get(task.type)
    try:
        if handler is None:
            raise ValueError(f"no handler for task type {task.type!r}")
        result = handler(ctx, task)
        stamp = clock.now()
        done = task.model_copy(
            update={
                "status": "succeeded",
                "stage": "done",
                "result": result or None,
                "error": None,
                "updated_at": stamp,
                "completed_at": stamp,
            }
        )
        store.update(done)
        return done
    except Exception as exc:
        log.exception("task %s (%s) failed", task.uuid, task.type)
        stamp = clock.now()
        failed = task.model_copy(
            update={
                "status": "failed",
                "stage": "failed",
                "error": {"code": "task_failed", "message": str(exc)[:2000]},
                "updated_at": stamp,
                "completed_at": stamp,
            }
        )
        store.update(failed)
        return failed


class Worker:
    """Runs tasks in a background thread; ``wake()`` is called after each enqueue."""

    def __init__(self, ctx: IngestContext, poll_seconds: float = 2.0) -> None:
        self.ctx = ctx
        self.store = ctx.store
        self.poll_seconds = poll_seconds
        self._wake = threading.Event()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def start(self) -> None:
        requeued = self.store.requeue_unfinished()
        if requeued:
            log.info("resuming %d unfinished task(s)", requeued)
        self._thread = threading.Thread(target=self._loop, name="graphrecall-worker", daemon=True)
        self._thread.start()

    def wake(self) -> None:
        self._wake.set()

    def stop(self, timeout: float = 10.0) -> None:
        self._stop.set()
        self._wake.set()
        if self._thread is not None:
            self._thread.join(timeout)

    def drain(self) -> int:
        """Run every pending task in the calling thread (tests, CLI import)."""
        count = 0
        while (task := self.store.claim_task()) is not None:
            run_task(self.ctx, task)
            count += 1
        return count

    def _loop(self) -> None:
        while not self._stop.is_set():
            try:
                task = self.store.claim_task()
            except Exception:
                log.exception("could not claim a task")
                task = None
            if task is None:
                self._wake.wait(self.poll_seconds)
                self._wake.clear()
                continue
            run_task(self.ctx, task)
