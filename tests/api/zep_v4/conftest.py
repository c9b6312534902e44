"""The Zep SDK tests run against the app on each backend, in this process
(``tests/inprocess.py``): SQLite, and PostgreSQL (``tests/pg_server.py``, a schema of its
own)."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
from zep_cloud import Zep

from tests import pg_server
from tests.conftest import API_KEY
from tests.inprocess import InProcess


@pytest.fixture(scope="session", params=["sqlite", "postgresql"])
def server(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[InProcess]:
    db: Path | str = tmp_path_factory.mktemp("db") / "graphrecall.db"
    if request.param == "postgresql":
        db = pg_server.with_schema(pg_server.server_url(), f"z{uuid.uuid4().hex}")
    app = InProcess(db, API_KEY)
    yield app
    app.stop()


@pytest.fixture(scope="session")
def zep(server: InProcess) -> Zep:
    """The client of this directory's server. Without its own ``zep``, a session that
    had already made the root conftest's (tests/ingest, run first) kept it here: these
    tests talked to that SQLite server while ``server`` named this one."""
    return server.client()


# Modules that read the SQLite database file itself: they run on SQLite only (left out
# of the PostgreSQL parametrisation, not skipped).
SQLITE_FILE_MODULES = frozenset({"test_search_columns.py"})


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    dropped = [
        item
        for item in items
        if item.path.name in SQLITE_FILE_MODULES and "[postgresql" in item.nodeid
    ]
    if dropped:
        config.hook.pytest_deselected(items=dropped)
        items[:] = [item for item in items if item not in dropped]
