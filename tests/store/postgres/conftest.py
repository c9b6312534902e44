"""Stores on the tests' PostgreSQL server (``tests/pg_server.py``), one schema each."""

from __future__ import annotations

import uuid
from collections.abc import Callable, Iterator

import pytest

from graphrecall.store import Store, open_store
from tests import pg_server


@pytest.fixture()
def pg_url() -> str:
    return pg_server.with_schema(pg_server.server_url(), f"t{uuid.uuid4().hex}")


@pytest.fixture()
def open_pg() -> Iterator[Callable[[str], Store]]:
    opened: list[Store] = []

    def opener(url: str) -> Store:
        store = open_store(url)
        opened.append(store)
        return store

    yield opener
    for store in opened:
        store.close()
