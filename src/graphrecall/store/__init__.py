"""Persistence behind one interface; ``open_store`` picks the backend from a URL or path."""

from __future__ import annotations

from pathlib import Path

from graphrecall.store.base import Store


def open_store(location: str | Path) -> Store:
    """Open (and migrate) the store at ``location``: a file path or ``sqlite:///path``."""
    text = str(location)
    if text.startswith(("postgres://", "postgresql://")):
        raise NotImplementedError("the PostgreSQL backend is not built yet; use a SQLite path")
    if text.startswith("sqlite:///"):
        text = text[len("sqlite:///") :]
    from graphrecall.store.sqlite.store import SQLiteStore

    return SQLiteStore(Path(text))


__all__ = ["Store", "open_store"]
