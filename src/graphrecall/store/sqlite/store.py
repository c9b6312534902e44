"""SQLite implementation of :class:`graphrecall.store.base.Store`.

One connection guarded by a re-entrant lock serves the API threads and the worker;
WAL mode keeps readers of other processes unblocked. Every write runs inside
``transaction()`` so a failure leaves nothing half-written.
"""

from __future__ import annotations

import base64
import binascii
import json
import logging
import math
import queue
import sqlite3
import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from datetime import timedelta
from functools import partial
from pathlib import Path
from typing import Any, get_args

import numpy as np
import numpy.typing as npt

from graphrecall.domain import clock
from graphrecall.domain.errors import BadRequest
from graphrecall.domain.models import (
    ApiKey,
    ContextTemplate,
    Edge,
    Episode,
    Graph,
    Memory,
    MemoryEvent,
    Node,
    Observation,
    Ontology,
    Page,
    PageRequest,
    Project,
    Record,
    Space,
    Task,
    Thread,
    ThreadSummary,
    User,
)
from graphrecall.domain.predicates import Predicate
from graphrecall.store.adjacency import Adjacency
from graphrecall.store.base import STANDARD_BM25, Bm25, R, Scope, Store, Vector
from graphrecall.store.sqlite import bm25 as bm25_scores
from graphrecall.store.sqlite import fulltext, term_index
from graphrecall.store.sqlite import queue as task_queue
from graphrecall.store.sqlite.filter_columns import Columns, FilterColumns, covers
from graphrecall.store.sqlite.migrations import (
    CHANGE_LOG,
    FTS_COLUMN_WEIGHTS,
    FTS_TABLES,
    FTS_TOKENIZE,
    ROW_LOG,
    ensure_change_log,
    migrate,
)
from graphrecall.store.sqlite.predicates import Compiler, bounded, register_functions
from graphrecall.store.sqlite.term_index import TermIndex, TermIndexes, Tokenizer, column_weights
from graphrecall.store.sqlite.vector_index import VectorIndexes

log = logging.getLogger(__name__)

TABLES: dict[type[Record], str] = {
    Project: "projects",
    ApiKey: "api_keys",
    User: "users",
    Graph: "graphs",
    Thread: "threads",
    Episode: "episodes",
    Node: "nodes",
    Edge: "edges",
    Observation: "observations",
    ThreadSummary: "thread_summaries",
    Task: "tasks",
    Space: "spaces",
    Memory: "memories",
    MemoryEvent: "memory_events",
    Ontology: "ontologies",
    ContextTemplate: "context_templates",
}
# How long a table's cached row count, and a term's count of matching rows, are trusted
# (see ``_row_count``, ``_term_rows``), and how many term counts are kept.
ROW_COUNT_TTL_S = 30.0
TERM_COUNTS_MAX = 50_000
# Read-only connections full-text searches may run on at once (see SQLiteStore._read).
READ_POOL_MAX = 8
# Every connection reads the database through a memory map of up to this many bytes
# (SQLite caps it at its build's limit, 2 GiB by default): a page is read in place
# instead of copied in by a system call. The lexical leg at 100k facts (200 questions,
# best of two): facts p50 / p95 11.4-12.4 / 27.9-30.7 -> 9.9-10.6 / 23.2-25.7 ms,
# messages 21.3-21.7 / 56.5-61.7 -> 17.4-18.0 / 53.8-54.2 ms.
MMAP_BYTES = 1 << 31
# The in-memory term index (term_index.py) checks at most this many of its best rows
# against a search's filters before it leaves the search to FTS5, which filters as it
# ranks (a filter that few of the best rows pass, such as a narrow time window).
TERM_INDEX_CHECK_MAX = 5_000
# How many graphs' adjacency arrays are kept in memory (least recently used go first).
ADJACENCY_CACHE_GRAPHS = 64
# Logged vector writes per owner beyond which the next read reloads the matrix instead.
VECTOR_LOG_MAX = 20_000
# A filtered search over an HNSW index checks this many nearest rows against the filter.
POST_FILTER_FETCH = 1_000
POST_FILTER_FETCH_MAX = 20_000
# Full-text index compaction (``compact_text_indexes``): pages merged per step (4 KB
# each; ~0.1 s), and how much a table must grow before its index is merged again.
COMPACT_PAGES = 500
COMPACT_GROWTH = 0.1
COMPACT_MIN_ROWS = 1_000
# The full-text change log keeps its newest CHANGE_LOG_KEEP entries (a copy further
# behind is read again whole anyway); it is pruned by compaction once it holds twice as
# many.
CHANGE_LOG_KEEP = term_index.LOG_SCAN_MAX
JSON_FIELDS = frozenset({"metadata", "attributes", "labels", "payload", "result", "error", "data"})
JSON_FIELDS |= {"meta", "actor"}  # memories, memory events
# The tenant column of record kinds not owned by a graph (embeddings are kept per owner).
OWNER_FIELDS: dict[type[Record], str] = {Memory: "space_uuid"}
BOOL_FIELDS = frozenset({"processed", "disable_default_ontology"})
# Sort keys kept in a column that is no model field: a node's degree, kept by triggers
# on edges (migration 11) and read in order from nodes_degree (graph_uuid, degree, uuid).
# Counting each node's edges to sort them took 0.3 s a page at 100k facts.
COLUMN_SORTS: dict[type[Record], frozenset[str]] = {Node: frozenset({"degree"})}


def _tune(conn: sqlite3.Connection, *, read_only: bool = False) -> None:
    """The settings every connection shares: wait for a writer, read through the memory
    map; a read-only one refuses writes."""
    conn.execute("PRAGMA busy_timeout=10000")
    conn.execute(f"PRAGMA mmap_size={MMAP_BYTES}")
    if read_only:
        conn.execute("PRAGMA query_only=1")


class SQLiteStore(Store):
    def __init__(self, path: Path) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        self.path = path
        self._conn = sqlite3.connect(str(path), check_same_thread=False, isolation_level=None)
        self._conn.row_factory = sqlite3.Row
        self._conn.execute("PRAGMA journal_mode=WAL")
        self._conn.execute("PRAGMA synchronous=NORMAL")
        self._conn.execute("PRAGMA foreign_keys=ON")
        _tune(self._conn)
        self._lock = threading.RLock()
        self._depth = 0
        self._owner: int | None = None
        self._matrices: dict[
            tuple[str, str], tuple[int, list[str], dict[str, int], npt.NDArray[np.float32]]
        ] = {}
        # Row counts of tables (term "") and of a term's matches, with when each was read.
        self._counts: OrderedDict[tuple[str, str], tuple[float, int]] = OrderedDict()
        self._counts_lock = threading.Lock()
        self._ann = VectorIndexes()
        # Vectors this process wrote, by (table, owner) and the version each write produced:
        # a cached matrix catches up from here instead of reloading (see _matrix).
        self._vector_log: dict[tuple[str, str], list[tuple[int, list[tuple[str, bytes]]]]] = {}
        self._vector_log_lock = threading.Lock()
        # Adjacency per graph, valid while its edge version is unchanged (see _edges_changed).
        self._adjacency: OrderedDict[str, tuple[tuple[int, int, int], Adjacency]] = OrderedDict()
        self._edge_versions: dict[str, int] = {}
        self._all_edges_version = 0
        # In-memory filter columns of big owners (filter_columns.py).
        self._filter_columns = FilterColumns(self._read)
        register_functions(self._conn)
        with self._lock:
            migrate(self._conn)
            logged = ensure_change_log(self._conn)
        # A second, read-only connection for the vector matrices: in WAL mode it reads
        # without waiting for the main connection, so the vector leg runs while the lexical
        # leg's FTS query holds the main one.
        self._reader = sqlite3.connect(str(path), check_same_thread=False, isolation_level=None)
        _tune(self._reader, read_only=True)
        self._reader_lock = threading.Lock()
        # Read-only connections for full-text searches, so that several can run at once
        # (each scope of a get_context, each leg of a search): the main connection takes
        # one statement at a time. Opened on demand, at most READ_POOL_MAX.
        self._read_pool: queue.SimpleQueue[sqlite3.Connection] = queue.SimpleQueue()
        self._read_opened = 0
        self._read_pool_lock = threading.Lock()
        # In-memory copies of the big tables' full-text postings (term_index.py).
        self._tokenizer = Tokenizer(FTS_TOKENIZE)
        self._fts_weights: dict[str, dict[str, float]] = {}
        self._term_indexes = TermIndexes(path, _tune, FTS_TOKENIZE)
        self._term_indexes.logged = logged
        self._closed = False

    # -- lifecycle -------------------------------------------------------------------
    def close(self) -> None:
        self._ann.close()
        self._filter_columns.close()
        self._term_indexes.close()
        self._tokenizer.close()
        with self._lock, self._reader_lock, self._read_pool_lock:
            self._closed = True
            while True:
                try:
                    self._read_pool.get_nowait().close()
                except queue.Empty:
                    break
            self._reader.close()
            self._conn.close()

    @contextmanager
    def transaction(self) -> Iterator[None]:
        with self._lock:
            if self._depth:
                self._depth += 1
                try:
                    yield
                finally:
                    self._depth -= 1
                return
            self._conn.execute("BEGIN IMMEDIATE")
            self._depth = 1
            self._owner = threading.get_ident()
            try:
                yield
            except BaseException:
                self._depth, self._owner = 0, None
                self._all_edges_version += 1  # a cache may have seen the undone writes
                with self._vector_log_lock:
                    self._vector_log.clear()  # it may hold vectors that were never committed
                self._conn.execute("ROLLBACK")
                raise
            self._depth, self._owner = 0, None
            self._conn.execute("COMMIT")

    def vector_index_status(self) -> dict[str, int]:
        return self._ann.status()

    def text_index_status(self) -> dict[str, int]:
        return self._term_indexes.status()

    def in_transaction(self) -> bool:
        return self._depth > 0 and self._owner == threading.get_ident()

    def _query(self, sql: str, params: Sequence[Any] = ()) -> list[sqlite3.Row]:
        with self._lock:
            return self._conn.execute(sql, params).fetchall()

    def _read(self, sql: str, params: Sequence[Any] = ()) -> list[sqlite3.Row]:
        """A read that runs beside other threads' reads, on a pooled read-only connection:
        committed data (WAL), without waiting for the main connection. A thread inside a
        transaction reads on the main connection, to see its own writes."""
        if self.in_transaction():
            return self._query(sql, params)
        conn = self._checkout()
        if conn is None:  # the pool is at its limit
            return self._query(sql, params)
        try:
            return conn.execute(sql, params).fetchall()
        finally:
            self._read_pool.put(conn)

    def _checkout(self) -> sqlite3.Connection | None:
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
        _tune(conn, read_only=True)
        register_functions(conn)
        return conn

    # -- row mapping -----------------------------------------------------------------
    @staticmethod
    def _table(kind: type[Record]) -> str:
        return TABLES[kind]

    @staticmethod
    def _columns(kind: type[Record]) -> list[str]:
        return list(kind.model_fields)

    @staticmethod
    def _to_row(record: Record) -> dict[str, Any]:
        row: dict[str, Any] = {}
        for name in type(record).model_fields:
            value = getattr(record, name)
            if name in JSON_FIELDS and value is not None:
                value = json.dumps(value, separators=(",", ":"))
            elif name in BOOL_FIELDS and value is not None:
                value = int(value)
            row[name] = value
        return row

    @staticmethod
    def _from_row(kind: type[R], row: sqlite3.Row) -> R:
        data: dict[str, Any] = {}
        for name in kind.model_fields:
            value = row[name]
            if name in JSON_FIELDS and value is not None:
                value = json.loads(value)
            elif name in BOOL_FIELDS and value is not None:
                value = bool(value)
            data[name] = value
        return kind.model_validate(data)

    def _where(
        self, kind: type[Record], scope: Scope, where: Predicate | None = None
    ) -> tuple[str, list[Any]]:
        sql, params = self._scope(kind, scope)
        if where is not None:
            pred_sql, pred_params = Compiler(TABLES[kind], frozenset(kind.model_fields)).compile(
                where
            )
            sql = f"{sql} AND {pred_sql}"
            params += pred_params
        return sql, params

    def _scope(self, kind: type[Record], scope: Scope) -> tuple[str, list[Any]]:
        columns = kind.model_fields
        clauses: list[str] = []
        params: list[Any] = []
        for key, value in scope.items():
            if key not in columns:
                raise ValueError(f"{kind.__name__} has no field {key!r}")
            if value is None:
                clauses.append(f"t.{key} IS NULL")
            elif isinstance(value, list | tuple | set | frozenset):
                values = list(value)
                if not values:
                    clauses.append("0")
                    continue
                clauses.append(f"t.{key} IN ({','.join('?' * len(values))})")
                params.extend(values)
            else:
                clauses.append(f"t.{key} = ?")
                params.append(int(value) if isinstance(value, bool) else value)
        return (" AND ".join(clauses) or "1"), params

    # -- records ---------------------------------------------------------------------
    def insert(self, records: Sequence[Record]) -> None:
        with self.transaction():
            self._edges_changed(records)
            for record in records:
                row = self._to_row(record)
                cols = ",".join(row)
                marks = ",".join("?" * len(row))
                self._conn.execute(
                    f"INSERT INTO {self._table(type(record))} ({cols}) VALUES ({marks})",
                    list(row.values()),
                )

    def update(self, record: Record) -> None:
        row = self._to_row(record)
        uuid = row.pop("uuid")
        assignments = ",".join(f"{col} = ?" for col in row)
        with self.transaction():
            self._edges_changed([record])
            self._conn.execute(
                f"UPDATE {self._table(type(record))} SET {assignments} WHERE uuid = ?",
                [*row.values(), uuid],
            )

    def get(self, kind: type[R], uuid: str, scope: Scope | None = None) -> R | None:
        where, params = self._where(kind, {**(scope or {}), "uuid": uuid})
        rows = self._query(f"SELECT * FROM {self._table(kind)} t WHERE {where}", params)
        return self._from_row(kind, rows[0]) if rows else None

    def find(
        self,
        kind: type[R],
        scope: Scope,
        *,
        where: Predicate | None = None,
        order_by: str = "uuid",
        limit: int | None = None,
        descending: bool = False,
    ) -> list[R]:
        if order_by not in kind.model_fields:
            raise ValueError(f"cannot order {kind.__name__} by {order_by!r}")
        sql_where, params = self._where(kind, scope, where)
        sql = f"SELECT * FROM {self._table(kind)} t WHERE {sql_where}"
        if limit is None:
            # Every match is returned, so sort here: an ORDER BY lets the planner walk the
            # (graph_uuid, uuid) index to skip the sort, scanning a whole graph's edges
            # when an equality index would find the few matches (25 ms at 100k facts).
            rows = self._query(sql, params)
            rows.sort(key=lambda r: (r[order_by] is not None, r[order_by], r["uuid"]))
            if descending:
                rows.reverse()
            return [self._from_row(kind, row) for row in rows]
        d = " DESC" if descending else ""
        sql += f" ORDER BY t.{order_by}{d}, t.uuid{d} LIMIT {int(limit)}"
        return [self._from_row(kind, row) for row in self._query(sql, params)]

    def count(self, kind: type[R], scope: Scope, where: Predicate | None = None) -> int:
        sql_where, params = self._where(kind, scope, where)
        rows = self._query(f"SELECT COUNT(*) FROM {self._table(kind)} t WHERE {sql_where}", params)
        return int(rows[0][0])

    def matching(
        self, kind: type[Record], scope: Scope, uuids: Sequence[str], where: Predicate
    ) -> set[str]:
        sql_where, params = self._where(kind, scope, where)
        return self._passing(kind, sql_where, params, uuids)

    def count_by(
        self, kind: type[R], field: str, scope: Scope, where: Predicate | None = None
    ) -> dict[Any, int]:
        if field not in kind.model_fields:
            raise ValueError(f"{kind.__name__} has no field {field!r}")
        sql_where, params = self._where(kind, scope, where)
        rows = self._query(
            f"SELECT t.{field}, COUNT(*) FROM {self._table(kind)} t WHERE {sql_where}"
            f" GROUP BY t.{field}",
            params,
        )
        return {r[0]: int(r[1]) for r in rows}

    def delete(self, kind: type[R], scope: Scope) -> int:
        where, params = self._where(kind, scope)
        table = self._table(kind)
        with self.transaction():
            self._all_edges_version += 1  # deleting any record may cascade to edges
            uuids = [
                r[0]
                for r in self._conn.execute(f"SELECT uuid FROM {table} t WHERE {where}", params)
            ]
            for start in range(0, len(uuids), 500):
                chunk = uuids[start : start + 500]
                marks = ",".join("?" * len(chunk))
                self._conn.execute(f"DELETE FROM {table} WHERE uuid IN ({marks})", chunk)
                self._conn.execute(
                    f"DELETE FROM embeddings WHERE kind = ? AND uuid IN ({marks})",
                    [table, *chunk],
                )
                self._conn.execute(
                    f"DELETE FROM links WHERE kind = ? AND uuid IN ({marks})", [table, *chunk]
                )
                if kind is Episode:
                    self._conn.execute(f"DELETE FROM links WHERE episode_uuid IN ({marks})", chunk)
            if uuids:
                self._bump_vectors(table)
        return len(uuids)

    def list_page(
        self,
        kind: type[R],
        scope: Scope,
        page: PageRequest,
        *,
        search: str | None = None,
        search_fields: Sequence[str] = (),
        where: Predicate | None = None,
    ) -> Page[R]:
        if page.order_by in COLUMN_SORTS.get(kind, ()):
            sort_expr = f"t.{page.order_by}"
        elif page.order_by in kind.model_fields:
            # COALESCE only where NULLs can occur: an expression is something no index
            # can order by (listing a 100k-fact graph by uuid: 130 ms sorted, 0.2 ms read
            # in index order).
            nullable = type(None) in get_args(kind.model_fields[page.order_by].annotation)
            column = f"t.{page.order_by}"
            sort_expr = f"COALESCE({column}, '')" if nullable else column
        else:
            raise BadRequest(f"cannot order by {page.order_by!r}", param="order_by")
        sql_where, params = self._where(kind, scope, where)
        if search:
            like = "%" + search.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_") + "%"
            ors = " OR ".join(f"t.{f} LIKE ? ESCAPE '\\'" for f in search_fields)
            sql_where += f" AND ({ors})"
            params += [like] * len(search_fields)
        table = self._table(kind)
        total = int(self._query(f"SELECT COUNT(*) FROM {table} t WHERE {sql_where}", params)[0][0])
        direction = "DESC" if page.order == "desc" else "ASC"
        keyset = ""
        key_params: list[Any] = []
        if page.cursor:
            last_key, last_uuid = _decode_cursor(page.cursor, page)
            op = "<" if page.order == "desc" else ">"
            keyset = f" AND ({sort_expr}, t.uuid) {op} (?, ?)"
            key_params = [last_key, last_uuid]
        sql = (
            f"SELECT t.*, {sort_expr} AS _sort FROM {table} t WHERE {sql_where}{keyset}"
            f" ORDER BY {sort_expr} {direction}, t.uuid {direction}"
            f" LIMIT {page.page_size + 1}"
        )
        rows = self._query(sql, [*params, *key_params])
        more = len(rows) > page.page_size
        rows = rows[: page.page_size]
        items = [self._from_row(kind, row) for row in rows]
        next_cursor = _encode_cursor(page, rows[-1]["_sort"], rows[-1]["uuid"]) if more else None
        return Page[R](items=items, next_cursor=next_cursor, total_size=total)

    def nodes_named(self, graph_uuid: str, name: str) -> list[Node]:
        rows = self._query(
            "SELECT * FROM nodes t WHERE graph_uuid = ? AND name = ? COLLATE NOCASE"
            " ORDER BY created_at, uuid",
            [graph_uuid, name],
        )
        return [self._from_row(Node, row) for row in rows]

    def adjacency(self, graph_uuid: str, node_uuids: Sequence[str]) -> list[tuple[str, str, str]]:
        found: dict[str, tuple[str, str, str]] = {}
        for start in range(0, len(node_uuids), 500):
            chunk = list(node_uuids[start : start + 500])
            marks = ",".join("?" * len(chunk))
            for column in ("source_node_uuid", "target_node_uuid"):
                for uuid, source, target in self._query(
                    "SELECT uuid, source_node_uuid, target_node_uuid FROM edges"
                    f" WHERE graph_uuid = ? AND expired_at IS NULL AND {column} IN ({marks})",
                    [graph_uuid, *chunk],
                ):
                    found[uuid] = (uuid, source, target)
        return list(found.values())

    def graph_adjacency(self, graph_uuid: str) -> Adjacency:
        with self._lock:
            # data_version moves when another process commits to the database.
            external = int(self._conn.execute("PRAGMA data_version").fetchone()[0])
            version = (self._edge_versions.get(graph_uuid, 0), self._all_edges_version, external)
            cached = self._adjacency.get(graph_uuid)
            if cached is not None and cached[0] == version:
                self._adjacency.move_to_end(graph_uuid)
                return cached[1]
            ends = self._conn.execute(
                "SELECT source_node_uuid, target_node_uuid FROM edges"
                " WHERE graph_uuid = ? AND expired_at IS NULL",
                [graph_uuid],
            ).fetchall()
            built = Adjacency.from_edges(ends)
            self._adjacency[graph_uuid] = (version, built)
            while len(self._adjacency) > ADJACENCY_CACHE_GRAPHS:
                self._adjacency.popitem(last=False)
            return built

    def _edges_changed(self, records: Sequence[Record]) -> None:
        """Invalidate the cached adjacency of the graphs whose edges are being written."""
        for record in records:
            if isinstance(record, Edge):
                self._edge_versions[record.graph_uuid] = (
                    self._edge_versions.get(record.graph_uuid, 0) + 1
                )

    def _filter_copy(
        self, kind: type[Record], scope: Scope, where: Predicate | None
    ) -> tuple[Columns, npt.NDArray[np.bool_]] | None:
        """The in-memory filter columns of the owner in ``scope`` and the rows ``scope``
        and ``where`` allow, or None when SQL must filter (inside a transaction, no
        current copy, or a filter the columns do not cover)."""
        table, field = self._table(kind), _owner_field(kind)
        owner = scope.get(field)
        if self.in_transaction() or not isinstance(owner, str):
            return None
        # No copy is started for a filter it could not serve (a held one says so itself).
        copy = self._filter_columns.current(
            table, field, owner, lambda: covers(table, field, owner, scope, where)
        )
        if copy is None:
            return None
        allowed = copy.allowed(scope, where)
        return None if allowed is None else (copy, allowed)

    def filter_column_status(self) -> dict[str, int]:
        return self._filter_columns.status()

    def node_degrees(self, graph_uuid: str, node_uuids: Sequence[str]) -> dict[str, int]:
        # The column the listing by degree sorts on (migration 11), so the two agree.
        degrees = dict.fromkeys(node_uuids, 0)
        for start in range(0, len(node_uuids), 500):
            chunk = list(node_uuids[start : start + 500])
            marks = ",".join("?" * len(chunk))
            for node_uuid, degree in self._query(
                f"SELECT uuid, degree FROM nodes WHERE graph_uuid = ? AND uuid IN ({marks})",
                [graph_uuid, *chunk],
            ):
                degrees[node_uuid] = int(degree)
        return degrees

    # -- provenance ------------------------------------------------------------------
    def link_episodes(
        self, kind: type[Record], graph_uuid: str, uuid: str, episode_uuids: Sequence[str]
    ) -> None:
        with self.transaction():
            self._conn.executemany(
                "INSERT OR IGNORE INTO links (kind, graph_uuid, uuid, episode_uuid)"
                " VALUES (?, ?, ?, ?)",
                [(self._table(kind), graph_uuid, uuid, ep) for ep in episode_uuids],
            )

    def episodes_of(
        self, kind: type[Record], uuids: Sequence[str], *, limit: int | None = None
    ) -> dict[str, tuple[list[str], bool]]:
        found: dict[str, list[str]] = {u: [] for u in uuids}
        table = self._table(kind)
        if limit is not None and len(uuids) <= 100:
            # A page of results: each uuid's newest links straight off the primary key
            # (a hub node is linked to tens of thousands of episodes; reading them all to
            # keep 100 cost ~100 ms at 100k facts).
            page: dict[str, tuple[list[str], bool]] = {}
            for uuid in uuids:
                newest = [
                    r[0]
                    for r in self._query(
                        "SELECT episode_uuid FROM links WHERE kind = ? AND uuid = ?"
                        f" ORDER BY episode_uuid DESC LIMIT {int(limit) + 1}",
                        [table, uuid],
                    )
                ]
                page[uuid] = (newest[:limit], len(newest) > limit)
            return page
        for start in range(0, len(uuids), 500):
            chunk = list(uuids[start : start + 500])
            marks = ",".join("?" * len(chunk))
            rows = self._query(
                # No ORDER BY: with one, SQLite walks the episode index over every link of
                # the kind (8.7 ms for 10 edges at 100k); the primary key is 0.02 ms.
                f"SELECT uuid, episode_uuid FROM links WHERE kind = ? AND uuid IN ({marks})",
                [table, *chunk],
            )
            for uuid, episode_uuid in rows:
                found[uuid].append(episode_uuid)
        out: dict[str, tuple[list[str], bool]] = {}
        for uuid, episodes in found.items():
            episodes.sort(reverse=True)  # UUIDv7: newest first
            truncated = limit is not None and len(episodes) > limit
            out[uuid] = (episodes[:limit] if truncated else episodes, truncated)
        return out

    def linked_to_episodes(self, kind: type[R], episode_uuids: Sequence[str]) -> list[str]:
        if not episode_uuids:
            return []
        marks = ",".join("?" * len(episode_uuids))
        rows = self._query(
            f"SELECT DISTINCT uuid FROM links WHERE kind = ? AND episode_uuid IN ({marks})",
            [self._table(kind), *episode_uuids],
        )
        return [r[0] for r in rows]

    def linked_by_episode(
        self, kind: type[Record], episode_uuids: Sequence[str]
    ) -> dict[str, list[str]]:
        out: dict[str, list[str]] = {}
        if not episode_uuids:
            return out
        marks = ",".join("?" * len(episode_uuids))
        rows = self._query(
            f"SELECT episode_uuid, uuid FROM links WHERE kind = ? AND episode_uuid IN ({marks})",
            [self._table(kind), *episode_uuids],
        )
        for episode_uuid, uuid in rows:
            out.setdefault(episode_uuid, []).append(uuid)
        return out

    # -- embeddings ------------------------------------------------------------------
    def set_embeddings(
        self, kind: type[Record], owner_uuid: str, items: Sequence[tuple[str, Vector]]
    ) -> None:
        table = self._table(kind)
        blobs = [(uuid, np.asarray(vec, dtype=np.float32).tobytes()) for uuid, vec in items]
        with self.transaction():
            self._conn.executemany(
                "INSERT OR REPLACE INTO embeddings (kind, uuid, owner_uuid, vector)"
                " VALUES (?, ?, ?, ?)",
                [(table, uuid, owner_uuid, blob) for uuid, blob in blobs],
            )
            version = self._conn.execute(
                "INSERT INTO embedding_versions (kind, owner_uuid, version) VALUES (?, ?, 1)"
                " ON CONFLICT (kind, owner_uuid) DO UPDATE SET version = version + 1"
                " RETURNING version",
                [table, owner_uuid],
            ).fetchone()[0]
            with self._vector_log_lock:
                log = self._vector_log.setdefault((table, owner_uuid), [])
                log.append((int(version), blobs))
                if sum(len(entry[1]) for entry in log) > VECTOR_LOG_MAX:
                    del self._vector_log[(table, owner_uuid)]  # a reload is cheaper now

    def get_embeddings(self, kind: type[Record], uuids: Sequence[str]) -> dict[str, Vector]:
        out: dict[str, Vector] = {}
        for start in range(0, len(uuids), 500):
            chunk = list(uuids[start : start + 500])
            marks = ",".join("?" * len(chunk))
            rows = self._query(
                f"SELECT uuid, vector FROM embeddings WHERE kind = ? AND uuid IN ({marks})",
                [self._table(kind), *chunk],
            )
            for uuid, blob in rows:
                out[uuid] = np.frombuffer(blob, dtype=np.float32)
        return out

    def delete_embeddings(self, kind: type[Record], uuids: Sequence[str]) -> None:
        table = self._table(kind)
        with self.transaction():
            for start in range(0, len(uuids), 500):
                chunk = list(uuids[start : start + 500])
                marks = ",".join("?" * len(chunk))
                self._conn.execute(
                    f"DELETE FROM embeddings WHERE kind = ? AND uuid IN ({marks})", [table, *chunk]
                )
            self._bump_vectors(table)

    def _bump_vectors(self, table: str) -> None:
        """Invalidate the cached vector matrices of a record kind (rows were removed)."""
        self._conn.execute(
            "UPDATE embedding_versions SET version = version + 1 WHERE kind = ?", [table]
        )

    def missing_embeddings(self, kind: type[Record], owner_uuid: str) -> list[str]:
        table = self._table(kind)
        rows = self._query(
            f"SELECT t.uuid FROM {table} t WHERE t.{_owner_field(kind)} = ? AND NOT EXISTS"
            " (SELECT 1 FROM embeddings e WHERE e.kind = ? AND e.uuid = t.uuid)",
            [owner_uuid, table],
        )
        return [r[0] for r in rows]

    # -- retrieval legs ----------------------------------------------------------------
    def text_search(
        self,
        kind: type[Record],
        scope: Scope,
        terms: Sequence[str],
        *,
        where: Predicate | None = None,
        limit: int = 100,
        bm25: Bm25 = STANDARD_BM25,
    ) -> list[tuple[str, float]]:
        index = None
        if terms and not bounded(where):
            # A small table's copy (kept for re-scoring) serves too: it ranks exactly as
            # FTS5 does, in a fraction of the time.
            table = self._table(kind)
            index = self._term_index(kind, any_size=self._term_indexes.has(table))
        found = self._standard_text_search(kind, scope, terms, where, limit, index)
        if bm25 == STANDARD_BM25 or not found:
            return found
        # The copy that ranked the rows scores them: under writes, asking again for a
        # current one would catch it up once more (or find it being caught up with).
        if index is None:
            # A copy at any size: it scores the rows in ~0.3 ms, where tokenising them
            # takes ~7 ms (bm25.sql_scores, its fallback while it is read or caught up).
            index = self._term_index(kind, any_size=True)
        return self._rescored(kind, terms, found, bm25, index)

    def _rescored(
        self,
        kind: type[Record],
        terms: Sequence[str],
        found: list[tuple[str, float]],
        bm25: Bm25,
        index: TermIndex | None,
    ) -> list[tuple[str, float]]:
        """``found`` scored and ordered with ``bm25``'s constants (store/sqlite/bm25.py),
        from ``index``'s statistics (a current copy) or else the index's and rows'."""
        phrases: list[str] = []
        counted: list[str] = []  # the terms of ``phrases``, one each
        for term in terms:
            tokens = self._tokenizer.tokens(term)
            if len(tokens) > 1:
                return found  # a phrase ("rock'n'roll"): only FTS5 can count those
            if tokens:
                phrases.append(tokens[0])
                counted.append(term)
        table = self._table(kind)
        marks = ",".join("?" * len(found))
        rowids = {
            str(r[0]): int(r[1])
            for r in self._read(
                f"SELECT uuid, rowid FROM {table} WHERE uuid IN ({marks})", [u for u, _ in found]
            )
        }
        scorer: bm25_scores.Scorer
        if index is not None:
            scorer = partial(index.scores, phrases, bm25=bm25)
        else:
            scorer = partial(
                bm25_scores.sql_scores,
                self._read,
                self._tokenizer,
                table,
                self._column_weights(table),
                phrases,
                [self._term_rows(table, term) for term in counted],
                bm25,
            )
        return bm25_scores.rescored(found, rowids, scorer)

    def _column_weights(self, table: str) -> dict[str, float]:
        """Each column of ``table``'s full-text index and its ``bm25()`` weight."""
        known = self._fts_weights.get(table)
        if known is None:
            names = [str(r[1]) for r in self._read(f"PRAGMA table_info({table}_fts)")]
            known = column_weights(names, FTS_COLUMN_WEIGHTS.get(table, ()))
            self._fts_weights[table] = known
        return known

    def _standard_text_search(
        self,
        kind: type[Record],
        scope: Scope,
        terms: Sequence[str],
        where: Predicate | None,
        limit: int,
        index: TermIndex | None,
    ) -> list[tuple[str, float]]:
        """The ``limit`` best rows by FTS5's ``bm25()`` (or the same scores of ``index``,
        the table's current copy, where it can serve)."""
        if not terms:
            return []
        table = self._table(kind)
        sql_where, params = self._where(kind, scope, where)
        weights = "".join(f", {w}" for w in FTS_COLUMN_WEIGHTS.get(table, ()))
        score = f"-bm25({table}_fts{weights}) AS score"
        if bounded(where):
            # The filter's few rows drive (CROSS JOIN keeps them outer), each matched and
            # scored by rowid: every row the filter allows is ranked, over every term.
            rows = self._read(
                f"SELECT t.uuid AS uuid, {score} FROM {table} t"
                f" CROSS JOIN {table}_fts ON {table}_fts.rowid = t.rowid"
                f" WHERE {sql_where} AND {table}_fts MATCH ?"
                f" ORDER BY score DESC, uuid LIMIT {int(limit)}",
                [*params, fulltext.any_of(terms)],
            )
            return [(r[0], float(r[1])) for r in rows]
        indexed = (
            None
            if index is None
            else self._indexed_search(index, kind, scope, terms, where, sql_where, params, limit)
        )
        filled = False
        if indexed is not None:
            plan, found, filled = indexed
        else:
            plan = fulltext.match_plan(
                terms, self._row_count(table), lambda term: self._term_rows(table, term)
            )
        # CROSS JOIN keeps the full-text index as the outer loop: the planner would
        # otherwise drive from an indexed filter and run MATCH once per row.
        select = (
            f"SELECT t.uuid AS uuid, {score} FROM {table}_fts"
            f" CROSS JOIN {table} t ON t.rowid = {table}_fts.rowid"
            f" WHERE {table}_fts MATCH ? AND {sql_where}"
        )

        def ranked(matches: Sequence[str], since: int | None = None) -> list[tuple[str, float]]:
            newest = "" if since is None else f" AND {table}_fts.rowid >= {int(since)}"
            rows = self._read(
                " UNION ALL ".join([select + newest] * len(matches))
                + f" ORDER BY score DESC, uuid LIMIT {int(limit)}",
                [v for match in matches for v in (match, *params)],
            )
            return [(r[0], float(r[1])) for r in rows]

        if indexed is None:
            found = ranked(plan.first)
        if plan.fill is not None and len(found) < limit and not filled:
            # Only the newest FILL_ROWS rows of the fill in scope are scored (fulltext.py):
            # the index yields rows newest first, so this stops at the bound, unscored.
            bound = self._read(
                f"SELECT {table}_fts.rowid FROM {table}_fts"
                f" CROSS JOIN {table} t ON t.rowid = {table}_fts.rowid"
                f" WHERE {table}_fts MATCH ? AND {sql_where}"
                f" ORDER BY {table}_fts.rowid DESC LIMIT 1 OFFSET {fulltext.FILL_ROWS - 1}",
                [plan.fill, *params],
            )
            since = int(bound[0][0]) if bound else None
            found = sorted([*found, *ranked([plan.fill], since)], key=lambda r: (-r[1], r[0]))
        return found[:limit]

    def _indexed_search(
        self,
        index: TermIndex,
        kind: type[Record],
        scope: Scope,
        terms: Sequence[str],
        where: Predicate | None,
        sql_where: str,
        params: list[Any],
        limit: int,
    ) -> tuple[fulltext.MatchPlan, list[tuple[str, float]], bool] | None:
        """The plan of ``terms``, the rows it ranks first, from the table's in-memory term
        index, and whether they include the plan's fill; None when there is no current
        index or it cannot serve the query.

        With no filter but the owner, the index ranks the rows and knows their uuids: no
        SQL. Under a filter the in-memory filter columns cover, it ranks only the rows the
        filter allows, the fill's too; under any other, its best rows are checked in SQL,
        and FTS5 ranks the fill."""
        tokens = {t: self._tokenizer.tokens(t) for t in terms}
        if any(len(found) != 1 for found in tokens.values()):
            return None  # a term FTS5 splits into a phrase ("rock'n'roll")
        stem = {t: found[0] for t, found in tokens.items()}
        plan = fulltext.match_plan(terms, index.rows, lambda term: index.matches(stem[term]))
        scoped = scope.get(_owner_field(kind))
        owner = scoped if isinstance(scoped, str) else None
        rare, weighty = [stem[t] for t in plan.rare], [stem[t] for t in plan.weighty]
        phrases = [stem[t] for t in plan.phrases]
        if not _restricted(kind, scope, where):
            # Every row of the owner passes: the copy ranks them and knows their uuids.
            return plan, index.best(phrases, rare, owner, limit), False
        masked = self._filter_copy(kind, scope, where)
        allowed = None if masked is None else masked[0].rowids[masked[1]]
        chunks = index.ranked(phrases, rare, owner, limit, allowed)
        found = self._checked(index.table, chunks, sql_where, params, limit, masked is not None)
        if found is None:
            return None
        if allowed is None or plan.fill is None or len(found) >= limit:
            return plan, found, False
        # The fill over the allowed rows: the newest FILL_ROWS that match it, ranked by the
        # fill's own MATCH expression, (weighty...) NOT (rare...).
        newest = index.newest(weighty, rare, owner, allowed, fulltext.FILL_ROWS)
        chunks = index.ranked([*weighty, *rare], weighty, owner, limit, newest)
        fill = self._checked(index.table, chunks, sql_where, params, limit, True)
        if fill is None:
            return None
        return plan, sorted([*found, *fill], key=lambda r: (-r[1], r[0]))[:limit], True

    def _checked(
        self,
        table: str,
        chunks: Iterable[tuple[npt.NDArray[np.int64], npt.NDArray[np.float64]]],
        sql_where: str,
        params: list[Any],
        limit: int,
        masked: bool,
    ) -> list[tuple[str, float]] | None:
        """The best ``limit`` rows of the term index's ranked ``chunks`` that pass the
        filter in SQL; None when the filter passes so few that FTS5 should answer (or,
        for chunks ranked from the filter columns, when SQL disagrees with them)."""
        checked = 0
        found: list[tuple[str, float]] = []
        for rowids, scores in chunks:
            if checked:
                # The filter passes few of the best rows (so far len(found) of checked):
                # when filling the page would take more than the budget, FTS5 answers,
                # since it filters as it ranks.
                rate = len(found) / checked
                needed = (limit - len(found)) / rate if rate else math.inf
                if checked + needed > TERM_INDEX_CHECK_MAX:
                    return None
            score_of = dict(zip(rowids.tolist(), scores.tolist(), strict=True))
            # CROSS JOIN: look the rows up by rowid, never scan an index of the filter.
            rows = self._read(
                f"SELECT t.rowid, t.uuid FROM json_each(?) j CROSS JOIN {table} t"
                f" ON t.rowid = j.value WHERE {sql_where}",
                [json.dumps(list(score_of)), *params],
            )
            if masked and len(rows) < len(score_of):
                log.warning("the filter columns of %s disagree with SQL: using FTS5", table)
                return None
            found += [(r[1], score_of[r[0]]) for r in rows]
            checked += len(score_of)
            if len(found) >= limit:
                break
        found.sort(key=lambda r: (-r[1], r[0]))
        return found[:limit]

    def _term_index(self, kind: type[Record], *, any_size: bool = False) -> TermIndex | None:
        """The current in-memory term index of ``kind``'s table, if it is big enough to
        have one (``any_size``: whatever its size): caught up with the writes since it was
        read when they are few, else None while it is caught up or read again in the
        background."""
        table = self._table(kind)
        if self.in_transaction():
            return None
        if not any_size and self._row_count(table) < term_index.MIN_ROWS:
            return None
        structure = self._read(
            f"SELECT block FROM {table}_fts_data WHERE id = ?", [term_index.STRUCTURE_ID]
        )
        if not structure:
            return None
        return self._term_indexes.current(
            table,
            bytes(structure[0][0]),
            _owner_field(kind),
            FTS_COLUMN_WEIGHTS.get(table, ()),
            self._pooled,
        )

    @contextmanager
    def _pooled(self) -> Iterator[sqlite3.Connection | None]:
        """A pooled read-only connection for the caller's own transaction (None when the
        pool is at its limit)."""
        conn = self._checkout()
        try:
            yield conn
        finally:
            if conn is not None:
                self._read_pool.put(conn)

    def refresh_text_indexes(self) -> None:
        """Bring up to date (catch up, or read again) the stale copies of the tables
        searched from a copy before (not those never searched), so that the first
        searches after a burst of writes find them current."""
        for kind, table in TABLES.items():
            if self._term_indexes.has(table):
                self._term_index(kind, any_size=True)

    def wait_for_term_indexes(self, timeout: float = 120.0) -> bool:
        """Start building the in-memory term index of every big table (and every table
        with a copy) whose copy is not current, and wait for the builds (for tests and
        benchmarks, which should time a warm store); True when none is still running
        after ``timeout`` seconds."""
        for kind, table in TABLES.items():
            if table in FTS_TABLES:
                self._term_index(kind, any_size=self._term_indexes.has(table))
        return self._term_indexes.wait(timeout)

    def _row_count(self, table: str) -> int:
        """The table's row count (it only decides whether a term can be common)."""
        return self._count(table, "", f"SELECT count(*) FROM {table}", [])

    def _term_rows(self, table: str, term: str) -> int:
        """How many rows of ``table`` match ``term`` (it only decides whether the term is
        common). Counting walks the term's whole posting list: for a user's name at 100k
        facts that was ~12 % of a search's full-text time, paid again by every query."""
        sql = f"SELECT count(*) FROM {table}_fts WHERE {table}_fts MATCH ?"
        return self._count(table, term, sql, [fulltext.quote(term)])

    def _count(self, table: str, term: str, sql: str, params: list[str]) -> int:
        """``sql``'s count, re-read at most every :data:`ROW_COUNT_TTL_S` seconds; the
        :data:`TERM_COUNTS_MAX` most recently used counts are kept."""
        key, now = (table, term), time.monotonic()
        with self._counts_lock:
            cached = self._counts.get(key)
            if cached is not None and now - cached[0] <= ROW_COUNT_TTL_S:
                self._counts.move_to_end(key)
                return cached[1]
        count = int(self._read(sql, params)[0][0])
        with self._counts_lock:
            self._counts[key] = (now, count)
            self._counts.move_to_end(key)
            while len(self._counts) > TERM_COUNTS_MAX:
                self._counts.popitem(last=False)
        return count

    def vector_search(
        self,
        kind: type[Record],
        owner_uuid: str,
        vector: Vector,
        *,
        scope: Scope,
        where: Predicate | None = None,
        limit: int = 100,
    ) -> list[tuple[str, float]]:
        uuids, index, matrix = self._matrix(kind, owner_uuid)
        if not uuids:
            return []
        key = (self._table(kind), owner_uuid)
        if _restricted(kind, scope, where):
            sql_where, params = self._where(kind, scope, where)
            if not bounded(where) and len(uuids) >= self._ann.min_rows:
                hits = self._masked_vector_search(
                    kind, key, uuids, index, matrix, vector, scope, where, limit
                )
                if hits is not None and not self._confirmed(kind, sql_where, params, hits):
                    hits = None
                if hits is None:

                    def passing(rows: list[int]) -> set[int]:
                        ok = self._passing(kind, sql_where, params, [uuids[r] for r in rows])
                        return {r for r in rows if uuids[r] in ok}

                    hits = self._post_filtered(key, uuids, matrix, vector, passing, limit)
                if hits is not None:
                    return hits
            allowed = [
                r[0]
                for r in self._query(
                    f"SELECT t.uuid FROM {self._table(kind)} t WHERE {sql_where}", params
                )
            ]
            rows = np.fromiter((index[u] for u in allowed if u in index), dtype=np.int64)
            if rows.size == 0:
                return []
            scores = _cosines(matrix[rows], vector)
        else:
            approximate = self._ann.search(key, uuids, matrix, vector, limit)
            if approximate is not None:
                return [(uuids[row], score) for row, score in approximate]
            rows = np.arange(len(uuids))
            scores = _cosines(matrix, vector)
        return [(uuids[int(rows[i])], score) for i, score in _best(scores, limit)]

    def _masked_vector_search(
        self,
        kind: type[Record],
        key: tuple[str, str],
        uuids: list[str],
        index: dict[str, int],
        matrix: npt.NDArray[np.float32],
        vector: Vector,
        scope: Scope,
        where: Predicate | None,
        limit: int,
    ) -> list[tuple[str, float]] | None:
        """A big owner's best ``limit`` rows under a filter the in-memory filter columns
        cover: up to POST_FILTER_FETCH_MAX allowed rows are scored exactly, more through
        the HNSW index with the mask as the check (or exactly, when that finds too few);
        None when SQL must filter."""
        found = self._filter_copy(kind, scope, where)
        if found is None:
            return None
        copy, allowed = found
        rows = copy.matrix_rows(index)[allowed]
        rows = np.sort(rows[rows >= 0])  # in memory order: gathering them is ~2x faster
        if rows.size > POST_FILTER_FETCH_MAX:
            permitted = np.zeros(len(uuids), dtype=bool)
            permitted[rows] = True

            def passing(nearest: list[int]) -> set[int]:
                at = np.asarray(nearest, dtype=np.int64)
                return set(at[permitted[at]].tolist())

            hits = self._post_filtered(key, uuids, matrix, vector, passing, limit)
            if hits is not None:
                return hits
        scores = _cosines(matrix[rows], vector)
        return [(uuids[int(rows[i])], score) for i, score in _best(scores, limit)]

    def _confirmed(
        self,
        kind: type[Record],
        sql_where: str,
        params: list[Any],
        hits: Sequence[tuple[str, float]],
    ) -> bool:
        """Whether every row of a page found through the filter columns passes the filter
        in SQL too (the copy is a cache: if it ever disagrees, SQL answers)."""
        passing = self._passing(kind, sql_where, params, [u for u, _ in hits])
        if len(passing) == len(hits):
            return True
        log.warning("the filter columns of %s disagree with SQL: filtering in SQL", kind.__name__)
        return False

    def _post_filtered(
        self,
        key: tuple[str, str],
        uuids: list[str],
        matrix: npt.NDArray[np.float32],
        vector: Vector,
        passing: Callable[[list[int]], set[int]],
        limit: int,
    ) -> list[tuple[str, float]] | None:
        """A big owner's best ``limit`` rows that pass a filter (``passing`` tells which of
        some rows do), found by checking its nearest rows against the filter; None when
        there is no index yet or the filter passes too few of them: then every allowed row
        is scored exactly."""
        fetch = POST_FILTER_FETCH
        nearest = self._ann.search(key, uuids, matrix, vector, fetch)
        checked: set[int] = set()
        hits: list[tuple[str, float]] = []
        while nearest is not None:
            fresh = [(row, score) for row, score in nearest if row not in checked]
            passed = passing([r for r, _ in fresh])
            hits += [(uuids[r], score) for r, score in fresh if r in passed]
            checked.update(r for r, _ in fresh)
            if len(hits) >= limit or len(checked) >= len(uuids):
                hits.sort(key=lambda h: (-h[1], h[0]))
                return hits[:limit]
            if not hits:
                return None  # a selective filter: its rows are few, score them all
            # Once more, as deep as this pass rate needs (with a margin), checking only
            # the rows not checked yet.
            fetch = max(2 * fetch, int(1.5 * limit * fetch / len(hits)))
            if fetch > POST_FILTER_FETCH_MAX:
                return None
            nearest = self._ann.search(key, uuids, matrix, vector, fetch)
        return None

    def _passing(
        self, kind: type[Record], sql_where: str, params: list[Any], uuids: Sequence[str]
    ) -> set[str]:
        """Which of ``uuids`` match the compiled filter."""
        passing: set[str] = set()
        for start in range(0, len(uuids), 500):
            chunk = list(uuids[start : start + 500])
            # The uuids drive the loop (CROSS JOIN keeps them outer), one primary-key lookup
            # each: with ``uuid IN (...)`` the planner may prefer an index of the filter
            # (a memory tree path), which scanned ~20x the rows at 100k memories.
            rows = self._query(
                f"SELECT t.uuid FROM json_each(?) j CROSS JOIN {self._table(kind)} t"
                f" ON t.uuid = j.value WHERE {sql_where}",
                [json.dumps(chunk), *params],
            )
            passing.update(r[0] for r in rows)
        return passing

    def _matrix(
        self, kind: type[Record], owner_uuid: str
    ) -> tuple[list[str], dict[str, int], npt.NDArray[np.float32]]:
        """The owner's vectors as one matrix, cached until its version counter moves."""
        table = self._table(kind)
        with self._reader_lock:
            rows = self._reader.execute(
                "SELECT version FROM embedding_versions WHERE kind = ? AND owner_uuid = ?",
                [table, owner_uuid],
            ).fetchall()
            version = int(rows[0][0]) if rows else 0
            key = (table, owner_uuid)
            cached = self._matrices.get(key)
            if cached is not None and cached[0] == version:
                return cached[1], cached[2], cached[3]
            if cached is not None:
                caught_up = self._catch_up(key, cached, version)
                if caught_up is not None:
                    self._matrices[key] = (version, *caught_up)
                    return caught_up
            data = self._reader.execute(
                "SELECT uuid, vector FROM embeddings WHERE kind = ? AND owner_uuid = ?",
                [table, owner_uuid],
            ).fetchall()
        uuids = [r[0] for r in data]
        if data:
            matrix = np.frombuffer(b"".join(r[1] for r in data), dtype=np.float32).reshape(
                len(data), -1
            )
        else:
            matrix = np.zeros((0, 0), dtype=np.float32)
        index = {u: i for i, u in enumerate(uuids)}
        self._matrices[key] = (version, uuids, index, matrix)
        return uuids, index, matrix

    def _catch_up(
        self,
        key: tuple[str, str],
        cached: tuple[int, list[str], dict[str, int], npt.NDArray[np.float32]],
        version: int,
    ) -> tuple[list[str], dict[str, int], npt.NDArray[np.float32]] | None:
        """The cached matrix with the logged writes since it was read applied (a new
        matrix: the old one may be in use), or None when the log does not hold every
        version in between (a delete, another process, a rolled-back transaction)."""
        old_version, uuids, index, matrix = cached
        with self._vector_log_lock:
            log = self._vector_log.get(key, [])
            entries = [(v, blobs) for v, blobs in log if old_version < v <= version]
            self._vector_log[key] = [(v, blobs) for v, blobs in log if v > version]
        if [v for v, _ in entries] != list(range(old_version + 1, version + 1)) or not uuids:
            return None
        latest: dict[str, bytes] = {}
        for _, blobs in entries:
            latest.update(blobs)
        width = matrix.shape[1]
        if any(len(blob) != width * 4 for blob in latest.values()):
            return None  # another model's vectors: start over
        added = [u for u in latest if u not in index]
        new_rows = np.frombuffer(b"".join(latest[u] for u in added), dtype=np.float32)
        grown = np.concatenate([matrix, new_rows.reshape(len(added), width)])
        changed = np.fromiter((index[u] for u in latest if u in index), dtype=np.int64)
        for u, blob in latest.items():
            if u in index:
                grown[index[u]] = np.frombuffer(blob, dtype=np.float32)
        new_index = dict(index)
        for u in added:
            new_index[u] = len(new_index)
        self._ann.note_update(key, matrix, grown, changed, len(uuids))
        return [*uuids, *added], new_index, grown

    # -- search cursors and settings -----------------------------------------------------
    def save_cursor(
        self, token: str, project_uuid: str, fingerprint: str, results: str, ttl_seconds: int
    ) -> None:
        now = clock.now_dt()
        with self.transaction():
            self._conn.execute(
                "DELETE FROM search_cursors WHERE expires_at < ?", [clock.to_iso(now)]
            )
            self._conn.execute(
                "INSERT INTO search_cursors VALUES (?, ?, ?, ?, ?, ?)",
                [
                    token,
                    project_uuid,
                    fingerprint,
                    results,
                    clock.to_iso(now),
                    clock.to_iso(now + timedelta(seconds=ttl_seconds)),
                ],
            )

    def load_cursor(self, token: str) -> tuple[str, str, str] | None:
        rows = self._query(
            "SELECT project_uuid, fingerprint, results FROM search_cursors"
            " WHERE token = ? AND expires_at >= ?",
            [token, clock.now()],
        )
        return (rows[0][0], rows[0][1], rows[0][2]) if rows else None

    # -- maintenance -----------------------------------------------------------------
    def compact_text_indexes(self) -> bool:
        """FTS5 writes each transaction's rows as a new segment and merges segments only
        a few at a time, so an index written message by message is read from dozens of
        segments: at 100k messages the episode search's lexical leg took 27-33 / 89-127
        ms (p50 / p95) against 18-21 / 52-76 ms once merged (docs/benchmarks.md). A step merges
        up to COMPACT_PAGES pages of one index toward a single segment, in its own short
        transaction. An index is merged again only once its table has grown by
        COMPACT_GROWTH (and COMPACT_MIN_ROWS rows) since it was last merged, so the cost
        stays proportional to what was written."""
        self._prune_change_log()
        for table in FTS_TABLES:
            key = f"fts_compacted_rows:{table}"
            # Read first: an idle worker asks every few seconds, and most often nothing
            # is due, which must not take the write lock.
            rows = int(self._query(f"SELECT coalesce(max(rowid), 0) FROM {table}")[0][0])
            found = self._query("SELECT value FROM settings WHERE key = ?", [key])
            done = int(found[0][0]) if found else 0
            if rows - done < max(COMPACT_MIN_ROWS, done * COMPACT_GROWTH):
                continue
            with self.transaction():
                before = self._conn.total_changes
                # A negative page count merges segments of every level (an incremental
                # 'optimize'); a change count under 2 means nothing was left to merge.
                fts = f"{table}_fts"
                self._conn.execute(
                    f"INSERT INTO {fts}({fts}, rank) VALUES ('merge', ?)", [-COMPACT_PAGES]
                )
                if self._conn.total_changes - before >= 2:
                    return True
                self._conn.execute(
                    "INSERT OR REPLACE INTO settings (key, value) VALUES (?, ?)", [key, str(rows)]
                )
        return False

    def _prune_change_log(self) -> None:
        """Drop all but the newest CHANGE_LOG_KEEP entries of the full-text change log and
        of the filter columns' row log, once one holds twice as many (a copy they would
        have served is read again)."""
        for table in (CHANGE_LOG, ROW_LOG):
            first, last = self._query(f"SELECT min(seq), max(seq) FROM {table}")[0]
            if first is None or last - first < 2 * CHANGE_LOG_KEEP:
                continue
            with self.transaction():
                self._conn.execute(f"DELETE FROM {table} WHERE seq <= ?", [last - CHANGE_LOG_KEEP])

    def setting(self, key: str, default: str) -> str:
        with self.transaction():
            self._conn.execute(
                "INSERT OR IGNORE INTO settings (key, value) VALUES (?, ?)", [key, default]
            )
            row = self._conn.execute("SELECT value FROM settings WHERE key = ?", [key]).fetchone()
        return str(row[0])

    # -- api keys --------------------------------------------------------------------
    def find_api_key(self, key_hash: str) -> ApiKey | None:
        rows = self._query(
            "SELECT * FROM api_keys t WHERE key_hash = ? AND revoked_at IS NULL", [key_hash]
        )
        return self._from_row(ApiKey, rows[0]) if rows else None

    # -- task queue ------------------------------------------------------------------
    def claim_run(
        self,
        owner: str,
        *,
        lease_seconds: float,
        batchable: frozenset[str],
        max_tasks: int,
        max_episodes: int,
    ) -> list[Task]:
        with self.transaction():
            return task_queue.claim_run(
                self._conn,
                lambda row: self._from_row(Task, row),
                owner=owner,
                now=time.time(),
                lease_seconds=lease_seconds,
                batchable=batchable,
                max_tasks=max_tasks,
                max_episodes=max_episodes,
            )

    def renew_leases(self, owner: str, uuids: Sequence[str], lease_seconds: float) -> list[str]:
        with self.transaction():
            return task_queue.renew(
                self._conn, owner, uuids, now=time.time(), lease_seconds=lease_seconds
            )

    def finish_task(self, task: Task, owner: str) -> bool:
        with self.transaction():
            return task_queue.finish(self._conn, task, owner)

    def requeue_expired(self) -> int:
        with self.transaction():
            return task_queue.requeue_expired(self._conn, time.time())


def _encode_cursor(page: PageRequest, key: Any, uuid: str) -> str:
    raw = json.dumps([page.order_by, page.order, key, uuid], separators=(",", ":"))
    return base64.urlsafe_b64encode(raw.encode()).decode().rstrip("=")


def _decode_cursor(cursor: str, page: PageRequest) -> tuple[Any, str]:
    try:
        padded = cursor + "=" * (-len(cursor) % 4)
        order_by, order, key, uuid = json.loads(base64.urlsafe_b64decode(padded.encode()))
    except (ValueError, TypeError, binascii.Error):
        raise BadRequest("cursor is not a cursor this server issued", param="cursor") from None
    if order_by != page.order_by or order != page.order or not isinstance(uuid, str):
        raise BadRequest("cursor was issued for a different ordering", param="cursor")
    return key, uuid


def _owner_field(kind: type[Record]) -> str:
    return OWNER_FIELDS.get(kind, "graph_uuid")


def _restricted(kind: type[Record], scope: Scope, where: Predicate | None) -> bool:
    """Whether a search allows fewer rows than its owner's all."""
    return where is not None or bool(set(scope) - {_owner_field(kind)})


def _cosines(matrix: npt.NDArray[np.float32], vector: Vector) -> npt.NDArray[np.float32]:
    """Each row's dot product with ``vector`` (cosines: the vectors are normalised), on
    the calling thread: numpy's own loop, not BLAS, whose worker threads on this 2-core
    machine took the other leg's core and left the product ~1.5x slower at p95 (6,500
    rows of 384: 13.8 -> 8.3 ms, in a search process)."""
    scores: npt.NDArray[np.float32] = np.einsum("ij,j->i", matrix, vector)
    return scores


def _best(scores: npt.NDArray[np.float32], limit: int) -> list[tuple[int, float]]:
    """The ``limit`` best of ``scores`` as (position, score), best first."""
    k = min(limit, scores.shape[0])
    if k <= 0:
        return []
    top = np.argpartition(-scores, k - 1)[:k]
    top = top[np.argsort(-scores[top], kind="stable")]
    return [(int(i), float(scores[i])) for i in top]
