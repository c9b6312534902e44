"""The task queue's statements on SQLite (the claiming logic: ``store/queue.py``).

Each runs inside the store's ``BEGIN IMMEDIATE`` transaction (``Database.transaction``):
SQLite then lets no other connection, in this process or another, write between the read
that picks the tasks and the update that marks them, so two workers never claim the same
task.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from contextlib import AbstractContextManager

from graphrecall.domain import clock
from graphrecall.domain.models import Task
from graphrecall.store.queue import LeasedQueue
from graphrecall.store.sqlite import rows as rowmap
from graphrecall.store.sqlite.connection import Database


class SQLiteQueue(LeasedQueue):
    def __init__(self, db: Database) -> None:
        self.db = db

    def _transaction(self) -> AbstractContextManager[None]:
        return self.db.transaction()

    def _requeue(self, now: float) -> int:
        cur = self.db.conn.execute(
            "UPDATE tasks SET status = 'pending', lease_owner = NULL, lease_expires = NULL,"
            " updated_at = ? WHERE status = 'processing' AND priority >= 0"
            " AND (lease_expires IS NULL OR lease_expires < ?)",
            [clock.now(), now],
        )
        return cur.rowcount

    def _busy_graphs(self) -> set[str | None]:
        sql = "SELECT DISTINCT graph_uuid FROM tasks WHERE status = 'processing' AND priority >= 0"
        return {row[0] for row in self.db.conn.execute(sql)}

    def _pending(self, limit: int, priority: int) -> list[Task]:
        return [
            rowmap.from_row(Task, row)
            for row in self.db.conn.execute(
                "SELECT * FROM tasks WHERE status = 'pending' AND priority = ?"
                " ORDER BY created_at, uuid LIMIT ?",
                [priority, limit],
            )
        ]

    def _mark(self, run: Sequence[Task], owner: str, stamp: str, expires: float) -> None:
        self.db.conn.executemany(
            "UPDATE tasks SET status = 'processing', started_at = ?, updated_at = ?,"
            " lease_owner = ?, lease_expires = ? WHERE uuid = ? AND status = 'pending'",
            [(stamp, stamp, owner, expires, t.uuid) for t in run],
        )

    def _renew(self, owner: str, uuids: Sequence[str], expires: float) -> list[str]:
        marks = ",".join("?" * len(uuids))
        self.db.conn.execute(
            f"UPDATE tasks SET lease_expires = ? WHERE uuid IN ({marks})"
            " AND status = 'processing' AND lease_owner = ?",
            [expires, *uuids, owner],
        )
        rows = self.db.conn.execute(
            f"SELECT uuid FROM tasks WHERE uuid IN ({marks})"
            " AND status = 'processing' AND lease_owner = ?",
            [*uuids, owner],
        ).fetchall()
        return [row[0] for row in rows]

    def _finish(self, task: Task, owner: str) -> bool:
        cur = self.db.conn.execute(
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
