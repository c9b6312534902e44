"""Persistence behind one interface; ``open_store`` picks the backend from a URL or path."""

from __future__ import annotations

from pathlib import Path

from graphrecall.store.base import Store


def open_store(location: str | Path) -> Store:
    """Open (and migrate) the store at ``location``: a file path, ``sqlite:///path`` or
    ``postgresql://user@host:port/dbname`` (``?schema=NAME`` for a schema of its own)."""
    text = str(location)
    if text.startswith(("postgres://", "postgresql://")):
        from graphrecall.store.postgres.store import PostgresStore

        return PostgresStore(text)
    if text.startswith("sqlite:///"):
        text = text[len("sqlite:///") :]
    from graphrecall.store.sqlite.store import SQLiteStore

    return SQLiteStore(Path(text))


__all__ = ["Store", "open_store"]
