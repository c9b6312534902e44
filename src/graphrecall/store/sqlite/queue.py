"""The task queue on SQLite: claiming runs under a lease, renewing, finishing.

Each function takes the store's write connection and must run inside its ``BEGIN
IMMEDIATE`` transaction (``SQLiteStore.transaction``): SQLite then lets no other
connection, in this process or another, write between the read that picks the tasks and
the update that marks them, so two workers never claim the same task.

A claimed task holds a lease: ``lease_owner`` (the worker process) and ``lease_expires``
(unix seconds). The owner renews it while it works; a task whose lease ran out (its worker
was killed or hung) is put back to ``pending`` by the next claim, and only the lease's
holder can record the task's end, so a worker that lost its lease cannot overwrite the
work of the one that took the task over.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Callable, Sequence

from graphrecall.domain import clock
from graphrecall.domain.models import BACKGROUND, LIVE, Task

SCAN = 1000  # pending tasks looked at per claim

ToTask = Callable[[sqlite3.Row], Task]


def requeue_expired(conn: sqlite3.Connection, now: float) -> int:
    """Tasks whose lease ran out go back to ``pending``; returns how many. A task left
    ``processing`` by a version without leases (no expiry) counts as expired."""
    cur = conn.execute(
        "UPDATE tasks SET status = 'pending', lease_owner = NULL, lease_expires = NULL,"
        " updated_at = ? WHERE status = 'processing' AND priority >= 0"
        " AND (lease_expires IS NULL OR lease_expires < ?)",
        [clock.now(), now],
    )
    return cur.rowcount


def claim_run(
    conn: sqlite3.Connection,
    to_task: ToTask,
    *,
    owner: str,
    now: float,
    lease_seconds: float,
    batchable: frozenset[str],
    max_tasks: int,
    max_episodes: int,
    background: bool = False,
) -> list[Task]:
    """Take the oldest pending task whose graph has no task in progress, and the same
    graph's next pending tasks of a ``batchable`` type after it (in order, up to
    ``max_tasks`` tasks and ``max_episodes`` episodes); mark them ``processing`` under
    ``owner``'s lease. Empty when nothing can be taken now."""
    requeue_expired(conn, now)
    busy = {
        row[0]
        for row in conn.execute(
            "SELECT DISTINCT graph_uuid FROM tasks WHERE status = 'processing' AND priority >= 0"
        )
    }
    pending = [
        to_task(row)
        for row in conn.execute(
            "SELECT * FROM tasks WHERE status = 'pending' AND priority = ?"
            " ORDER BY created_at, uuid LIMIT ?",
            [BACKGROUND if background else LIVE, SCAN],
        )
    ]
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
    stamp = clock.now()
    conn.executemany(
        "UPDATE tasks SET status = 'processing', started_at = ?, updated_at = ?,"
        " lease_owner = ?, lease_expires = ? WHERE uuid = ? AND status = 'pending'",
        [(stamp, stamp, owner, now + lease_seconds, t.uuid) for t in run],
    )
    return [
        t.model_copy(update={"status": "processing", "started_at": stamp, "updated_at": stamp})
        for t in run
    ]


def renew(
    conn: sqlite3.Connection,
    owner: str,
    uuids: Sequence[str],
    *,
    now: float,
    lease_seconds: float,
) -> list[str]:
    """Extend ``owner``'s leases on these tasks; returns the uuids it still holds."""
    if not uuids:
        return []
    marks = ",".join("?" * len(uuids))
    conn.execute(
        f"UPDATE tasks SET lease_expires = ? WHERE uuid IN ({marks})"
        " AND status = 'processing' AND lease_owner = ?",
        [now + lease_seconds, *uuids, owner],
    )
    rows = conn.execute(
        f"SELECT uuid FROM tasks WHERE uuid IN ({marks})"
        " AND status = 'processing' AND lease_owner = ?",
        [*uuids, owner],
    ).fetchall()
    return [row[0] for row in rows]


def finish(conn: sqlite3.Connection, task: Task, owner: str) -> bool:
    """Record a held task's end (``task``'s status, stage, result, error and times) and
    release its lease. False, and nothing written, when ``owner`` no longer holds it."""
    cur = conn.execute(
        "UPDATE tasks SET status = ?, stage = ?, result = ?, error = ?, updated_at = ?,"
        " completed_at = ?, lease_owner = NULL, lease_expires = NULL"
        " WHERE uuid = ? AND status = 'processing' AND lease_owner = ?",
        [
            task.status,
            task.stage,
            _json(task.result),
            _json(task.error),
            task.updated_at,
            task.completed_at,
            task.uuid,
            owner,
        ],
    )
    return cur.rowcount == 1


def _json(value: object) -> str | None:
    return None if value is None else json.dumps(value, separators=(",", ":"))
