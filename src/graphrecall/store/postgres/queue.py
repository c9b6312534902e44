"""The task queue's statements on PostgreSQL (the claiming logic: ``store/queue.py``).
Each runs inside the store's write transaction; the pending rows a claim takes are locked
``FOR UPDATE SKIP LOCKED``, so two workers never claim the same task."""

from __future__ import annotations

from collections.abc import Sequence
from contextlib import AbstractContextManager

from psycopg.types.json import Jsonb

from graphrecall.domain import clock
from graphrecall.domain.models import Task
from graphrecall.store.postgres import rows as rowmap
from graphrecall.store.postgres.connection import Database
from graphrecall.store.queue import LeasedQueue


class PostgresQueue(LeasedQueue):
    def __init__(self, db: Database) -> None:
        self.db = db

    def _transaction(self) -> AbstractContextManager[None]:
        return self.db.transaction()

    def _requeue(self, now: float) -> int:
        return self.db.execute(
            "UPDATE tasks SET status = 'pending', lease_owner = NULL, lease_expires = NULL,"
            " updated_at = %s WHERE status = 'processing' AND priority >= 0"
            " AND (lease_expires IS NULL OR lease_expires < %s)",
            [clock.now(), now],
        )

    def _busy_graphs(self) -> set[str | None]:
        sql = "SELECT DISTINCT graph_uuid FROM tasks WHERE status = 'processing' AND priority >= 0"
        return {r["graph_uuid"] for r in self.db.query(sql)}

    def _pending(self, limit: int, priority: int) -> list[Task]:
        return [
            rowmap.from_row(Task, r)
            for r in self.db.query(
                "SELECT * FROM tasks WHERE status = 'pending' AND priority = %s"
                " ORDER BY created_at, uuid LIMIT %s FOR UPDATE SKIP LOCKED",
                [priority, limit],
            )
        ]

    def _mark(self, run: Sequence[Task], owner: str, stamp: str, expires: float) -> None:
        self.db.executemany(
            "UPDATE tasks SET status = 'processing', started_at = %s, updated_at = %s,"
            " lease_owner = %s, lease_expires = %s WHERE uuid = %s AND status = 'pending'",
            [(stamp, stamp, owner, expires, t.uuid) for t in run],
        )

    def _renew(self, owner: str, uuids: Sequence[str], expires: float) -> list[str]:
        rows = self.db.query(
            "UPDATE tasks SET lease_expires = %s WHERE uuid = ANY(%s)"
            " AND status = 'processing' AND lease_owner = %s RETURNING uuid",
            [expires, list(uuids), owner],
        )
        held = {r["uuid"] for r in rows}
        return [u for u in uuids if u in held]

    def _finish(self, task: Task, owner: str) -> bool:
        updated = self.db.execute(
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
        return updated == 1
