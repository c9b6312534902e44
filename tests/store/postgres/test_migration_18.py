"""Migration 18 on PostgreSQL: a database that already holds vectors records that they
were made by all-MiniLM-L6-v2 (as SQLite's migration 26 does)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any
from urllib.parse import parse_qsl, urlsplit

import psycopg

from graphrecall.ml.embedder import STOCK
from graphrecall.store import Store
from graphrecall.store.postgres.migrations import MIGRATIONS, migrate


def test_a_database_with_vectors_records_the_stock_embedder(
    pg_url: str, open_pg: Callable[[str], Store]
) -> None:
    open_pg(pg_url).close()  # the newest schema, in its own schema
    schema = dict(parse_qsl(urlsplit(pg_url).query))["schema"]
    plain = (
        pg_url.split("?")[0]
        + "?"
        + "&".join(f"{k}={v}" for k, v in parse_qsl(urlsplit(pg_url).query) if k != "schema")
    )
    with psycopg.connect(plain, autocommit=True) as conn:
        conn.execute(f"SET search_path TO {schema}, public")
        assert len(MIGRATIONS) == 18
        # back to version 17, with a vector and no record of its model
        conn.execute("DELETE FROM schema_version WHERE version = 18")
        conn.execute("DELETE FROM settings WHERE key = 'embedder_model'")
        conn.execute(
            "INSERT INTO embeddings (kind, owner_uuid, uuid, embedding) VALUES (%s, %s, %s, %s)",
            ["episodes", "g1", "e1", "[" + ",".join(["0.1"] * 384) + "]"],
        )
        assert migrate(conn, schema) == 18
        row: Any = conn.execute("SELECT value FROM settings WHERE key = 'embedder_model'")
        assert row.fetchone()[0] == STOCK.family
