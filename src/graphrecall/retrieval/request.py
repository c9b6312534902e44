"""What a search is asked (``SearchOptions``) and what it answers (``Hit``): the types
the search core, its rerankers and its callers share."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime

from graphrecall.domain.errors import BadRequest
from graphrecall.domain.predicates import Predicate

# A reranker's name: one of retrieval/rerank's registry (rerank.NAMES).
Reranker = str
DEFAULT_RERANKER = "rrf"


class InvalidRequest(BadRequest):
    code = "invalid_request"


@dataclass(frozen=True)
class SearchOptions:
    query: str
    reranker: Reranker = DEFAULT_RERANKER
    mmr_lambda: float | None = None
    center_node_uuid: str | None = None
    bfs_origins: tuple[str, ...] = ()
    where: Predicate | None = None
    mention_episodes: tuple[str, ...] = ()
    filter_low_quality: bool = False
    limit: int = 100
    candidates: int = 100
    legs: tuple[str, ...] = ("bm25", "vector", "bfs")
    weights: Mapping[str, float] | None = None
    # Text the vector leg embeds when it differs from the lexical ``query``.
    vector_query: str | None = None
    # Vector candidates below this cosine similarity are dropped.
    min_similarity: float | None = None
    # The period the query names (start, end; aware datetimes, None = open): the time leg.
    time_window: tuple[datetime | None, datetime | None] | None = None


@dataclass
class Hit:
    uuid: str
    score: float
    relevance: float | None = None
