"""The backends the conformance suite runs against.

Each entry of STORE_URLS is a store URL for ``open_store``; ``{tmp}`` is replaced by the
test's temporary directory and ``{name}`` by a name unique to the test, so that every
test opens an empty store (a server backend puts ``{name}`` in its database or schema
name). Adding a backend is adding a URL here.

PostgreSQL runs every time: against ``GRAPHRECALL_TEST_PG_URL`` when set, else a
throw-away server (``tests/pg_server.py``), one schema per test.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from graphrecall.store import Store, open_store
from tests import pg_server

POSTGRES = "postgresql://{server}"
STORE_URLS = ["sqlite:///{tmp}/conformance.db", POSTGRES]


def _backend(url: str) -> str:
    return url.split(":", 1)[0]


@pytest.fixture(params=STORE_URLS, ids=_backend)
def store_url(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    template: str = request.param
    name = f"t{uuid.uuid4().hex}"
    if template == POSTGRES:
        return pg_server.with_schema(pg_server.server_url(), name)
    return template.replace("{tmp}", str(tmp_path)).replace("{name}", name)


@pytest.fixture()
def store(store_url: str) -> Iterator[Store]:
    s = open_store(store_url)
    yield s
    s.close()
