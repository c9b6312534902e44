"""Exact vector scoring shared by every backend's in-memory vector leg."""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

Vector = npt.NDArray[np.float32]


def cosines(matrix: npt.NDArray[np.float32], vector: Vector) -> npt.NDArray[np.float32]:
    """Each row's dot product with ``vector`` (cosines: the vectors are normalised), on
    the calling thread: numpy's own loop, not BLAS, whose worker threads would take the
    core the search's other leg runs on."""
    scores: npt.NDArray[np.float32] = np.einsum("ij,j->i", matrix, vector)
    return scores


def best(scores: npt.NDArray[np.float32], limit: int) -> list[tuple[int, float]]:
    """The ``limit`` best of ``scores`` as (position, score), best first."""
    k = min(limit, scores.shape[0])
    if k <= 0:
        return []
    top = np.argpartition(-scores, k - 1)[:k]
    top = top[np.argsort(-scores[top], kind="stable")]
    return [(int(i), float(scores[i])) for i in top]
