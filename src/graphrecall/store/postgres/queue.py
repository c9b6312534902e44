"""The task queue on PostgreSQL, with the SQLite backend's lease semantics
(``store/sqlite/queue.py``): claiming runs under a lease, renewing, finishing. Each
function runs inside the store's write transaction; the pending rows a claim takes are
locked ``FOR UPDATE SKIP LOCKED``, so two workers never claim the same task."""

from __future__ import annotations

from collections.abc import Sequence

from psycopg.types.json import Jsonb

from graphrecall.domain import clock
from graphrecall.domain.models import BACKGROUND, LIVE, Task
from graphrecall.store.postgres import rows as rowmap
from graphrecall.store.postgres.connection import Database

SCAN = 1000  # pending tasks looked at per claim


def requeue_expired(db: Database, now: float) -> int:
    """Tasks whose lease ran out go back to ``pending``; returns how many."""
    return db.execute(
        "UPDATE tasks SET status = 'pending', lease_owner = NULL, lease_expires = NULL,"
        " updated_at = %s WHERE status = 'processing' AND priority >= 0"
        " AND (lease_expires IS NULL OR lease_expires < %s)",
        [clock.now(), now],
    )


def claim_run(
    db: Database,
    *,
    owner: str,
    now: float,
    lease_seconds: float,
    batchable: frozenset[str],
    max_tasks: int,
    max_episodes: int,
    background: bool = False,
) -> list[Task]:
    requeue_expired(db, now)
    busy = {
        r["graph_uuid"]
        for r in db.query(
            "SELECT DISTINCT graph_uuid FROM tasks WHERE status = 'processing' AND priority >= 0"
        )
    }
    pending = [
        rowmap.from_row(Task, r)
        for r in db.query(
            "SELECT * FROM tasks WHERE status = 'pending' AND priority = %s"
            " ORDER BY created_at, uuid"
            " LIMIT %s FOR UPDATE SKIP LOCKED",
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
    db.executemany(
        "UPDATE tasks SET status = 'processing', started_at = %s, updated_at = %s,"
        " lease_owner = %s, lease_expires = %s WHERE uuid = %s AND status = 'pending'",
        [(stamp, stamp, owner, now + lease_seconds, t.uuid) for t in run],
    )
    return [
        t.model_copy(update={"status": "processing", "started_at": stamp, "updated_at": stamp})
        for t in run
    ]


def renew(
    db: Database, owner: str, uuids: Sequence[str], *, now: float, lease_seconds: float
) -> list[str]:
    if not uuids:
        return []
    rows = db.query(
        "UPDATE tasks SET lease_expires = %s WHERE uuid = ANY(%s)"
        " AND status = 'processing' AND lease_owner = %s RETURNING uuid",
        [now + lease_seconds, list(uuids), owner],
    )
    held = {r["uuid"] for r in rows}
    return [u for u in uuids if u in held]


def finish(db: Database, task: Task, owner: str) -> bool:
    return (
        db.execute(
            "UPDATE tasks SET status = %s, stage = %s, result = %s, error = %s,"
            " updated_at = %s, completed_at = %s, lease_owner = NULL, lease_expires = NULL"
            " WHERE uuid = %s AND status = 'processing' AND lease_owner = %s",
            [
                task.status,
                task.stage,
                None if task.result is None else Jsonb(task.result),
                None if task.error is None else Jsonb(task.error),
                task.updated_at,
                task.completed_at,
                task.uuid,
                owner,
            ],
        )
        == 1
    )
