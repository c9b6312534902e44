"""The ingestion worker: threads that claim runs of tasks from the store and do them.

Tasks live in the store, so nothing is lost when a process stops. Any number of worker
processes may share one database (``graphrecall worker``, or ``serve``'s own worker):
claiming is a store operation, atomic per backend, and each claimed task is held under a
lease (``GRAPHRECALL_TASK_LEASE_SECONDS``) that this process renews while it works. When a
worker dies, its tasks' leases expire and another worker takes them over; only the lease's
holder records a task's end. Redoing a task is safe: each episode commits alone with its
``processed`` flag, and processed episodes are skipped.

Worker threads (``GRAPHRECALL_WORKER_THREADS``, default: 2, or 1 on a one-core machine)
each claim a *run*: the oldest pending task of a graph that has no task in progress, plus
the graph's next pending episode tasks (up to 16 tasks, 256 episodes). So the tasks of one
graph are done one run at a time, in the order they were added, and different graphs are
done in parallel. A run shares its slow steps (extraction, embedding) across its tasks;
see ``pipeline.process_run``.

Live work comes first: the worker threads take live tasks only; background tasks (a
batch's, ``ingest/batches.py``) are taken by one more thread of their own, in short runs,
at a lower CPU priority (nice +10), so a backfill neither holds a live thread nor takes
the live threads' share of the cores.
"""

from __future__ import annotations

import logging
import os
import socket
import threading
import time
import uuid
from collections.abc import Callable, Sequence
from typing import Any

from graphrecall.domain import clock
from graphrecall.domain.models import Edge, Node, Record, Task
from graphrecall.graph_model.embedding import embed_records
from graphrecall.ingest import batches, clone, webhooks
from graphrecall.ingest.context import IngestContext
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
    result: dict[str, Any] = {"edges": [{"uuid": e.uuid} for e in edges]} if edges else {}
    if "hyperedge_uuid" in task.payload:
        result["hyperedge_uuid"] = task.payload["hyperedge_uuid"]
    return result


HANDLERS: dict[str, Handler] = {
    "graph.add": process_episodes,
    "thread.add_messages": process_episodes,
    "graph.add_nodes": process_graph_items,
    "graph.add_edges": process_graph_items,
    "graph.hyperedge.add": process_graph_items,
    "graph.hyperedge.create_edge": process_graph_items,
    "memory.embed": process_memories,
    batches.ENQUEUE_TASK: batches.enqueue_items,
    clone.CLONE_TASK: clone.clone_graph,
}


EPISODE_TASKS = frozenset({"graph.add", "thread.add_messages"})
RUN_TASKS = 16
RUN_EPISODES = 256
# A background run (a batch's tasks, 32 items each) is kept short: it shares the cores with
# live work, and a live task for the same graph waits for it.
BACKGROUND_RUN_TASKS = 2
LEASE_SECONDS = 60.0
# How often an idle worker runs the idle jobs (Worker.idle_jobs).
IDLE_JOB_SECONDS = 10.0
# This process's name on the leases it holds (threads of one process share it).
PROCESS_OWNER = f"{socket.gethostname()}:{os.getpid()}:{uuid.uuid4().hex[:8]}"


def claim_run(
    store: Store,
    *,
    max_tasks: int = RUN_TASKS,
    max_episodes: int = RUN_EPISODES,
    owner: str = PROCESS_OWNER,
    lease_seconds: float = LEASE_SECONDS,
    background: bool = False,
) -> list[Task]:
    """Atomically take the oldest pending task whose graph has no task in progress, and
    the same graph's next pending episode tasks after it (in order, up to the limits);
    all are marked ``processing`` under ``owner``'s lease. Live tasks, or with
    ``background`` background ones (batches). Empty when nothing can be taken now."""
    return store.claim_run(
        owner,
        lease_seconds=lease_seconds,
        batchable=EPISODE_TASKS,
        max_tasks=max_tasks,
        max_episodes=max_episodes,
        background=background,
    )


def settle_batches(store: Store, tasks: Sequence[Task]) -> None:
    """After tasks of a batch ended: the batch's status (and its tracking task) follow."""
    for project_uuid, batch_uuid in sorted(
        {(t.project_uuid, t.payload["batch_uuid"]) for t in tasks if t.payload.get("batch_uuid")}
    ):
        try:
            batches.settle(store, project_uuid, batch_uuid)
        except Exception:  # it is settled again when read
            log.exception("could not settle batch %s", batch_uuid)


def run_tasks(ctx: IngestContext, tasks: Sequence[Task], owner: str = PROCESS_OWNER) -> list[Task]:
    """Do a claimed run. Episode tasks of one graph go through ``process_run`` together;
    if that fails, the tasks are redone one by one (already-processed episodes are
    skipped), so a failure is recorded on the task it belongs to."""
    if len(tasks) == 1 or not all(t.type in EPISODE_TASKS for t in tasks):
        return [run_task(ctx, t, owner) for t in tasks]
    try:
        results = process_run(ctx, list(tasks))
    except Exception:
        log.warning("a run of %d tasks failed; redoing them one by one", len(tasks), exc_info=True)
        return [run_task(ctx, t, owner) for t in tasks]
    return [_succeeded(ctx.store, t, r, owner) for t, r in zip(tasks, results, strict=True)]


def _finish(store: Store, task: Task, owner: str) -> Task:
    if not store.finish_task(task, owner):
        # The lease ran out (this process stalled) and another worker took the task
        # over: its outcome is the one recorded.
        log.warning("task %s: lease lost before it finished; its new holder records it", task.uuid)
    return task


def _succeeded(store: Store, task: Task, result: dict[str, Any] | None, owner: str) -> Task:
    failed = (result or {}).get("failed_episodes")
    if failed:
        # Some episodes could not be read (the others of the call were processed): the
        # task fails naming them, so it shows and ``tasks retry`` redoes just those.
        return _failed(
            store,
            task,
            {
                "code": "episodes_failed",
                "message": f"{len(failed)} episode(s) not processed: {failed[0]['error']}"[:2000],
                "episodes": failed,
            },
            owner,
            result,
        )
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
    return _finish(store, done, owner)


def run_task(ctx: IngestContext, task: Task, owner: str = PROCESS_OWNER) -> Task:
    """Do one claimed task. The handler commits its own work (per episode); the task is
    marked succeeded afterwards, or failed with the error; a failed task's episodes stay
    unprocessed and the task can be retried (``graphrecall tasks retry``)."""
    store = ctx.store
    handler = HANDLERS.get(task.type)
    try:
        if handler is None:
            raise ValueError(f"no handler for task type {task.type!r}")
        return _succeeded(store, task, handler(ctx, task), owner)
    except Exception as exc:
        log.exception("task %s (%s) failed", task.uuid, task.type)
        return _failed(store, task, {"code": "task_failed", "message": str(exc)[:2000]}, owner)


def _failed(
    store: Store,
    task: Task,
    error: dict[str, Any],
    owner: str,
    result: dict[str, Any] | None = None,
) -> Task:
    stamp = clock.now()
    failed = task.model_copy(
        update={
            "status": "failed",
            "stage": "failed",
            "result": result,
            "error": error,
            "updated_at": stamp,
            "completed_at": stamp,
        }
    )
    return _finish(store, failed, owner)


def _lower_priority(step: int = 10) -> None:
    """Raise the calling thread's nice value (Linux: per thread); elsewhere, or when not
    allowed, leave it."""
    try:
        tid = threading.get_native_id()
        os.setpriority(os.PRIO_PROCESS, tid, os.getpriority(os.PRIO_PROCESS, tid) + step)
    except (AttributeError, OSError):
        log.debug("could not lower the background thread's priority")


def default_threads() -> int:
    """Two threads, or one on a one-core machine (``GRAPHRECALL_WORKER_THREADS`` overrides)."""
    return min(2, os.cpu_count() or 1)


class Worker:
    """Runs tasks in background threads; ``wake()`` is called after each enqueue."""

    def __init__(
        self,
        ctx: IngestContext,
        poll_seconds: float = 2.0,
        threads: int | None = None,
        lease_seconds: float = LEASE_SECONDS,
        owner: str = PROCESS_OWNER,
    ) -> None:
        self.ctx = ctx
        self.store = ctx.store
        self.poll_seconds = poll_seconds
        self.threads = threads or default_threads()
        self.lease_seconds = lease_seconds
        self.owner = owner
        self._wake = threading.Condition()
        self._signals = 0
        self._stop = threading.Event()
        self._threads: list[threading.Thread] = []
        self._maintenance = threading.Lock()
        self._held: set[str] = set()  # uuids of the tasks this process is doing
        self._held_lock = threading.Lock()
        self.done = 0  # tasks this worker finished (for the CLI and tests)
        # Upkeep the layers above add (runtime.py: erasing expired memory histories),
        # run while idle at most every IDLE_JOB_SECONDS.
        self.idle_jobs: list[Callable[[], object]] = []
        self._idle_jobs_at = 0.0

    def start(self) -> None:
        self._stop.clear()
        expired = self.store.requeue_expired()
        if expired:
            log.info("resuming %d task(s) whose worker stopped", expired)
        targets = [self._loop] * self.threads + [self._background_loop, self._renew_loop]
        targets.append(lambda: webhooks.sender_loop(self.store, self._stop))
        names = [f"graphrecall-worker-{n}" for n in range(self.threads)]
        names += ["graphrecall-background", "graphrecall-lease", "graphrecall-webhooks"]
        for name, target in zip(names, targets, strict=True):
            thread = threading.Thread(target=target, name=name, daemon=True)
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
        self._threads = []

    def drain(self) -> int:
        """Run every pending task in the calling thread (tests, CLI import)."""
        count = 0
        while run := self._claim() or self._claim(background=True):
            self._run(run)
            count += len(run)
        return count

    def _claim(self, *, background: bool = False) -> list[Task]:
        run = claim_run(
            self.store,
            owner=self.owner,
            lease_seconds=self.lease_seconds,
            background=background,
            max_tasks=BACKGROUND_RUN_TASKS if background else RUN_TASKS,
        )
        if run:
            log.debug("claimed %s", " ".join(t.uuid for t in run))
        with self._held_lock:
            self._held.update(t.uuid for t in run)
        return run

    def _run(self, run: list[Task]) -> None:
        try:
            run_tasks(self.ctx, run, self.owner)
            settle_batches(self.store, run)
        finally:
            with self._held_lock:
                self._held.difference_update(t.uuid for t in run)
                self.done += len(run)

    def _background_loop(self) -> None:
        """The one thread that does background work (batches), at a lower CPU priority
        (nice +10 on Linux, where a thread has its own), so the live threads keep their
        share of the machine while a backfill runs."""
        _lower_priority()
        while not self._stop.is_set():
            with self._wake:
                seen = self._signals
            try:
                run = self._claim(background=True)
            except Exception:
                log.exception("could not claim a background task")
                run = []
            if run:
                self._run(run)
                continue
            with self._wake:
                if self._signals == seen and not self._stop.is_set():
                    self._wake.wait(self.poll_seconds)

    def _renew_loop(self) -> None:
        """Renew the leases of the tasks in progress, three times per lease period."""
        while not self._stop.wait(self.lease_seconds / 3):
            with self._held_lock:
                held = list(self._held)
            if not held:
                continue
            try:
                kept = set(self.store.renew_leases(self.owner, held, self.lease_seconds))
            except Exception:
                log.exception("could not renew task leases")
                continue
            lost = [u for u in held if u not in kept]
            with self._held_lock:
                lost = [u for u in lost if u in self._held]  # not just finished
            if lost:
                log.warning("lost the lease on %d task(s): %s", len(lost), ", ".join(lost))

    def _maintain(self) -> bool:
        """One step of store maintenance when there is no task; one thread at a time.
        True when it did work."""
        if not self._maintenance.acquire(blocking=False):
            return False
        try:
            if self.idle_jobs and time.monotonic() >= self._idle_jobs_at:
                self._idle_jobs_at = time.monotonic() + IDLE_JOB_SECONDS
                for job in self.idle_jobs:
                    try:
                        job()
                    except Exception:
                        log.exception("idle job %s failed", job)
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
                run = self._claim()
            except Exception:
                log.exception("could not claim a task")
                run = []
            if run:
                self._run(run)
                self.wake()  # the graph is free again: another thread may take its next run
                continue
            if self._maintain():
                continue  # idle and there is more to compact: check for tasks, then go on
            with self._wake:
                if self._signals == seen and not self._stop.is_set():
                    self._wake.wait(self.poll_seconds)
