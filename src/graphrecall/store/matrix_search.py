"""The vector leg over an owner's in-memory matrix, shared by every backend that keeps one
(``sqlite/vectors.py``; ``postgres/vectors.py`` while its copy is current): exact cosine,
or the HNSW index (``vector_index.py``) for big owners, and filters applied inside
candidate generation, never by trimming a finished top-k. The backend says which rows a
filter allows (:class:`Filter`); this module ranks them."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from graphrecall.store.vector_index import Key, VectorIndexes
from graphrecall.store.vector_math import best, cosines

Matrix = npt.NDArray[np.float32]
Hits = list[tuple[str, float]]

# A filtered search over an HNSW index checks this many nearest rows against the filter.
POST_FILTER_FETCH = 1_000
POST_FILTER_FETCH_MAX = 20_000


@dataclass(frozen=True)
class Filter:
    """What a backend knows of a filter narrower than the owner: whether an index bounds
    it to a few rows, all the rows it allows, which of some rows it allows, and (where the
    backend has in-memory filter columns) the page itself, or None when SQL must filter."""

    bounded: bool
    allowed: Callable[[], Iterable[str]]
    passing: Callable[[list[str]], set[str]]
    in_memory: Callable[[], Hits | None] | None = None


def search(
    ann: VectorIndexes,
    key: Key,
    uuids: list[str],
    index: dict[str, int],
    matrix: Matrix,
    vector: Matrix,
    limit: int,
    flt: Filter | None,
) -> Hits:
    """The best ``limit`` rows (uuid, cosine), best first, equal scores by uuid."""
    if not uuids:
        return []
    if flt is None:
        approximate = ann.search(key, uuids, matrix, vector, limit)
        if approximate is not None:
            hits = [(uuids[row], score) for row, score in approximate]
            return sorted(hits, key=lambda h: (-h[1], h[0]))
        rows = np.arange(len(uuids))
        scores = cosines(matrix, vector)
    else:
        if not flt.bounded and len(uuids) >= ann.min_rows:
            found = flt.in_memory() if flt.in_memory is not None else None
            if found is None:

                def passing(candidates: list[int]) -> set[int]:
                    ok = flt.passing([uuids[r] for r in candidates])
                    return {r for r in candidates if uuids[r] in ok}

                found = post_filtered(ann, key, uuids, matrix, vector, passing, limit)
            if found is not None:
                return found
        rows = np.fromiter((index[u] for u in flt.allowed() if u in index), dtype=np.int64)
        if rows.size == 0:
            return []
        scores = cosines(matrix[rows], vector)
    top = best(scores, limit, lambda i: uuids[int(rows[i])])
    return [(uuids[int(rows[i])], score) for i, score in top]


def post_filtered(
    ann: VectorIndexes,
    key: Key,
    uuids: list[str],
    matrix: Matrix,
    vector: Matrix,
    passing: Callable[[list[int]], set[int]],
    limit: int,
) -> Hits | None:
    """A big owner's best ``limit`` rows that pass a filter (``passing`` tells which of
    some rows do), found by checking its nearest rows against the filter; None when there
    is no index yet or the filter passes too few of them: then every allowed row is
    scored exactly."""
    fetch = POST_FILTER_FETCH
    nearest = ann.search(key, uuids, matrix, vector, fetch)
    checked: set[int] = set()
    hits: Hits = []
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
        # Once more, as deep as this pass rate needs (with a margin), checking only the
        # rows not checked yet.
        fetch = max(2 * fetch, int(1.5 * limit * fetch / len(hits)))
        if fetch > POST_FILTER_FETCH_MAX:
            return None
        nearest = ann.search(key, uuids, matrix, vector, fetch)
    return None
