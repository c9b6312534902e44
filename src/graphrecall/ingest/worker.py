"""The in-process ingestion worker.

Tasks live in the store, so nothing is lost when the process stops: on start, tasks left
``processing`` go back to ``pending`` and are redone (each episode commits alone with its
``processed`` flag, and processed episodes are skipped, so redoing a task is safe).

Worker threads (``GRAPHRECALL_WORKER_THREADS``, default: 2, or 1 on a one-core machine)
each claim a *run*: the oldest pending task of a graph that has no task in progress, plus
the graph's next pending episode tasks (up to 16 tasks, 256 episodes). So the tasks of one
graph are done one run at a time, in the order they were added, and different graphs are
done in parallel. A run shares its slow steps (extraction, embedding) across its tasks;
see ``pipeline.process_run``.
"""

from __future__ import annotations

import logging
import os
import threading
from collections.abc import Callable, Sequence
from typing import Any

from graphrecall.domain import clock
from graphrecall.domain.models import Edge, Node, Record, Task
from graphrecall.ingest.context import IngestContext
from graphrecall.ingest.embedding import embed_records
from graphrecall.ingest.memories import process_memories
from graphrecall.ingest.pipeline import process_episodes, process_run
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


EPISODE_TASKS = frozenset({"graph.add", "thread.add_messages"})
RUN_TASKS = 16
RUN_EPISODES = 256
_SCAN = 1000  # pending tasks looked at per claim


def claim_run(
    store: Store, *, max_tasks: int = RUN_TASKS, max_episodes: int = RUN_EPISODES
) -> list[Task]:
    """Atomically take the oldest pending task whose graph has no task in progress, and
    the same graph's next pending episode tasks after it (in order, up to the limits);
    all are marked ``processing``. Empty when nothing can be taken now."""
    with store.transaction():
        busy = {t.graph_uuid for t in store.find(Task, {"status": "processing"}, limit=_SCAN)}
        pending = sorted(
            store.find(Task, {"status": "pending"}, order_by="created_at", limit=_SCAN),
            key=lambda t: (t.created_at, t.uuid),
        )
        first = next((t for t in pending if t.graph_uuid not in busy), None)
        if first is None:
            return []
        run = [first]
        if first.type in EPISODE_TASKS and first.graph_uuid is not None:
            episodes = len(first.payload.get("episodes", []))
            for task in pending[pending.index(first) + 1 :]:
                if task.graph_uuid != first.graph_uuid:
                    continue
                size = len(task.payload.get("episodes", []))
                if (
                    task.type not in EPISODE_TASKS
                    or len(run) >= max_tasks
                    or episodes + size > max_episodes
                ):
                    break  # the graph's order: nothing after a task that is not taken
                run.append(task)
                episodes += size
        stamp = clock.now()
        claimed = [
            t.model_copy(update={"status": "processing", "started_at": stamp, "updated_at": stamp})
            for t in run
        ]
        for task in claimed:
            store.update(task)
        return claimed


def run_tasks(ctx: IngestContext, tasks: Sequence[Task]) -> list[Task]:
    """Do a claimed run. Episode tasks of one graph go through ``process_run`` together;
    if that fails, the tasks are redone one by one (already-processed episodes are
    skipped), so a failure is recorded on the task it belongs to."""
    if len(tasks) == 1 or not all(t.type in EPISODE_TASKS for t in tasks):
        return [run_task(ctx, t) for t in tasks]
    try:
        results = process_run(ctx, list(tasks))
    except Exception:
        log.warning("a run of %d tasks failed; redoing them one by one", len(tasks), exc_info=True)
        return [run_task(ctx, t) for t in tasks]
    return [_succeeded(ctx.store, t, r) for t, r in zip(tasks, results, strict=True)]


def _succeeded(store: Store, task: Task, result: dict[str, Any] | None) -> Task:
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


def run_task(ctx: IngestContext, task: Task) -> Task:
    """Do one claimed task. The handler commits its own work (per episode); the task is
    marked succeeded afterwards, or failed with the error; a failed task's episodes stay
    unprocessed and the task can be retried (``graphrecall tasks retry``)."""
    store = ctx.store
    handler = HANDLERS.get(task.type)
    try:
        if handler is None:
            raise ValueError(f"no handler for task type {task.type!r}")
        return _succeeded(store, task, handler(ctx, task))
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


def default_threads() -> int:
    configured = os.environ.get("GRAPHRECALL_WORKER_THREADS")
    if configured:
        return max(1, int(configured))
    return min(2, os.cpu_count() or 1)


class Worker:
    """Runs tasks in background threads; ``wake()`` is called after each enqueue."""

    def __init__(
        self, ctx: IngestContext, poll_seconds: float = 2.0, threads: int | None = None
    ) -> None:
        self.ctx = ctx
        self.store = ctx.store
        self.poll_seconds = poll_seconds
        self.threads = threads or default_threads()
        self._wake = threading.Condition()
        self._signals = 0
        self._stop = threading.Event()
        self._threads: list[threading.Thread] = []
        self._maintenance = threading.Lock()

    def start(self) -> None:
        requeued = self.store.requeue_unfinished()
        if requeued:
            log.info("resuming %d unfinished task(s)", requeued)
        for n in range(self.threads):
            thread = threading.Thread(
                target=self._loop, name=f"graphrecall-worker-{n}", daemon=True
            )
            thread.start()
            self._threads.append(thread)

    def wake(self) -> None:
        with self._wake:
            self._signals += 1
            self._wake.notify_all()

    def stop(self, timeout: float = 10.0) -> None:
        self._stop.set()
        self.wake()
        for thread in self._threads:
            thread.join(timeout)

    def drain(self) -> int:
        """Run every pending task in the calling thread (tests, CLI import)."""
        count = 0
        while run := claim_run(self.store):
            run_tasks(self.ctx, run)
            count += len(run)
        return count

    def _maintain(self) -> bool:
        """One step of store maintenance when there is no task; one thread at a time.
        True when it did work."""
        if not self._maintenance.acquire(blocking=False):
            return False
        try:
            if self.store.maintenance.compact_text_indexes():
                return True
            self.store.maintenance.refresh_text_indexes()  # writes and their compaction are done
            return False
        except Exception:
            log.exception("full-text index maintenance failed")
            return False
        finally:
            self._maintenance.release()

    def _loop(self) -> None:
        while not self._stop.is_set():
            with self._wake:
                seen = self._signals
            try:
                run = claim_run(self.store)
            except Exception:
                log.exception("could not claim a task")
                run = []
            if run:
                run_tasks(self.ctx, run)
                self.wake()  # the graph is free again: another thread may take its next run
                continue
            if self._maintain():
                continue  # idle and there is more to compact: check for tasks, then go on
            with self._wake:
                if self._signals == seen and not self._stop.is_set():
                    self._wake.wait(self.poll_seconds)
