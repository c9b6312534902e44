"""Fixtures for retrieval tests that must hold on every store backend."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from graphrecall.store import Store, open_store
from tests import pg_server


@pytest.fixture(params=["sqlite", "postgresql"])
def backend_store(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Store]:
    """An empty store on each backend: SQLite in a temporary file, PostgreSQL in a schema
    of its own on the test server."""
    if request.param == "postgresql":
        url = pg_server.with_schema(pg_server.server_url(), f"t{uuid.uuid4().hex}")
    else:
        url = str(tmp_path / "db.sqlite")
    opened = open_store(url)
    yield opened
    opened.close()
