"""The SQLite database of one store: its connections, its transactions, its read pool.

One connection guarded by a re-entrant lock takes every write (and a transaction's
reads); WAL mode keeps readers of other processes unblocked. Every write runs inside
:meth:`Database.transaction` so a failure leaves nothing half-written. Reads outside a
transaction run on pooled read-only connections, so that several can run at once (each
scope of a get_context, each leg of a search).
"""

from __future__ import annotations

import queue
import sqlite3
import threading
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any, cast

from graphrecall.store.sqlite import pattern_workers
from graphrecall.store.sqlite.migrations import ensure_change_log, migrate
from graphrecall.store.sqlite.pragmas import tune
from graphrecall.store.sqlite.predicates import register_functions

# Read-only connections reads may run on at once (see Database.read).
READ_POOL_MAX = 8


class Database:
    """One SQLite file, migrated on open."""

    def __init__(self, path: Path) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        self.path = path
        self.resolved = path.resolve()
        self.conn = sqlite3.connect(str(path), check_same_thread=False, isolation_level=None)
        self.conn.row_factory = sqlite3.Row
        self.conn.execute("PRAGMA journal_mode=WAL")
        self.conn.execute("PRAGMA synchronous=NORMAL")
        self.conn.execute("PRAGMA foreign_keys=ON")
        # A deleted row's bytes are overwritten with zeros in its page (and a page freed
        # whole is zeroed), so deleted text leaves the file once its WAL frames are
        # checkpointed (docs/security.md, "Deletion"). Only this connection writes.
        self.conn.execute("PRAGMA secure_delete=ON")
        tune(self.conn)
        self.lock = threading.RLock()
        self._depth = 0
        self._owner: int | None = None
        # Called when a transaction is rolled back: caches that may have seen its writes.
        self._on_rollback: list[Callable[[], None]] = []
        register_functions(self.conn)
        with self.lock:
            migrate(self.conn)
            # The tables whose full-text changes are logged (term_index.py).
            self.logged_text_tables = ensure_change_log(self.conn)
        # A second, read-only connection for the vector matrices: in WAL mode it reads
        # without waiting for the main connection, so the vector leg runs while the lexical
        # leg's query holds another.
        self.reader = sqlite3.connect(str(path), check_same_thread=False, isolation_level=None)
        tune(self.reader, read_only=True)
        self.reader_lock = threading.Lock()
        self._read_pool: queue.SimpleQueue[sqlite3.Connection] = queue.SimpleQueue()
        self._read_opened = 0
        self._read_pool_lock = threading.Lock()
        self._closed = False

    def on_rollback(self, callback: Callable[[], None]) -> None:
        self._on_rollback.append(callback)

    def close(self) -> None:
        with self.lock, self.reader_lock, self._read_pool_lock:
            self._closed = True
            while True:
                try:
                    self._read_pool.get_nowait().close()
                except queue.Empty:
                    break
            self.reader.close()
            self.conn.close()

    @contextmanager
    def transaction(self) -> Iterator[None]:
        with self.lock:
            if self._depth:
                self._depth += 1
                try:
                    yield
                finally:
                    self._depth -= 1
                return
            self.conn.execute("BEGIN IMMEDIATE")
            self._depth = 1
            self._owner = threading.get_ident()
            try:
                yield
            except BaseException:
                self._depth, self._owner = 0, None
                for callback in self._on_rollback:
                    callback()
                self.conn.execute("ROLLBACK")
                raise
            self._depth, self._owner = 0, None
            self.conn.execute("COMMIT")

    def in_transaction(self) -> bool:
        return self._depth > 0 and self._owner == threading.get_ident()

    def query(self, sql: str, params: Sequence[Any] = ()) -> list[sqlite3.Row]:
        """A statement on the main connection (a transaction's own reads and writes)."""
        if (rows := self._in_worker(sql, params)) is not None:
            return rows
        with self.lock:
            return self.conn.execute(sql, params).fetchall()

    def execute(self, sql: str, params: Sequence[Any] = ()) -> int:
        """A write on the main connection; how many rows it changed."""
        with self.lock:
            return self.conn.execute(sql, params).rowcount

    def read(self, sql: str, params: Sequence[Any] = ()) -> list[sqlite3.Row]:
        """A read that runs beside other threads' reads, on a pooled read-only connection:
        committed data (WAL), without waiting for the main connection. A thread inside a
        transaction reads on the main connection, to see its own writes."""
        if self.in_transaction():
            return self.query(sql, params)
        if (rows := self._in_worker(sql, params)) is not None:
            return rows
        conn = self.checkout()
        if conn is None:  # the pool is at its limit
            return self.query(sql, params)
        try:
            return conn.execute(sql, params).fetchall()
        finally:
            self._read_pool.put(conn)

    def _in_worker(self, sql: str, params: Sequence[Any]) -> list[sqlite3.Row] | None:
        """The rows of a read that tests patterns row by row, from a worker process
        (``pattern_workers.py``: off this process's interpreter lock); None when it runs
        here (a transaction's read sees its own writes; workers off; a worker died)."""
        workers = pattern_workers.WORKERS_OF_PROCESS
        if not workers.enabled or self.in_transaction() or not pattern_workers.wants_worker(sql):
            return None
        return cast(list[sqlite3.Row] | None, workers.run(self.resolved, sql, params))

    def checkout(self) -> sqlite3.Connection | None:
        """A pooled read-only connection (None when the pool is at its limit); give it
        back with :meth:`checkin`."""
        try:
            return self._read_pool.get_nowait()
        except queue.Empty:
            pass
        with self._read_pool_lock:
            if self._closed or self._read_opened >= READ_POOL_MAX:
                return None
            self._read_opened += 1
        conn = sqlite3.connect(str(self.path), check_same_thread=False, isolation_level=None)
        conn.row_factory = sqlite3.Row
        tune(conn, read_only=True)
        register_functions(conn)
        return conn

    def checkin(self, conn: sqlite3.Connection) -> None:
        self._read_pool.put(conn)

    @contextmanager
    def pooled(self) -> Iterator[sqlite3.Connection | None]:
        """A pooled read-only connection for the caller's own transaction (None when the
        pool is at its limit)."""
        conn = self.checkout()
        try:
            yield conn
        finally:
            if conn is not None:
                self._read_pool.put(conn)
