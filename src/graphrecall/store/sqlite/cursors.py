"""Search cursors: a ranked result list kept for its later pages, until it expires."""

from __future__ import annotations

from datetime import timedelta

from graphrecall.domain import clock
from graphrecall.store.sqlite.connection import Database


class Cursors:
    def __init__(self, db: Database) -> None:
        self.db = db

    def save_cursor(
        self, token: str, project_uuid: str, fingerprint: str, results: str, ttl_seconds: int
    ) -> None:
        now = clock.now_dt()
        with self.db.transaction():
            self.db.conn.execute(
                "DELETE FROM search_cursors WHERE expires_at < ?", [clock.to_iso(now)]
            )
            self.db.conn.execute(
                "INSERT INTO search_cursors VALUES (?, ?, ?, ?, ?, ?)",
                [
                    token,
                    project_uuid,
                    fingerprint,
                    results,
                    clock.to_iso(now),
                    clock.to_iso(now + timedelta(seconds=ttl_seconds)),
                ],
            )

    def load_cursor(self, token: str) -> tuple[str, str, str] | None:
        rows = self.db.query(
            "SELECT project_uuid, fingerprint, results FROM search_cursors"
            " WHERE token = ? AND expires_at >= ?",
            [token, clock.now()],
        )
        return (rows[0][0], rows[0][1], rows[0][2]) if rows else None
