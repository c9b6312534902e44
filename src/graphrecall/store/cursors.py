"""Search cursors in a ``search_cursors`` table, for either SQL backend: a ranked result
list kept for its later pages, until it expires."""

from __future__ import annotations

from collections.abc import Sequence
from contextlib import AbstractContextManager
from datetime import datetime, timedelta
from typing import Any, Protocol

from graphrecall.domain import clock
from graphrecall.store.base import Cursors


class SqlDatabase(Protocol):
    """What the shared SQL parts need of a backend's connection."""

    def transaction(self) -> AbstractContextManager[None]: ...

    def query(self, sql: str, params: Sequence[Any] = ()) -> Sequence[Any]: ...

    def execute(self, sql: str, params: Sequence[Any] = ()) -> int: ...


# Expired cursors are deleted by a search at most this often per process: a sweep on
# every search cost a statement each, and the write lock (below) besides.
SWEEP_EVERY = timedelta(seconds=60)


class SqlCursors(Cursors):
    def __init__(self, db: SqlDatabase, mark: str) -> None:
        """``mark``: the backend's parameter placeholder (``?`` or ``%s``)."""
        self.db = db
        self._mark = mark
        self._next_sweep: datetime | None = None

    def save_cursor(
        self, token: str, project_uuid: str, fingerprint: str, results: str, ttl_seconds: int
    ) -> None:
        # Each statement commits alone, outside ``transaction()``: a cursor row shares
        # nothing with other writes (no triggers, no statistics), so a search never waits
        # for the store's write lock behind an ingestion transaction.
        now = clock.now_dt()
        if self._next_sweep is None or now >= self._next_sweep:
            self._next_sweep = now + SWEEP_EVERY
            self.db.execute(
                f"DELETE FROM search_cursors WHERE expires_at < {self._mark}", [clock.to_iso(now)]
            )
        marks = ", ".join([self._mark] * 6)
        self.db.execute(
            f"INSERT INTO search_cursors VALUES ({marks})",
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
            f" WHERE token = {self._mark} AND expires_at >= {self._mark}",
            [token, clock.now()],
        )
        if not rows:
            return None
        return (rows[0]["project_uuid"], rows[0]["fingerprint"], rows[0]["results"])
