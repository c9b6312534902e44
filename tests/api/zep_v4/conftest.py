"""The Zep SDK tests run against a server on each backend: SQLite, and PostgreSQL
(``tests/pg_server.py``, a schema of its own)."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests import pg_server
from tests.conftest import API_KEY, Server, _free_port


@pytest.fixture(scope="session", params=["sqlite", "postgresql"])
def server(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Server]:
    db: Path | str = tmp_path_factory.mktemp("db") / "graphrecall.db"
    if request.param == "postgresql":
        db = pg_server.with_schema(pg_server.server_url(), f"z{uuid.uuid4().hex}")
    srv = Server(db, _free_port(), API_KEY).start()  # type: ignore[arg-type]
    yield srv
    srv.stop()
