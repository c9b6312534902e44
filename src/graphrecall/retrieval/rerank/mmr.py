"""``mmr``: maximal marginal relevance, for results that do not repeat each other."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np

from graphrecall.retrieval.request import Hit, SearchOptions
from graphrecall.retrieval.rerank.base import GRAPH_SCOPES, Reranker, RerankInput
from graphrecall.store.base import Vector


def rank(given: RerankInput) -> list[Hit]:
    lam = given.opts.mmr_lambda
    assert lam is not None
    order = [u for u, _ in given.fused]
    vectors = given.store.get_embeddings(given.spec.kind, given.owner_uuid, order)
    picked = mmr(order, given.query_vector, vectors, dict(given.fused), lam)
    return [Hit(u, s) for u, s in picked]


def _requires(opts: SearchOptions) -> tuple[str, str] | None:
    return ("mmr_lambda", "mmr_lambda") if opts.mmr_lambda is None else None


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


RERANKER = Reranker("mmr", rank, GRAPH_SCOPES, _requires, needs_query_vector=True)
