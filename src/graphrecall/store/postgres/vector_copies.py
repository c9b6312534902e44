"""In-memory copies of owners' vector matrices on PostgreSQL (the shared
:class:`~graphrecall.store.matrix_cache.MatrixCache`, searched by
``store/matrix_search.py`` with the shared HNSW indexes, as on SQLite), kept current
from a change log.

Every embedding written or dropped is logged in ``vector_changes`` by statement
triggers, in the writing transaction, numbered in commit order (``migrations.py``,
migration 14). Each search asks for the log's newest number (one indexed ``max``):
while it is its copy's, the copy is current, whichever process wrote; otherwise the
search reads that owner's vectors logged since (one query) and applies them, when they
are few (:data:`INLINE_MAX`) and none was dropped. Else the copy is read again: by the
search itself for an owner of at most :data:`INLINE_LOAD_ROWS` vectors, in the
background for a bigger one, while pgvector answers (``vectors.py``). An owner whose
matrix would take more than half the cache's bound is never copied: pgvector's HNSW
index answers for it.

A copy is read after the log position it is stamped with, so a write it already holds
may be applied again from the log, which changes nothing.
"""

from __future__ import annotations

import contextvars
import logging
import threading
import time
from concurrent.futures import Future, ThreadPoolExecutor, wait
from typing import Any, overload

import numpy as np
import numpy.typing as npt

from graphrecall.store.matrix_cache import ROW_OVERHEAD_BYTES, Entry, MatrixCache
from graphrecall.store.postgres import positions
from graphrecall.store.postgres.connection import Database
from graphrecall.store.vector_index import Key, VectorIndexes

log = logging.getLogger(__name__)

Matrix = npt.NDArray[np.float32]
Copy = tuple[list[str], dict[str, int], Matrix]

# Owners with at most this many vectors are read by the search that first needs them
# (the exact-scan size: ~30 ms at 20k); bigger ones in the background.
INLINE_LOAD_ROWS = 20_000
# A search applies at most this many vectors logged since its copy; more, and the copy is
# read again.
INLINE_MAX = 200
# A copy more than this many log entries (of any owner) behind is read again whole; the
# log keeps at least this many (``prune_log``).
LOG_SCAN_MAX = 50_000
# The widest vectors the size bound assumes before a copy is read (the HNSW dimension).
ASSUMED_DIMS = 384


def stacked(blobs: list[bytes]) -> Matrix:
    """pgvector's binary vectors (a 4-byte header, then big-endian float32s) as one
    matrix, without a Python loop over the rows."""
    if not blobs:
        return np.zeros((0, 0), dtype=np.float32)
    width = len(blobs[0])
    if any(len(b) != width for b in blobs):
        raise ValueError("vectors of different dimensions under one owner")
    raw = np.frombuffer(b"".join(blobs), dtype=np.uint8).reshape(len(blobs), width)
    return np.ascontiguousarray(raw[:, 4:]).view(">f4").astype(np.float32)


class VectorCopies:
    def __init__(self, db: Database) -> None:
        self.db = db
        self.matrices = MatrixCache()
        self.ann = VectorIndexes()
        self._lock = threading.Lock()
        self._busy: set[Key] = set()  # owners being read in the background
        self._big: set[Key] = set()  # owners found with too many vectors to read inline
        self._ahead: dict[Key, Future[None]] = {}  # owners being read ahead (``prefetch``)
        self._reader = ThreadPoolExecutor(max_workers=2, thread_name_prefix="vector-ahead")
        self._closed = False

    def max_rows(self) -> int:
        """The most vectors an owner may have to be copied."""
        return self.matrices.max_bytes // 2 // (4 * ASSUMED_DIMS + ROW_OVERHEAD_BYTES)

    def prefetch(self, key: Key) -> None:
        """Read ``key``'s copy apart now when there is none (a search is about to want
        it): its first search then waits only for what is left of the read."""
        if self._closed or self.db.in_transaction():
            return
        with self._lock:
            if key in self._ahead or key in self._busy or self.matrices.get(key) is not None:
                return
            # In the request's context: the read shares its read point's log position.
            work = contextvars.copy_context().run
            self._ahead[key] = self._reader.submit(work, self._read_ahead, key)

    def _read_ahead(self, key: Key) -> None:
        try:
            self._load(key)
        except Exception:  # a cache: the search reads it itself
            log.exception("vector copy of %s/%s not read ahead", *key)
        finally:
            with self._lock:
                self._ahead.pop(key, None)

    def current(self, key: Key) -> tuple[Copy | None, int]:
        """(the copy of ``key``'s matrix as of the log's newest entry, else None:
        pgvector answers; how many vectors the owner has), in one round trip when the
        copy is current (after the read ahead, if one is under way)."""
        with self._lock:
            ahead = self._ahead.get(key)
        if ahead is not None:
            wait([ahead])
        return self._load(key)

    def _load(self, key: Key) -> tuple[Copy | None, int]:
        if self.db.in_transaction() or self._closed:
            return None, self._count(key)  # a transaction's own writes are in no copy
        last, floor = positions.current(self.db).vectors
        cached = self.matrices.get(key)
        # Current (a copy read later than the read point holds all it must): no statement.
        limit = self.max_rows()
        if cached is not None and cached[0] >= last and len(cached[1]) <= limit:
            self.matrices.count(hit=True)
            return (cached[1], cached[2], cached[3]), len(cached[1])
        if cached is None and key not in self._big:
            # A first read: the rows themselves, unless there are too many to read here
            # (the count, a round trip, is only needed then).
            entry = self._read(key, last, most=min(INLINE_LOAD_ROWS, limit))
            if entry is not None:
                self.matrices.count(hit=False)
                self.matrices.put(key, entry)
                return (entry[1], entry[2], entry[3]), len(entry[1])
            with self._lock:
                self._big.add(key)
        rows = self._count(key)
        if rows > limit:
            return None, rows
        return self._current(key, rows, last, floor), rows

    def _count(self, key: Key) -> int:
        """How many vectors of its kind the owner has."""
        table, owner = key
        found = self.db.query(
            "SELECT n FROM embedding_counts WHERE owner_uuid = %s AND kind = %s", [owner, table]
        )
        return int(found[0]["n"] or 0) if found else 0

    def _current(self, key: Key, rows: int, last: int, floor: int) -> Copy | None:
        cached = self.matrices.get(key)
        if cached is not None and cached[0] >= last:
            self.matrices.count(hit=True)
            return cached[1], cached[2], cached[3]
        self.matrices.count(hit=False)
        if cached is not None and cached[0] >= floor and last - cached[0] <= LOG_SCAN_MAX:
            try:
                fresh = self._catch_up(key, cached, last)
            except Exception:  # a cache: read it again
                log.exception("vector copy of %s/%s not caught up", *key)
                fresh = None
            if fresh is not None:
                self.matrices.put(key, fresh)
                return fresh[1], fresh[2], fresh[3]
        if rows <= INLINE_LOAD_ROWS:
            entry = self._read(key, last)
            self.matrices.put(key, entry)
            return entry[1], entry[2], entry[3]
        with self._lock:
            if key not in self._busy:
                self._busy.add(key)
                threading.Thread(
                    target=self._read_apart, args=(key,), name="vector-copy", daemon=True
                ).start()
        return None

    @overload
    def _read(self, key: Key, last: int) -> Entry: ...

    @overload
    def _read(self, key: Key, last: int, most: int) -> Entry | None: ...

    def _read(self, key: Key, last: int, most: int | None = None) -> Entry | None:
        """The owner's vectors whole, stamped with ``last``, a log entry read before;
        None when it has more than ``most`` (unless None)."""
        table, owner = key
        cap = "" if most is None else f" LIMIT {int(most) + 1}"
        with self.db.connection() as conn:
            found = conn.execute(
                "SELECT uuid, embedding AS v FROM embeddings"
                f" WHERE owner_uuid = %s AND kind = %s ORDER BY uuid{cap}",
                [owner, table],
                binary=True,
            ).fetchall()
        if most is not None and len(found) > most:
            return None
        uuids = [str(r["uuid"]) for r in found]
        matrix = stacked([r["v"] for r in found])
        return last, uuids, {u: i for i, u in enumerate(uuids)}, matrix

    def _read_apart(self, key: Key) -> None:
        started = time.monotonic()
        try:
            entry = self._read(key, positions.read(self.db).vectors[0])
            if not self._closed:
                self.matrices.put(key, entry)
                # Start the HNSW build now, not at the next search: the searches after
                # this one find it ready sooner, and benchmarks wait for both.
                self.ann.prepare(key, entry[1], entry[3])
                log.info(
                    "vector copy of %s/%s: %d rows in %.2f s",
                    *key,
                    len(entry[1]),
                    time.monotonic() - started,
                )
        except Exception:  # a cache: pgvector keeps answering
            log.exception("vector copy of %s/%s not read", *key)
        finally:
            with self._lock:
                self._busy.discard(key)

    def _catch_up(self, key: Key, cached: Entry, last: int) -> Entry | None:
        """``cached`` with the vectors logged since applied (a new matrix: the old one
        may be in use), or None when too many changed, one was dropped, or one's width
        differs: then the copy is read again."""
        table, owner = key
        seq, uuids, index, matrix = cached
        with self.db.connection() as conn:
            found: list[dict[str, Any]] = conn.execute(
                "SELECT c.uuid, e.embedding AS v FROM (SELECT DISTINCT uuid FROM vector_changes"
                " WHERE owner_uuid = %s AND kind = %s AND seq > %s AND seq <= %s"
                f" LIMIT {INLINE_MAX + 1}) c LEFT JOIN embeddings e"
                " ON e.owner_uuid = %s AND e.kind = %s AND e.uuid = c.uuid",
                [owner, table, seq, last, owner, table],
                binary=True,
            ).fetchall()
        if not found:
            return last, uuids, index, matrix  # other owners' writes
        if len(found) > INLINE_MAX or any(r["v"] is None for r in found) or not uuids:
            return None
        latest = {str(r["uuid"]): r["v"] for r in found}
        fresh = stacked(list(latest.values()))
        if fresh.shape[1] != matrix.shape[1]:
            return None  # another model's vectors: start over
        row_of = dict(zip(latest, range(len(latest)), strict=True))
        added = [u for u in latest if u not in index]
        grown = np.concatenate([matrix, fresh[[row_of[u] for u in added]]])
        changed = np.fromiter((index[u] for u in latest if u in index), dtype=np.int64)
        grown[changed] = fresh[[row_of[u] for u in latest if u in index]]
        new_index = dict(index)
        for u in added:
            new_index[u] = len(new_index)
        self.ann.note_update(key, matrix, grown, changed, len(uuids))
        return last, [*uuids, *added], new_index, grown

    def prune_log(self) -> bool:
        """Drop all but the newest LOG_SCAN_MAX entries of the log once it holds twice as
        many, raising its floor (a copy read before it is read again whole)."""
        found = self.db.query("SELECT min(seq) AS first, max(seq) AS last FROM vector_changes")
        first, last = found[0]["first"], found[0]["last"]
        if first is None or int(last) - int(first) < 2 * LOG_SCAN_MAX:
            return False
        floor = int(last) - LOG_SCAN_MAX
        with self.db.transaction():
            self.db.execute("DELETE FROM vector_changes WHERE seq <= %s", [floor])
            self.db.execute("UPDATE vector_log_floor SET seq = greatest(seq, %s)", [floor])
        return True

    def status(self) -> dict[str, int]:
        """HNSW indexes ready and building, counting copies read in the background."""
        with self._lock:
            loading = len(self._busy)
        found = self.ann.status()
        return {"ready": found["ready"], "building": found["building"] + loading}

    def close(self) -> None:
        self._closed = True
        self._reader.shutdown(wait=False, cancel_futures=True)
        self.ann.close()
