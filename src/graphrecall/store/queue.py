"""The leased task queue, backend-neutral: which tasks a claim takes, and the order of its
steps. Each backend supplies only its statements (``sqlite/queue.py``,
``postgres/queue.py``).

A claimed task holds a lease: ``lease_owner`` (the worker process) and ``lease_expires``
(unix seconds). The owner renews it while it works; a task whose lease ran out (its worker
was killed or hung) is put back to ``pending`` by the next claim, and only the lease's
holder can record the task's end, so a worker that lost its lease cannot overwrite the
work of the one that took the task over. Every call runs in one write transaction of the
backend, which keeps two workers from claiming the same task.
"""

from __future__ import annotations

import time
from abc import abstractmethod
from collections.abc import Sequence
from contextlib import AbstractContextManager

from graphrecall.domain import clock
from graphrecall.domain.models import BACKGROUND, LIVE, Task
from graphrecall.store.base import TaskQueue

SCAN = 1000  # pending tasks looked at per claim


def select_run(
    pending: Sequence[Task],
    busy: set[str | None],
    *,
    batchable: frozenset[str],
    max_tasks: int,
    max_episodes: int,
) -> list[Task]:
    """From ``pending`` (oldest first): the first task whose graph is not ``busy``, and the
    same graph's next tasks of a ``batchable`` type after it (in order, up to ``max_tasks``
    tasks and ``max_episodes`` payload episodes). Empty when none can be taken."""
    first = next((i for i, t in enumerate(pending) if t.graph_uuid not in busy), None)
    if first is None:
        return []
    head = pending[first]
    run = [head]
    if head.type in batchable and head.graph_uuid is not None:
        episodes = len(head.payload.get("episodes", []))
        for task in pending[first + 1 :]:
            if task.graph_uuid != head.graph_uuid:
                continue
            size = len(task.payload.get("episodes", []))
            if (
                task.type not in batchable
                or len(run) >= max_tasks
                or episodes + size > max_episodes
            ):
                break  # the graph's order: nothing after a task that is not taken
            run.append(task)
            episodes += size
    return run


class LeasedQueue(TaskQueue):
    """:class:`TaskQueue` over a ``tasks`` table; subclasses write its statements."""

    @abstractmethod
    def _transaction(self) -> AbstractContextManager[None]:
        """The backend's write transaction (a claim's read and update happen in one)."""

    @abstractmethod
    def _requeue(self, now: float) -> int:
        """Put ``processing`` tasks whose lease expired before ``now`` (or that have no
        expiry: left by a version without leases) back to ``pending``; how many. Tracking
        tasks (priority below 0) are never requeued."""

    @abstractmethod
    def _busy_graphs(self) -> set[str | None]:
        """Graphs with a task in progress (tracking tasks, priority below 0, do not count)."""

    @abstractmethod
    def _pending(self, limit: int, priority: int) -> list[Task]:
        """The oldest ``limit`` pending tasks of ``priority`` (by creation, then uuid),
        held against other claims until the transaction ends."""

    @abstractmethod
    def _mark(self, run: Sequence[Task], owner: str, stamp: str, expires: float) -> None:
        """Mark the still-pending tasks of ``run`` processing under ``owner``'s lease."""

    @abstractmethod
    def _renew(self, owner: str, uuids: Sequence[str], expires: float) -> list[str]:
        """Extend ``owner``'s leases on these (non-empty) tasks; the uuids it holds."""

    @abstractmethod
    def _finish(self, task: Task, owner: str) -> bool:
        """Write the end of a task ``owner`` holds and release the lease; False when it
        no longer holds it (nothing written)."""

    def claim_run(
        self,
        owner: str,
        *,
        lease_seconds: float,
        batchable: frozenset[str],
        max_tasks: int,
        max_episodes: int,
        background: bool = False,
    ) -> list[Task]:
        with self._transaction():
            now = time.time()
            self._requeue(now)
            busy = self._busy_graphs()
            run = select_run(
                self._pending(SCAN, BACKGROUND if background else LIVE),
                busy,
                batchable=batchable,
                max_tasks=max_tasks,
                max_episodes=max_episodes,
            )
            if not run:
                return []
            stamp = clock.now()
            self._mark(run, owner, stamp, now + lease_seconds)
            return [
                t.model_copy(
                    update={"status": "processing", "started_at": stamp, "updated_at": stamp}
                )
                for t in run
            ]

    def renew_leases(self, owner: str, uuids: Sequence[str], lease_seconds: float) -> list[str]:
        with self._transaction():
            if not uuids:
                return []
            return self._renew(owner, uuids, time.time() + lease_seconds)

    def finish_task(self, task: Task, owner: str) -> bool:
        with self._transaction():
            return self._finish(task, owner)

    def requeue_expired(self) -> int:
        with self._transaction():
            return self._requeue(time.time())
