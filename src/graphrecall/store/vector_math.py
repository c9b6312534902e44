"""Exact vector scoring shared by every backend's in-memory vector leg."""

from __future__ import annotations

import heapq
from collections.abc import Callable

import numpy as np
import numpy.typing as npt

Vector = npt.NDArray[np.float32]


def cosines(matrix: npt.NDArray[np.float32], vector: Vector) -> npt.NDArray[np.float32]:
    """Each row's dot product with ``vector`` (cosines: the vectors are normalised), on
    the calling thread: numpy's own loop, not BLAS, whose worker threads would take the
    core the search's other leg runs on."""
    scores: npt.NDArray[np.float32] = np.einsum("ij,j->i", matrix, vector)
    return scores


def best(
    scores: npt.NDArray[np.float32], limit: int, uuid_of: Callable[[int], str]
) -> list[tuple[int, float]]:
    """The ``limit`` best of ``scores`` as (position, score), best first, equal scores by
    the uuid of their position: which of tied rows are kept, and their order, must not
    depend on the order vectors were stored in (identical texts have identical vectors)."""
    n = scores.shape[0]
    k = min(limit, n)
    if k <= 0:
        return []
    top = np.argpartition(-scores, k - 1)[:k]
    kth = scores[top].min()
    if np.count_nonzero(scores == kth) > np.count_nonzero(scores[top] == kth):
        # Rows left out tie with the k-th best: those with the smallest uuids make the cut.
        better = np.flatnonzero(scores > kth).tolist()
        candidates = np.flatnonzero(scores == kth).tolist()
        tied = heapq.nsmallest(k - len(better), candidates, key=uuid_of)
        top = np.asarray([*better, *tied], dtype=np.int64)
    top = top[np.argsort(-scores[top], kind="stable")]
    ranked = top.tolist()
    if np.any(np.diff(scores[top]) == 0):
        ranked.sort(key=lambda i: (-float(scores[i]), uuid_of(i)))
    return [(i, float(scores[i])) for i in ranked]
