"""Embeddings, kept per owner, and the vector leg: exact cosine over an owner's matrix
(cached until its version counter moves, caught up from this process's own writes), an
HNSW index for big owners (``vector_index.py``), and filters applied inside candidate
generation, never by trimming a finished top-k."""

from __future__ import annotations

import logging
import threading
from collections.abc import Sequence

import numpy as np
import numpy.typing as npt

from graphrecall.domain.models import Record
from graphrecall.domain.predicates import Predicate
from graphrecall.domain.scopes import TENANT_KEYED, owner_field
from graphrecall.store import base, matrix_search
from graphrecall.store.base import Scope, Vector
from graphrecall.store.matrix_cache import MatrixCache
from graphrecall.store.predicates import bounded
from graphrecall.store.sqlite import rows as rowmap
from graphrecall.store.sqlite.connection import Database
from graphrecall.store.sqlite.filtering import FilterCopies, restricted
from graphrecall.store.vector_index import VectorIndexes
from graphrecall.store.vector_math import best, cosines

log = logging.getLogger(__name__)

# Logged vector writes per owner beyond which the next read reloads the matrix instead.
VECTOR_LOG_MAX = 20_000


class Vectors(base.Vectors):
    def __init__(self, db: Database, filters: FilterCopies) -> None:
        self.db = db
        self._filters = filters
        self.ann = VectorIndexes()
        # Each owner's matrix, least recently used dropped past a byte bound.
        self.matrices = MatrixCache()
        # Vectors this process wrote, by (table, owner) and the version each write produced:
        # a cached matrix catches up from here instead of reloading (see _matrix).
        self._vector_log: dict[tuple[str, str], list[tuple[int, list[tuple[str, bytes]]]]] = {}
        self._vector_log_lock = threading.Lock()
        db.on_rollback(self._forget_log)

    def _forget_log(self) -> None:
        with self._vector_log_lock:
            self._vector_log.clear()  # it may hold vectors that were never committed

    def close(self) -> None:
        self.ann.close()

    def set_embeddings(
        self, kind: type[Record], owner_uuid: str, items: Sequence[tuple[str, Vector]]
    ) -> None:
        table = rowmap.table(kind)
        blobs = [(uuid, np.asarray(vec, dtype=np.float32).tobytes()) for uuid, vec in items]
        with self.db.transaction():
            if kind not in TENANT_KEYED:
                # One vector per record, whichever owner it was stored under before (the
                # key is (kind, uuid, owner) since migration 18, for memories' sake).
                for start in range(0, len(blobs), 500):
                    chunk = [uuid for uuid, _ in blobs[start : start + 500]]
                    marks = ",".join("?" * len(chunk))
                    self.db.conn.execute(
                        f"DELETE FROM embeddings WHERE kind = ? AND uuid IN ({marks})"
                        " AND owner_uuid <> ?",
                        [table, *chunk, owner_uuid],
                    )
            self.db.conn.executemany(
                "INSERT OR REPLACE INTO embeddings (kind, uuid, owner_uuid, vector)"
                " VALUES (?, ?, ?, ?)",
                [(table, uuid, owner_uuid, blob) for uuid, blob in blobs],
            )
            version = self.db.conn.execute(
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

    def get_embeddings(
        self, kind: type[Record], owner_uuid: str, uuids: Sequence[str]
    ) -> dict[str, Vector]:
        # The owner's matrix, while this process holds it current, has every vector of
        # the owner: the rows come from there (a copy), not from the table. The offline
        # scorer reads back each search's candidates right after the vector leg loaded it.
        current = None if self.db.in_transaction() else self._current(kind, owner_uuid)
        if current is not None:
            index, matrix = current
            present = [u for u in uuids if u in index]
            picked = matrix[np.fromiter((index[u] for u in present), dtype=np.int64)]
            return dict(zip(present, picked, strict=True))
        out: dict[str, Vector] = {}
        for start in range(0, len(uuids), 500):
            chunk = list(uuids[start : start + 500])
            marks = ",".join("?" * len(chunk))
            rows = self.db.query(
                "SELECT uuid, vector FROM embeddings"
                # ``+owner_uuid``: the uuids' index must drive; the owner's would read
                # every vector of the owner (3.6 ms for a page of 100 at 10k facts).
                f" WHERE kind = ? AND uuid IN ({marks}) AND +owner_uuid = ?",
                [rowmap.table(kind), *chunk, owner_uuid],
            )
            for uuid, blob in rows:
                out[uuid] = np.frombuffer(blob, dtype=np.float32)
        return out

    def delete_embeddings(self, kind: type[Record], owner_uuid: str, uuids: Sequence[str]) -> None:
        table = rowmap.table(kind)
        with self.db.transaction():
            for start in range(0, len(uuids), 500):
                chunk = list(uuids[start : start + 500])
                marks = ",".join("?" * len(chunk))
                self.db.conn.execute(
                    "DELETE FROM embeddings"
                    f" WHERE kind = ? AND uuid IN ({marks}) AND +owner_uuid = ?",
                    [table, *chunk, owner_uuid],
                )
            self.removed(table, owner_uuid)

    def removed(self, table: str, owner_uuid: str | None = None) -> None:
        """Invalidate the cached vector matrices of a record kind, or of one owner's
        records of it (rows were removed)."""
        if owner_uuid is None:
            self.db.conn.execute(
                "UPDATE embedding_versions SET version = version + 1 WHERE kind = ?", [table]
            )
        else:
            self.db.conn.execute(
                "UPDATE embedding_versions SET version = version + 1"
                " WHERE kind = ? AND owner_uuid = ?",
                [table, owner_uuid],
            )

    def missing_embeddings(self, kind: type[Record], owner_uuid: str) -> list[str]:
        table = rowmap.table(kind)
        rows = self.db.query(
            f"SELECT t.uuid FROM {table} t WHERE t.{owner_field(kind)} = ? AND NOT EXISTS"
            " (SELECT 1 FROM embeddings e"
            " WHERE e.kind = ? AND e.uuid = t.uuid AND +e.owner_uuid = ?)",
            [owner_uuid, table, owner_uuid],
        )
        return [r[0] for r in rows]

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
        key = (rowmap.table(kind), owner_uuid)
        flt = None
        if restricted(kind, scope, where):
            sql_where, params = rowmap.where(kind, scope, where)
            table = rowmap.table(kind)

            def allowed() -> list[str]:
                rows = self.db.query(f"SELECT t.uuid FROM {table} t WHERE {sql_where}", params)
                return [r[0] for r in rows]

            def passing(some: list[str]) -> set[str]:
                return rowmap.passing(self.db, kind, sql_where, params, some)

            def in_memory() -> list[tuple[str, float]] | None:
                hits = self._masked_vector_search(
                    kind, key, uuids, index, matrix, vector, scope, where, limit
                )
                if hits is not None and len(passing([u for u, _ in hits])) != len(hits):
                    log.warning(
                        "the filter columns of %s disagree with SQL: filtering in SQL",
                        kind.__name__,
                    )
                    return None  # the copy is a cache: if it ever disagrees, SQL answers
                return hits

            flt = matrix_search.Filter(bounded(where), allowed, passing, in_memory)
        query = np.asarray(vector, dtype=np.float32)
        return matrix_search.search(self.ann, key, uuids, index, matrix, query, limit, flt)

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
        found = self._filters.copy(kind, scope, where)
        if found is None:
            return None
        copy, allowed = found
        rows = copy.matrix_rows(index)[allowed]
        rows = np.sort(rows[rows >= 0])  # in memory order: gathering them is ~2x faster
        if rows.size > matrix_search.POST_FILTER_FETCH_MAX:
            permitted = np.zeros(len(uuids), dtype=bool)
            permitted[rows] = True

            def passing(nearest: list[int]) -> set[int]:
                at = np.asarray(nearest, dtype=np.int64)
                return set(at[permitted[at]].tolist())

            hits = matrix_search.post_filtered(self.ann, key, uuids, matrix, vector, passing, limit)
            if hits is not None:
                return hits
        scores = cosines(matrix[rows], vector)
        top = best(scores, limit, lambda i: uuids[int(rows[i])])
        return [(uuids[int(rows[i])], score) for i, score in top]

    def preload(self, kind: type[Record], owner_uuid: str) -> int:
        """Read the owner's matrix into the cache (and start its HNSW index when it is
        big enough for one); the rows it holds."""
        uuids, _, matrix = self._matrix(kind, owner_uuid)
        if uuids:
            self.ann.prepare((rowmap.table(kind), owner_uuid), uuids, matrix)
        return len(uuids)

    def _current(
        self, kind: type[Record], owner_uuid: str
    ) -> tuple[dict[str, int], npt.NDArray[np.float32]] | None:
        """The owner's cached matrix (row index, matrix) if it is at the owner's committed
        version; None when it is not cached or behind (nothing is read here)."""
        table = rowmap.table(kind)
        cached = self.matrices.get((table, owner_uuid))
        if cached is None:
            return None
        with self.db.reader_lock:
            version = self._version(table, owner_uuid)
        return (cached[2], cached[3]) if cached[0] == version else None

    def _version(self, table: str, owner_uuid: str) -> int:
        """The owner's committed embedding version (the caller holds the reader lock)."""
        rows = self.db.reader.execute(
            "SELECT version FROM embedding_versions WHERE kind = ? AND owner_uuid = ?",
            [table, owner_uuid],
        ).fetchall()
        return int(rows[0][0]) if rows else 0

    def _matrix(
        self, kind: type[Record], owner_uuid: str
    ) -> tuple[list[str], dict[str, int], npt.NDArray[np.float32]]:
        """The owner's vectors as one matrix, cached until its version counter moves."""
        table = rowmap.table(kind)
        with self.db.reader_lock:
            version = self._version(table, owner_uuid)
            key = (table, owner_uuid)
            cached = self.matrices.get(key)
            if cached is not None and cached[0] == version:
                self.matrices.count(hit=True)
                return cached[1], cached[2], cached[3]
            self.matrices.count(hit=False)
            if cached is not None:
                caught_up = self._catch_up(key, cached, version)
                if caught_up is not None:
                    self.matrices.put(key, (version, *caught_up))
                    return caught_up
            data = self.db.reader.execute(
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
        self.matrices.put(key, (version, uuids, index, matrix))
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
        self.ann.note_update(key, matrix, grown, changed, len(uuids))
        return [*uuids, *added], new_index, grown
