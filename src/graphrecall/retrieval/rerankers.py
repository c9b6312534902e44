"""Rerankers applied to the fused candidate list. None of them drops a candidate (except
``filter_low_quality_results``, which the caller asks for); they only reorder and score."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

import numpy as np

from graphrecall.retrieval.text import query_terms
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
    """
    if not candidates:
        return []
    top = max(fused_scores.get(c, 0.0) for c in candidates) or 1.0
    relevance = {
        c: float(vectors[c] @ query_vector)
        if query_vector is not None and c in vectors
        else fused_scores.get(c, 0.0) / top
        for c in candidates
    }
    remaining = list(candidates)
    picked: list[tuple[str, float]] = []
    picked_vectors: list[Vector] = []
    while remaining:
        best, best_value = remaining[0], -math.inf
        for c in remaining:
            redundancy = 0.0
            if picked_vectors and c in vectors:
                redundancy = max(float(v @ vectors[c]) for v in picked_vectors)
            value = lam * relevance[c] - (1 - lam) * redundancy
            if value > best_value:
                best, best_value = c, value
        remaining.remove(best)
        picked.append((best, best_value))
        if best in vectors:
            picked_vectors.append(vectors[best])
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


def lexical_overlap(query: str, text: str) -> float:
    """Share of the query's content words found in the text (after light stemming)."""
    terms = {_stem(t) for t in query_terms(query)}
    if not terms:
        return 0.0
    words = {_stem(t) for t in query_terms(text, max_terms=10_000)}
    return len(terms & words) / len(terms)


def _stem(word: str) -> str:
    for suffix in ("ing", "ed", "es", "s"):
        if len(word) > len(suffix) + 2 and word.endswith(suffix):
            return word[: -len(suffix)]
    return word


class BiEncoderScorer:
    """The offline default for the ``cross_encoder`` reranker: no cross-encoder weights
    ship on PyPI, so relevance is a calibrated blend of the bundled MiniLM cosine between
    query and passage and the share of query words the passage contains, squashed to
    [0, 1] with a logistic curve. ``relevance`` is that value."""

    name = "bi-encoder+lexical"

    def __init__(
        self, cosine_weight: float = 8.0, lexical_weight: float = 2.0, bias: float = -3.5
    ) -> None:
        self.cosine_weight = cosine_weight
        self.lexical_weight = lexical_weight
        self.bias = bias

    def score(
        self,
        query: str,
        passages: Sequence[str],
        query_vector: Vector | None,
        vectors: Sequence[Vector | None],
    ) -> list[float]:
        out = []
        for text, vector in zip(passages, vectors, strict=True):
            cosine = (
                float(np.dot(vector, query_vector))
                if (vector is not None and query_vector is not None)
                else 0.0
            )
            z = (
                self.cosine_weight * cosine
                + self.lexical_weight * lexical_overlap(query, text)
                + self.bias
            )
            out.append(1.0 / (1.0 + math.exp(-z)))
        return out
