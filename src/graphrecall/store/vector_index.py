"""Approximate nearest neighbours for owners with many vectors (HNSW, from faiss-cpu).

Exact search reads every vector of the owner: ~14 ms per query at 100k facts on this
machine and ~0.4 s at 1M. Above :data:`ANN_MIN_ROWS` vectors an HNSW graph (inner product
on normalised vectors = cosine) answers in about a millisecond; at 100k facts 98 % of its
top 10 score at least the exact 10th best (docs/search.md has the measurements). Below
it, and for filtered searches (the allowed rows are scored exactly), search stays exact.

An index is built in one background thread from a snapshot of the owner's matrix; until it
is ready, search is exact. Writes do not wait for a rebuild: vectors added or changed since
the snapshot (the *delta*) are scored exactly beside the index, and rows that were deleted
or changed are dropped from its answers, so every result is a current vector with its
exact cosine. When the delta passes :data:`REBUILD_SHARE` of the snapshot, a new index is
built in the background.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Sequence
from dataclasses import dataclass

import faiss
import numpy as np
import numpy.typing as npt

log = logging.getLogger(__name__)
# One thread: builds run in the background of a server that is answering requests.
faiss.omp_set_num_threads(1)

Matrix = npt.NDArray[np.float32]
Key = tuple[str, str]  # (table, owner uuid)

ANN_MIN_ROWS = 20_000
HNSW_M = 32
EF_CONSTRUCTION = 80
EF_SEARCH = 512  # at least the number of results asked for
REBUILD_SHARE = 0.1


@dataclass(frozen=True)
class Snapshot:
    """An HNSW index over a copy of an owner's vectors at one moment."""

    uuids: list[str]
    matrix: Matrix
    index: faiss.Index


@dataclass(frozen=True)
class Alignment:
    """How a snapshot lines up with the owner's current matrix."""

    matrix: Matrix  # the current matrix this was computed for
    current_of: npt.NDArray[np.int64]  # snapshot row -> current row, -1 if gone or changed
    snapshot_of: npt.NDArray[np.int64]  # current row -> snapshot row, -1 if new or changed
    delta: npt.NDArray[np.int64]  # current rows the snapshot lacks (new or changed)


class VectorIndexes:
    """The HNSW indexes of one store, per (table, owner)."""

    def __init__(self, min_rows: int | None = None) -> None:
        self.min_rows = ANN_MIN_ROWS if min_rows is None else min_rows
        self._lock = threading.Lock()
        self._snapshots: dict[Key, Snapshot] = {}
        self._alignments: dict[Key, Alignment] = {}
        self._building: set[Key] = set()
        # One build at a time, each on a daemon thread: closing the store (or the process)
        # never waits for a build, which takes minutes at a million vectors.
        self._one_build = threading.Lock()
        self._closed = False

    def status(self) -> dict[str, int]:
        with self._lock:
            return {"ready": len(self._snapshots), "building": len(self._building)}

    def close(self) -> None:
        self._closed = True  # builds not yet started are skipped

    def prepare(self, key: Key, uuids: Sequence[str], matrix: Matrix) -> None:
        """Start building ``key``'s index now if it is big enough and has none."""
        if len(uuids) < self.min_rows:
            return
        with self._lock:
            if key not in self._snapshots:
                self._schedule(key, list(uuids), matrix)

    def search(
        self, key: Key, uuids: Sequence[str], matrix: Matrix, vector: Matrix, limit: int
    ) -> list[tuple[int, float]] | None:
        """The best ``limit`` rows of ``matrix`` as (row, cosine), or None when the caller
        should search exactly (too few vectors, or no index built yet)."""
        if len(uuids) < self.min_rows:
            return None
        with self._lock:
            snapshot = self._snapshots.get(key)
            if snapshot is None:
                self._schedule(key, list(uuids), matrix)
                return None
            alignment = self._alignments.get(key)
        if alignment is None or alignment.matrix is not matrix:
            alignment = _align(snapshot, uuids, matrix)
            with self._lock:
                self._alignments[key] = alignment
                if alignment.delta.size > REBUILD_SHARE * len(snapshot.uuids):
                    self._schedule(key, list(uuids), matrix)
        return _search(snapshot, alignment, matrix, vector, limit)

    def note_update(
        self,
        key: Key,
        old: Matrix,
        new: Matrix,
        changed: npt.NDArray[np.int64],
        first_added: int,
    ) -> None:
        """``new`` is ``old`` with the rows ``changed`` rewritten and rows from
        ``first_added`` on appended: carry the alignment over without comparing every
        vector again (that costs ~0.4 s at 100k)."""
        with self._lock:
            alignment = self._alignments.get(key)
            if alignment is None or alignment.matrix is not old:
                return
            current_of = alignment.current_of.copy()
            snapshot_of = np.concatenate(
                [alignment.snapshot_of, np.full(len(new) - first_added, -1, dtype=np.int64)]
            )
            stale = snapshot_of[changed]
            current_of[stale[stale >= 0]] = -1
            snapshot_of[changed] = -1
            added = np.arange(first_added, len(new), dtype=np.int64)
            delta = np.unique(np.concatenate([alignment.delta, changed, added]))
            self._alignments[key] = Alignment(new, current_of, snapshot_of, delta)

    def _schedule(self, key: Key, uuids: list[str], matrix: Matrix) -> None:
        """Build an index for this matrix in the background (caller holds the lock)."""
        if key in self._building:
            return
        self._building.add(key)
        threading.Thread(
            target=self._build, args=(key, uuids, matrix), name="graphrecall-ann", daemon=True
        ).start()

    def _build(self, key: Key, uuids: list[str], matrix: Matrix) -> None:
        try:
            with self._one_build:
                if not self._closed:
                    self._build_now(key, uuids, matrix)
        except Exception:  # the exact search keeps answering; say why the index is missing
            log.exception("building the vector index for %s/%s failed", *key)
        finally:
            with self._lock:
                self._building.discard(key)

    def _build_now(self, key: Key, uuids: list[str], matrix: Matrix) -> None:
        index = faiss.IndexHNSWFlat(matrix.shape[1], HNSW_M, faiss.METRIC_INNER_PRODUCT)
        index.hnsw.efConstruction = EF_CONSTRUCTION
        index.add(np.ascontiguousarray(matrix))
        snapshot = Snapshot(uuids, matrix, index)
        # Built from this very matrix: every row is in the index, nothing is stale.
        rows = np.arange(len(uuids), dtype=np.int64)
        identity = Alignment(matrix, rows, rows, np.zeros(0, dtype=np.int64))
        with self._lock:
            self._snapshots[key] = snapshot
            self._alignments[key] = identity
        log.info("vector index ready for %s/%s: %d vectors", key[0], key[1], len(uuids))


def _align(snapshot: Snapshot, uuids: Sequence[str], matrix: Matrix) -> Alignment:
    row_of = {u: i for i, u in enumerate(snapshot.uuids)}
    old = np.fromiter((row_of.get(u, -1) for u in uuids), dtype=np.int64, count=len(uuids))
    present = old >= 0
    same = present.copy()
    same[present] = np.all(snapshot.matrix[old[present]] == matrix[present], axis=1)
    current_of = np.full(len(snapshot.uuids), -1, dtype=np.int64)
    current_of[old[same]] = np.nonzero(same)[0]
    return Alignment(matrix, current_of, np.where(same, old, -1), np.nonzero(~same)[0])


def _search(
    snapshot: Snapshot, alignment: Alignment, matrix: Matrix, vector: Matrix, limit: int
) -> list[tuple[int, float]]:
    # Ask for more than needed: rows deleted or changed since the snapshot are dropped.
    stale = int(np.count_nonzero(alignment.current_of < 0))
    fetch = min(len(snapshot.uuids), limit + min(stale, limit))
    # (missing from faiss's bundled type stubs)
    params = faiss.SearchParametersHNSW(efSearch=max(EF_SEARCH, fetch))  # type: ignore[attr-defined]
    scores, rows = snapshot.index.search(vector.reshape(1, -1), fetch, params=params)
    found: dict[int, float] = {}
    for row, score in zip(rows[0].tolist(), scores[0].tolist(), strict=True):
        current = int(alignment.current_of[row]) if row >= 0 else -1
        if current >= 0:
            found[current] = float(score)
    if alignment.delta.size:
        delta_scores = matrix[alignment.delta] @ vector
        k = min(limit, delta_scores.shape[0])
        top = np.argpartition(-delta_scores, k - 1)[:k]
        for i in top.tolist():
            found[int(alignment.delta[i])] = float(delta_scores[i])
    best = sorted(found.items(), key=lambda item: -item[1])
    return best[:limit]
