"""Schema versions of a store location, read without migrating, and ``graphrecall
migrate``'s one step: bring a location to the newest schema.

Opening a store already migrates it (each backend's own runner: SQLite's in one
``BEGIN IMMEDIATE`` transaction per migration, PostgreSQL's under its advisory lock), so
migrating is opening and closing; several processes may do it at once. This module only
adds the version before and after, for an operator to see what happened.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from graphrecall.store import Store, open_store
from graphrecall.store.location import is_postgres, parse, shown


@dataclass(frozen=True)
class Migration:
    before: int  # the version this process found (0: no schema yet)
    after: int
    newest: int  # the newest version this graphrecall knows


def schema_version(location: str | Path) -> int:
    """The schema version at ``location`` (0 when there is no database or schema yet),
    read without changing anything."""
    text = str(location)
    if is_postgres(text):
        return _postgres_version(text)
    path = parse(text).path
    if not path.exists():
        return 0
    conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    try:
        return int(conn.execute("PRAGMA user_version").fetchone()[0])
    finally:
        conn.close()


def newest_version(location: str | Path) -> int:
    if is_postgres(str(location)):
        from graphrecall.store.postgres.migrations import MIGRATIONS as PG

        return len(PG)
    from graphrecall.store.sqlite.migrations import MIGRATIONS

    return len(MIGRATIONS)


def migrate(location: str | Path, opener: Callable[[], Store] | None = None) -> Migration:
    """Apply every pending migration at ``location`` (by opening it with ``opener``,
    default :func:`open_store`). ``before`` is read first, without the lock: when another
    process migrates at the same moment, this one may report the same ``before`` and find
    nothing left to do."""
    before = schema_version(location)
    (opener or (lambda: open_store(location)))().close()
    return Migration(before, schema_version(location), newest_version(location))


def _postgres_version(url: str) -> int:
    import psycopg

    from graphrecall.store.postgres.connection import split_schema

    conninfo, schema = split_schema(url)
    with psycopg.connect(conninfo, autocommit=True) as conn:
        row = conn.execute(
            "SELECT to_regclass(%s) IS NOT NULL", [f"{schema}.schema_version"]
        ).fetchone()
        if not row or not row[0]:
            return 0
        found = conn.execute(f"SELECT max(version) FROM {schema}.schema_version").fetchone()
    return int(found[0] or 0) if found else 0


__all__ = ["Migration", "migrate", "newest_version", "schema_version", "shown"]
