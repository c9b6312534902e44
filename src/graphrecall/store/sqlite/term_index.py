"""In-memory copies of the big tables' FTS5 postings (``store/lexical/postings.py``), read
from SQLite and kept current.

A copy is read once from the index itself (the ``fts5vocab`` ``instance`` table, so the
tokens are exactly FTS5's, Porter stems and all, and the ``_docsize`` shadow table for
the rows' lengths). It records the FTS5 structure record it was read at (which every
committed write to the index changes) and is used only while that record is unchanged.
Writes are caught up with, not rebuilt from scratch: triggers on each index's
``_docsize`` shadow table (``migrations.ensure_change_log``) log every row the index adds
or drops, and a search that finds the copy stale reads the rows logged since
(:func:`catch_up`) into a delta. After many writes, or when the log has been pruned past
the copy, :class:`TermIndexes` rebuilds the copy in the background, at most once per
:data:`REBUILD_GAP_FACTOR` times its last build time; full-text search meanwhile runs on
FTS5 (or on the caught-up copy).
"""

from __future__ import annotations

import json
import logging
import sqlite3
import threading
import time
from collections.abc import Callable, Sequence
from contextlib import AbstractContextManager
from pathlib import Path
from typing import Any, TypeVar

import numpy as np

from graphrecall.store.lexical.copies import TermIndexCopies
from graphrecall.store.lexical.copies import start as _start
from graphrecall.store.lexical.postings import TermIndex, segment
from graphrecall.store.sqlite import term_index_image
from graphrecall.store.sqlite.fts5 import STRUCTURE_ID, Tokenizer, column_weights, row_length
from graphrecall.store.sqlite.migrations import CHANGE_LOG

log = logging.getLogger(__name__)
_T = TypeVar("_T")

# Tables with fewer rows are searched on FTS5 alone: there it is fast enough
# (docs/search.md). The messages table keeps a copy at any size once a search re-scores
# from it (store/lexical/bm25.py).
MIN_ROWS = 2_000
# A stale copy is rebuilt no sooner than this many times its last build took after that
# build ended (and at least REBUILD_MIN_GAP_S): while a graph is being written to, the
# rebuilds cost at most ~1/(1+factor) of one core.
REBUILD_GAP_FACTOR = 4.0
REBUILD_MIN_GAP_S = 2.0
# A search catches the copy up itself when at most this many of its table's rows were
# logged as changed since it was read (each costs ~0.3 ms to read and tokenize); more,
# and a background thread catches it up while FTS5 answers.
INLINE_MAX = 100
# A copy more than this many log entries (of any table) behind is read again whole.
LOG_SCAN_MAX = 50_000


def _structure(conn: sqlite3.Connection, table: str) -> bytes:
    (cookie,) = conn.execute(
        f"SELECT block FROM {table}_fts_data WHERE id = ?", [STRUCTURE_ID]
    ).fetchone()
    return bytes(cookie)


def _log_seq(conn: sqlite3.Connection) -> int:
    """The last change-log entry's number (0 when there is none). Entries are numbered
    one up from the last, and pruning keeps the newest, so the numbers only grow."""
    row = conn.execute(f"SELECT max(seq) FROM {CHANGE_LOG}").fetchone()
    return int(row[0]) if row and row[0] is not None else 0


def build(
    path: Path, table: str, owner_field: str, weights: Sequence[float], tune: Callable[..., None]
) -> TermIndex:
    """Read ``table``'s full-text index into a :class:`TermIndex`, from one snapshot."""
    conn = sqlite3.connect(str(path), isolation_level=None)
    try:
        tune(conn)
        fts = f"{table}_fts"
        conn.execute(f"CREATE VIRTUAL TABLE temp.postings USING fts5vocab(main, {fts}, instance)")
        names = [r[1] for r in conn.execute(f"PRAGMA table_info({fts})")]
        conn.execute("BEGIN")  # one snapshot for the cookie, the sizes and the postings
        cookie, seq = _structure(conn, table), _log_seq(conn)
        codes: dict[str, int] = {}
        read = segment(
            [
                (int(r[0]), row_length(bytes(r[1])))
                for r in conn.execute(f"SELECT id, sz FROM {fts}_docsize ORDER BY id")
            ],
            conn.execute(
                f"SELECT rowid, {owner_field}, uuid FROM {table} ORDER BY rowid"
            ).fetchall(),
            conn.execute("SELECT term, doc, col FROM temp.postings"),
            column_weights(names, weights),
            codes,
        )
        conn.execute("COMMIT")
    finally:
        conn.close()
    return TermIndex.read(table, cookie, seq, read, codes)


class TooFarBehind(Exception):
    """More of a copy's rows changed than its caller would read (``catch_up``'s ``most``)."""


def _logged_since(conn: sqlite3.Connection, index: TermIndex, seq: int) -> list[int] | None:
    """The rows of ``index``'s table logged as changed since it was read, up to log entry
    ``seq``, ascending; None when that is more than LOG_SCAN_MAX entries or the log was
    pruned past the copy."""
    pending = seq - index.seq
    if pending < 0 or pending > LOG_SCAN_MAX:
        return None
    rows = conn.execute(f"SELECT tbl, row FROM {CHANGE_LOG} WHERE seq > ?", [index.seq]).fetchall()
    if len(rows) != pending:
        return None  # pruned past this copy
    return sorted({int(row) for tbl, row in rows if tbl == index.table})


def catch_up(
    index: TermIndex,
    conn: sqlite3.Connection,
    owner_field: str,
    weights: Sequence[float],
    tokenizer: Tokenizer,
    most: int | None = None,
) -> TermIndex | None:
    """``index`` brought up to date from the change log, on ``conn`` (one snapshot); None
    when the log no longer holds every change since it was read. Raises TooFarBehind when
    more than ``most`` (unless None) of its rows changed, before reading any of them."""
    table = index.table
    fts = f"{table}_fts"
    names = [r[1] for r in conn.execute(f"PRAGMA table_info({fts})")]
    conn.execute("BEGIN")
    try:
        cookie, seq = _structure(conn, table), _log_seq(conn)
        found = _logged_since(conn, index, seq)
        if found is None:
            return None
        if most is not None and len(found) > most:
            raise TooFarBehind(table)
        changed = found
        sized: list[tuple[int, bytes]] = []
        content: list[tuple[Any, ...]] = []
        if changed:
            ids = json.dumps(changed)
            sized = [
                (int(r[0]), bytes(r[1]))
                for r in conn.execute(
                    f"SELECT id, sz FROM {fts}_docsize WHERE id IN"
                    " (SELECT value FROM json_each(?)) ORDER BY id",
                    [ids],
                )
            ]
            content = [
                tuple(r)
                for r in conn.execute(
                    f"SELECT rowid, {owner_field}, uuid, {', '.join(names)} FROM {table}"
                    " WHERE rowid IN (SELECT value FROM json_each(?)) ORDER BY rowid",
                    [ids],
                )
            ]
    finally:
        conn.execute("COMMIT")
    indexed = {rowid for rowid, _ in sized}
    content = [row for row in content if row[0] in indexed]
    codes = dict(index.owner_codes)
    fresh = segment(
        [(rowid, row_length(blob)) for rowid, blob in sized],
        [(row[0], row[1], row[2]) for row in content],
        tokenizer.postings(names, [(row[0], *row[3:]) for row in content]),
        column_weights(names, weights),
        codes,
    )
    return index.changed(cookie, seq, np.asarray(changed, dtype=np.int64), fresh, codes)


Connect = Callable[[], AbstractContextManager[sqlite3.Connection | None]]


class TermIndexes(TermIndexCopies):
    """The current :class:`TermIndex` of each big full-text table, caught up with writes
    by the searches that find it stale, or rebuilt in the background."""

    def __init__(self, path: Path, tune: Callable[..., None], tokenize: str) -> None:
        super().__init__()
        self._path = path
        self._tune = tune
        # The searches' catch-ups tokenize rows here, never on the queries' tokenizer
        # (whose lock a search takes for a new query term); a background catch-up, which
        # may read thousands of rows, on a tokenizer of its own.
        self._tokenize = tokenize
        self._tokenizer = Tokenizer(tokenize)
        self._building: set[str] = set()
        self._catching: set[str] = set()
        self.logged: frozenset[str] = frozenset()  # tables whose changes are logged
        self._tried_file: set[str] = set()  # tables whose saved copy was looked for
        # Erasures per table (``forget``): a copy read before one is not saved after it
        # (it may hold erased terms); ``_file_lock`` orders the check and the write.
        self._erasures: dict[str, int] = {}
        self._file_lock = threading.Lock()

    def current(
        self,
        table: str,
        cookie: bytes,
        owner_field: str,
        weights: Sequence[float],
        connect: Connect,
    ) -> TermIndex | None:
        """The copy of ``table`` as of ``cookie`` or later: caught up here when it is
        stale by a few logged changes, else None (and a background thread catches it up,
        or rebuilds it)."""
        index = self._current.get(table)
        if index is not None and index.cookie == cookie:
            return index
        if index is None or table not in self.logged:
            self.refresh(table, owner_field, weights)
            return None
        with self._lock:
            if table in self._catching or self._closed:
                return None  # being caught up: FTS5 answers this search
            self._catching.add(table)
        apart = False
        fresh = None
        try:
            with connect() as conn:
                if conn is None:
                    return None
                fresh = catch_up(index, conn, owner_field, weights, self._tokenizer, INLINE_MAX)
        except TooFarBehind:
            name = f"term-index-catch-up-{table}"
            _start(name, self._catch_up_apart, index, owner_field, tuple(weights))
            apart = True  # the thread lets go of the table
            return None
        except Exception:  # a cache: the search goes on with FTS5
            log.exception("term index of %s not caught up", table)
        finally:
            if not apart:
                with self._lock:
                    self._catching.discard(table)
        return self._adopt(index, fresh, owner_field, weights)

    def _catch_up_apart(self, index: TermIndex, owner_field: str, weights: Sequence[float]) -> None:
        fresh = None
        try:
            conn = sqlite3.connect(str(self._path), isolation_level=None)
            try:
                self._tune(conn, read_only=True)
                tokenizer = Tokenizer(self._tokenize)
                try:
                    fresh = catch_up(index, conn, owner_field, weights, tokenizer)
                finally:
                    tokenizer.close()
            finally:
                conn.close()
        except Exception:
            log.exception("term index of %s not caught up", index.table)
        finally:
            with self._lock:
                self._catching.discard(index.table)
        self._adopt(index, fresh, owner_field, weights)

    def refresh(self, table: str, owner_field: str, weights: Sequence[float]) -> None:
        """Start rebuilding ``table``'s copy in the background, unless one is being built
        or the last build ended too recently."""
        with self._lock:
            if self._closed or table in self._building:
                return
            if time.monotonic() < self._next_build.get(table, 0.0):
                return
            self._building.add(table)
            if table not in self._tried_file:
                self._loading_saved.add(table)
        _start(f"term-index-{table}", self._build, table, owner_field, tuple(weights))

    def forget(self, tables: Sequence[str]) -> list[str]:
        """Delete the saved copies of ``tables``, whose deleted rows' terms they may hold,
        and keep a read already under way from saving one; the tables whose file was
        removed. (A copy in memory is caught up as after any write.)"""
        removed = []
        with self._file_lock:
            for table in tables:
                self._erasures[table] = self._erasures.get(table, 0) + 1
                if term_index_image.remove(self._path, table):
                    removed.append(table)
        return removed

    def _build(self, table: str, owner_field: str, weights: Sequence[float]) -> None:
        started = time.monotonic()
        erasures = self._erasures.get(table, 0)
        index = None
        read_whole = False
        try:
            if table not in self._tried_file:
                # Once per process: the copy saved by the last one, caught up from the
                # change log by the searches that find it stale (or read again whole).
                self._tried_file.add(table)
                try:
                    index = self._with_conn(
                        lambda conn: term_index_image.load(
                            self._path, conn, table, owner_field, weights
                        )
                    )
                finally:
                    with self._lock:
                        self._loading_saved.discard(table)
                        if index is not None and not self._closed:
                            self._current[table] = index
            if index is None:
                index = build(self._path, table, owner_field, weights, self._tune)
                read_whole = True
        except Exception:  # a cache: searches go on with FTS5
            log.exception("term index of %s not built", table)
            index = None
        took = time.monotonic() - started
        with self._lock:
            self._next_build[table] = time.monotonic() + max(
                REBUILD_MIN_GAP_S, REBUILD_GAP_FACTOR * took
            )
            if index is not None and not self._closed:
                self._current[table] = index  # searches use it while it is saved
                log.info("term index of %s: %d rows in %.2f s", table, index.rows, took)
        try:
            if index is not None and read_whole and not self._closed:
                saved = index
                with self._file_lock:
                    if self._erasures.get(table, 0) == erasures:
                        self._with_conn(
                            lambda conn: term_index_image.save(
                                self._path, conn, saved, owner_field, weights
                            )
                        )
        except Exception:  # the next start reads the index whole again
            log.warning("term index of %s not saved", table, exc_info=True)
        finally:
            # Still "building" until saved: whoever waits for the builds (a benchmark
            # about to stop the server, a test) waits for the file too.
            with self._lock:
                self._building.discard(table)

    def _with_conn(self, work: Callable[[sqlite3.Connection], _T]) -> _T:
        conn = sqlite3.connect(str(self._path), isolation_level=None)
        try:
            self._tune(conn)
            return work(conn)
        finally:
            conn.close()

    def _apart(self) -> set[str]:
        return self._building | self._catching

    def close(self) -> None:
        super().close()
        self._tokenizer.close()
