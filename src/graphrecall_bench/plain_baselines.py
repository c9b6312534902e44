"""The plain baselines of the retrieval benchmarks: what anyone gets from a search index
in an afternoon, as the anchor the shipped search is measured against.

One conversation's turns are the documents, each ``"<speaker>: <text>"`` and nothing
else (no context columns, no facts, no dates). Three rankings of them:

- ``plain_bm25``: standard BM25 (k1 1.2, b 0.75) over the project's own tokens (FTS5's
  ``porter unicode61 remove_diacritics 2``) and its own BM25 arithmetic
  (``store/lexical``); a query is its distinct tokens, OR-ed;
- ``plain_cosine``: the bundled embedder's cosine between the question and each turn;
- ``plain_rrf``: their reciprocal-rank fusion, k 60, equal weights, over each list's
  first ``depth`` ranks.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from typing import TYPE_CHECKING

import numpy as np

from graphrecall.domain.scopes import Bm25
from graphrecall.store.lexical.postings import TermIndex, segment
from graphrecall.store.sqlite import fts5
from graphrecall.store.sqlite.migrations.sql import FTS_TOKENIZE

if TYPE_CHECKING:
    from graphrecall.ml.embedder import Embedder

PLAIN_BM25 = Bm25(k1=1.2, b=0.75)
RRF_K = 60
FUSE_DEPTH = 100
NAMES = ("plain_bm25", "plain_cosine", "plain_rrf")


def document(speaker: str, text: str) -> str:
    return f"{speaker}: {text}" if speaker else text


class PlainIndex:
    """BM25 postings and embeddings of one conversation's documents, ranked by id."""

    def __init__(
        self,
        ids: Sequence[str],
        texts: Sequence[str],
        embedder: Embedder,
        tokenizer: fts5.Tokenizer | None = None,
    ) -> None:
        if len(ids) != len(texts) or not ids:
            raise ValueError("PlainIndex needs as many ids as texts, at least one")
        self.ids = list(ids)
        self.tokenizer = tokenizer or fts5.Tokenizer(FTS_TOKENIZE)
        found = self.tokenizer.postings(["text"], [(i + 1, t) for i, t in enumerate(texts)])
        lengths = Counter(rowid for _, rowid, _ in found)
        postings = sorted(found)  # term order, then row: what ``segment`` reads
        seg = segment(
            [(i + 1, float(lengths.get(i + 1, 0))) for i in range(len(texts))],
            [(i + 1, "plain", doc_id) for i, doc_id in enumerate(self.ids)],
            postings,
            {"text": 1.0},
            {},
        )
        self.terms = TermIndex.read("plain", b"", 0, seg, {"plain": 0})
        self.embedder = embedder
        self.vectors = np.asarray(embedder.embed(list(texts)), dtype=np.float32)

    def query_terms(self, query: str) -> list[str]:
        return list(dict.fromkeys(self.tokenizer.tokens(query)))

    def bm25(self, query: str, depth: int) -> list[str]:
        terms = self.query_terms(query)
        if not terms:
            return []
        rowids = np.arange(1, len(self.ids) + 1, dtype=np.int64)
        scored = self.terms.scores(terms, rowids, PLAIN_BM25)
        # Best score first, ties in document order (stable, reproducible).
        order = sorted(scored, key=lambda r: (-scored[r], r))
        return [self.ids[r - 1] for r in order[:depth]]

    def cosine(self, query: str, depth: int) -> list[str]:
        q = np.asarray(self.embedder.embed([query]), dtype=np.float32)[0]
        sims = self.vectors @ q
        order = np.argsort(-sims, kind="stable")[:depth]
        return [self.ids[int(i)] for i in order]

    def rankings(self, query: str, depth: int) -> dict[str, list[str]]:
        """The three rankings, ``depth`` deep; the RRF fuses lists ``FUSE_DEPTH`` deep (or
        ``depth`` if deeper) so that its top does not depend on the page asked for."""
        fuse = max(depth, FUSE_DEPTH)
        bm25 = self.bm25(query, fuse)
        cosine = self.cosine(query, fuse)
        return {
            "plain_bm25": bm25[:depth],
            "plain_cosine": cosine[:depth],
            "plain_rrf": rrf([bm25, cosine])[:depth],
        }


def rrf(lists: Sequence[Sequence[str]], k: int = RRF_K) -> list[str]:
    """Reciprocal-rank fusion with equal weights: sum of 1 / (k + rank), rank from 1; ties
    by first appearance (the earlier list, then the earlier rank)."""
    score: dict[str, float] = {}
    for ranked in lists:
        for rank, doc_id in enumerate(ranked, start=1):
            score[doc_id] = score.get(doc_id, 0.0) + 1.0 / (k + rank)
    order = list(score)  # first-appearance order, kept by the stable sort
    return sorted(order, key=lambda d: -score[d])
