"""What every reranker is: a name, the scopes that accept it, what it needs asked, and
one function from the fused candidate list to ranked hits. None of them drops a
candidate (except ``filter_low_quality_results``, which the caller asks for); they only
reorder and score."""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field

from graphrecall.domain.scopes import SearchScope
from graphrecall.ml.cross_encoder import CrossEncoder
from graphrecall.retrieval.request import Hit, SearchOptions
from graphrecall.store.base import Store, Vector

# The graph scopes (every searchable kind but Memory Engine memories).
GRAPH_SCOPES = frozenset({"edges", "nodes", "episodes", "observations", "thread_summaries"})


@dataclass(frozen=True)
class RerankInput:
    store: Store
    cross_encoder: CrossEncoder | None
    spec: SearchScope
    owner_uuid: str
    opts: SearchOptions
    fused: list[tuple[str, float]]  # the fused candidates, best first, with RRF scores
    query_vector: Vector | None
    leg_scores: dict[str, dict[str, float]]  # each leg's own scores (bm25, vector)


@dataclass(frozen=True)
class Reranker:
    name: str
    rank: Callable[[RerankInput], list[Hit]]
    scopes: frozenset[str]  # the search scopes that accept it
    # The request fields it cannot rank without: (field asked, what the error names).
    requires: Callable[[SearchOptions], tuple[str, str] | None] = field(default=lambda _opts: None)
    needs_query_vector: bool = False
    # It orders by a relevance of its own (0..1, the hits' ``relevance``) and ignores the
    # fused order: the legs that only reorder the fused list are not run for it, and
    # ``filter_low_quality_results`` may cut on its relevance.
    scores_relevance: bool = False


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
