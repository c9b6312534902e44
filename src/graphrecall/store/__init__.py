"""Persistence behind one interface; ``open_store`` picks the backend from a URL or path."""

from __future__ import annotations

from pathlib import Path

from graphrecall.store.base import Store
from graphrecall.store.location import parse


def open_store(location: str | Path) -> Store:
    """Open (and migrate) the store at ``location``: a file path, ``sqlite:///path`` or
    ``postgresql://user@host:port/dbname`` (``?schema=NAME`` for a schema of its own)."""
    where = parse(location)  # refuses a URL of any other kind before a file is made
    if where.backend == "postgresql":
        from graphrecall.store.postgres.store import PostgresStore

        return PostgresStore(where.text)
    from graphrecall.store.sqlite.store import SQLiteStore

    return SQLiteStore(where.path)


__all__ = ["Store", "open_store"]
