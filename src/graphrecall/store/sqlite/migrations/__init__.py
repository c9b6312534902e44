"""Versioned schema migrations, applied in order; the version lives in PRAGMA user_version.

Each migration runs in one transaction: a database is at version N or N-1, never between.
The migrations themselves are in ``history.py``, the SQL they are built from in ``sql.py``.
"""

from __future__ import annotations

import logging
import sqlite3

from graphrecall.domain.scopes import TEXT_TABLES
from graphrecall.store.sqlite.migrations.history import MIGRATIONS
from graphrecall.store.sqlite.migrations.sql import (
    CHANGE_LOG,
    CONTEXT_CHARS,
    CONTEXT_MESSAGES,
    FTS_TOKENIZE,
    ROW_LOG,
)

logger = logging.getLogger(__name__)

__all__ = [
    "CHANGE_LOG",
    "CONTEXT_CHARS",
    "CONTEXT_MESSAGES",
    "FTS_TOKENIZE",
    "MIGRATIONS",
    "ROW_LOG",
    "ensure_change_log",
    "migrate",
]


def ensure_change_log(conn: sqlite3.Connection) -> frozenset[str]:
    """Make the triggers that log each full-text index's changes in ``CHANGE_LOG``
    where they are missing; returns the tables whose changes are logged.

    FTS5 keeps one ``{table}_fts_docsize`` row per indexed row and writes it on every
    insert and delete, whichever trigger or command (``rebuild`` too) changed the index, so
    triggers there see every change, the neighbours a message's triggers re-index
    included. They live outside the migrations because recreating an index (as migrations
    8, 10, 11 and 13 did) drops them, and because a connection in SQLite's defensive mode
    may not put triggers on shadow tables: then nothing is logged, and the copies are
    read again whole after writes, as before."""
    logged = set()
    for table in TEXT_TABLES:
        docsize = f"{table}_fts_docsize"
        statements = [
            f"CREATE TRIGGER IF NOT EXISTS {docsize}_{event.lower()}_log AFTER {event} ON"
            f" {docsize} BEGIN INSERT INTO {CHANGE_LOG}(tbl, row) VALUES ('{table}', {ref}.id);"
            " END"
            for event, ref in (("INSERT", "new"), ("DELETE", "old"))
        ]
        names = [f"{docsize}_insert_log", f"{docsize}_delete_log"]
        present = conn.execute(
            "SELECT count(*) FROM sqlite_master WHERE type = 'trigger' AND name IN (?, ?)", names
        ).fetchone()[0]
        if present < len(names):
            try:
                conn.execute("BEGIN IMMEDIATE")
                for statement in statements:
                    conn.execute(statement)
                conn.execute("COMMIT")
            except sqlite3.DatabaseError as exc:
                if conn.in_transaction:
                    conn.execute("ROLLBACK")
                logger.warning("full-text changes of %s are not logged: %s", table, exc)
                continue
        logged.add(table)
    return frozenset(logged)


def migrate(conn: sqlite3.Connection, target: int | None = None) -> int:
    """Bring the schema to version ``target`` (default: the newest); returns the version
    reached. (An older ``target`` makes the databases that upgrade tests start from.)"""
    version: int = conn.execute("PRAGMA user_version").fetchone()[0]
    if version > len(MIGRATIONS):
        raise RuntimeError(
            f"database schema version {version} is newer than this graphrecall "
            f"({len(MIGRATIONS)}); upgrade graphrecall"
        )
    goal = len(MIGRATIONS) if target is None else target
    for number in range(version + 1, goal + 1):
        conn.execute("BEGIN IMMEDIATE")
        try:
            # Read again under the write lock: another process opening the same new file
            # at the same moment may have applied this migration since.
            if conn.execute("PRAGMA user_version").fetchone()[0] >= number:
                conn.execute("COMMIT")
                continue
            for statement in _statements(MIGRATIONS[number - 1]):
                conn.execute(statement)
            conn.execute(f"PRAGMA user_version = {number}")
            conn.execute("COMMIT")
        except BaseException:
            conn.execute("ROLLBACK")
            raise
    return max(version, goal)


def _statements(script: str) -> list[str]:
    """Split a script into complete statements (trigger bodies contain semicolons)."""
    statements: list[str] = []
    current = ""
    for line in script.splitlines():
        if line.strip().startswith("--"):
            continue
        current += line + "\n"
        if sqlite3.complete_statement(current):
            statements.append(current.strip())
            current = ""
    if current.strip():
        raise ValueError(f"incomplete SQL statement in migration: {current.strip()[:80]}")
    return statements
