"""The connection pool, and transactions that nest by joining the outer one.

Write transactions are serialised per schema by a transaction-level advisory lock, as
SQLite's are by its write lock: the store's writes touch shared rows (the lexical
statistics, an episode's neighbours), and two processes taking those row locks in
different orders would deadlock (PostgreSQL then aborts one: a failed ingestion task or
a 500). Reads never wait for it; work outside transactions (extraction, embedding)
still runs in parallel across workers. Finer locking (per tenant) is a later step.

``postgresql://...?schema=NAME`` keeps the store's tables in schema NAME (created on
open); the extensions stay in ``public``, which follows it on the search path. The
``schema`` parameter is the store's own and is removed before psycopg sees the URL.
"""

from __future__ import annotations

import hashlib
import re
import threading
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import Any
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

import psycopg
from psycopg.rows import dict_row
from psycopg_pool import ConnectionPool

from graphrecall.domain.errors import BadRequest
from graphrecall.store.location import shown

POOL_MAX = 8
# Collations that classify characters by Unicode (regex \w, case folding), best first.
UNICODE_COLLATIONS = ("pg_c_utf8", "C.utf8")
_SCHEMA = re.compile(r"^[a-z_][a-z0-9_]{0,62}$")


class ServerProblem(RuntimeError):
    """The server at a URL cannot hold a store; the message says why and what to do."""


_NO_DOCKER = "pip install 'graphrecall[postgres]' && graphrecall postgres start"


def check_server(url: str) -> None:
    """One short connection that tells the problems a user meets first, each in one
    line: no server listening, a refused login or database, no pgvector or ltree."""
    conninfo, _ = split_schema(url)
    where = shown(url)
    try:
        with psycopg.connect(conninfo, connect_timeout=10, autocommit=True) as conn:
            rows = conn.execute(
                "SELECT name FROM pg_available_extensions WHERE name IN ('vector', 'ltree')"
            ).fetchall()
    except psycopg.OperationalError as exc:
        text = str(exc)
        reason = " ".join(line.strip() for line in text.splitlines() if line.strip())
        if "refused" in text or "No such file or directory" in text:
            raise ServerProblem(
                f"cannot connect to PostgreSQL at {where}: nothing listens there (is the"
                f" server running?). A local one with pgvector and no Docker: {_NO_DOCKER}"
            ) from None
        raise ServerProblem(f"cannot connect to PostgreSQL at {where}: {reason}") from None
    available = {r[0] for r in rows}
    if "vector" not in available:
        raise ServerProblem(
            f"the PostgreSQL server at {where} has no pgvector extension: install pgvector"
            " >= 0.7 on it (Debian/Ubuntu: postgresql-NN-pgvector from the PostgreSQL apt"
            f" repository), or use a server that has it: {_NO_DOCKER}"
        )
    if "ltree" not in available:
        raise ServerProblem(
            f"the PostgreSQL server at {where} has no ltree extension: install PostgreSQL's"
            " contrib modules on it (postgresql-contrib)"
        )


def split_schema(url: str) -> tuple[str, str]:
    """(the URL psycopg connects to, the schema the store's tables live in)."""
    parts = urlsplit(url)
    query = parse_qsl(parts.query, keep_blank_values=True)
    schema = "public"
    kept = []
    for key, value in query:
        if key == "schema":
            schema = value
        else:
            kept.append((key, value))
    if not _SCHEMA.match(schema):
        raise ValueError(f"schema {schema!r} is not a plain lower-case SQL identifier")
    scheme = "postgresql" if parts.scheme == "postgres" else parts.scheme
    return urlunsplit((scheme, parts.netloc, parts.path, urlencode(kept), "")), schema


class Database:
    def __init__(self, url: str) -> None:
        self.url, self.schema = split_schema(url)
        self._local = threading.local()
        self.text_collation = "C"
        digest = hashlib.sha256(f"graphrecall write {self.schema}".encode()).digest()
        self._write_lock = int.from_bytes(digest[:8], "big", signed=True)
        self.pool = ConnectionPool(
            self.url,
            min_size=1,
            max_size=POOL_MAX,
            kwargs={"autocommit": True, "row_factory": dict_row},
            configure=self._configure,
            open=False,
        )

    def _configure(self, conn: psycopg.Connection[Any]) -> None:
        conn.execute(f"SET search_path TO {self.schema}, public")

    def open(self) -> None:
        self.pool.open(wait=True, timeout=30.0)
        found = {
            r["collname"]
            for r in self.query(
                "SELECT collname FROM pg_collation WHERE collname = ANY(%s)"
                " AND collencoding IN (-1, pg_char_to_encoding('UTF8'))",
                [list(UNICODE_COLLATIONS)],
            )
        }
        self.text_collation = next((c for c in UNICODE_COLLATIONS if c in found), "C")

    def close(self) -> None:
        self.pool.close()

    def in_transaction(self) -> bool:
        return getattr(self._local, "conn", None) is not None

    @contextmanager
    def transaction(self) -> Iterator[None]:
        """One write transaction on one pooled connection, holding the write lock; a
        nested block joins it (no savepoints: a caught inner error keeps the inner
        writes, as on SQLite)."""
        if self.in_transaction():
            yield
            return
        with self.pool.connection() as conn, conn.transaction():
            conn.execute("SELECT pg_advisory_xact_lock(%s)", [self._write_lock])
            self._local.conn = conn
            try:
                yield
            finally:
                self._local.conn = None

    @contextmanager
    def connection(self) -> Iterator[psycopg.Connection[Any]]:
        """The calling thread's transaction's connection, else a pooled one (autocommit).

        A caller's pattern that PostgreSQL still refuses (domain/safe_regex.py refuses
        what is known beforehand; "too complex" is PostgreSQL's own judgement) is a
        :class:`BadRequest`, not a server error."""
        try:
            current = getattr(self._local, "conn", None)
            if current is not None:
                yield current
                return
            with self.pool.connection() as conn:
                yield conn
        except psycopg.errors.InvalidRegularExpression as exc:
            reason = str(exc).splitlines()[0] if str(exc) else "invalid regular expression"
            raise BadRequest(f"PostgreSQL cannot run this pattern: {reason}") from None

    def query(self, sql: str, params: Sequence[Any] = ()) -> list[dict[str, Any]]:
        with self.connection() as conn:
            return conn.execute(sql, list(params)).fetchall()

    def execute(self, sql: str, params: Sequence[Any] = ()) -> int:
        with self.connection() as conn:
            return conn.execute(sql, list(params)).rowcount

    def executemany(self, sql: str, rows: Sequence[Sequence[Any]]) -> None:
        if rows:
            with self.connection() as conn, conn.cursor() as cur:
                cur.executemany(sql, rows)
