"""Training pairs: each question with one evidence turn (positive) and hard negatives
from the same conversation — the turns BM25 ranks highest and the turns the stock model
ranks highest that hold no evidence. Negatives from the same conversation are what a
memory search must tell apart (the same people, the same topic)."""

from __future__ import annotations

import math
import random
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from graphrecall.retrieval.text import query_terms
from graphrecall_training import passages
from graphrecall_training.data import Pack, Question

Encoder = Callable[[Sequence[str]], npt.NDArray[np.float32]]  # texts -> unit vectors
NEGATIVES_PER_SOURCE = 3


@dataclass(frozen=True)
class Pair:
    query: str
    positive: str
    negatives: tuple[str, ...]


def bm25_order(query: str, texts: Sequence[str], k1: float = 1.2, b: float = 0.75) -> list[int]:
    """Indexes of ``texts`` by BM25 for ``query`` (the product's stemmed terms), best first;
    texts matching no term are left out."""
    docs = [Counter(query_terms(t)) for t in texts]
    terms = set(query_terms(query))
    if not docs or not terms:
        return []
    average = sum(sum(d.values()) for d in docs) / len(docs) or 1.0
    df = {t: sum(1 for d in docs if t in d) for t in terms}
    n = len(docs)
    scores = []
    for i, d in enumerate(docs):
        length = sum(d.values())
        score = 0.0
        for t in terms:
            tf = d.get(t, 0)
            if tf:
                idf = math.log(1 + (n - df[t] + 0.5) / (df[t] + 0.5))
                score += idf * tf * (k1 + 1) / (tf + k1 * (1 - b + b * length / average))
        if score > 0:
            scores.append((score, i))
    return [i for _, i in sorted(scores, key=lambda s: (-s[0], s[1]))]


def pairs(
    pack: Pack,
    questions: Sequence[Question],
    stock: Encoder | None,
    seed: int,
    random_negatives: int = 0,
) -> list[Pair]:
    """One pair per (question, evidence turn), with up to NEGATIVES_PER_SOURCE negatives
    from BM25, as many from ``stock`` (when given), and ``random_negatives`` drawn from
    the rest of the conversation; none of them evidence."""
    rng = random.Random(seed)
    out: list[Pair] = []
    for q in questions:
        ids = pack.candidates(q)
        texts = [passages.text(pack, t) for t in ids]
        evidence = set(q.evidence)
        hard: list[str] = []
        for i in bm25_order(q.text, texts):
            if ids[i] not in evidence and len(hard) < NEGATIVES_PER_SOURCE:
                hard.append(texts[i])
        if stock is not None and texts:
            vectors = stock([q.text, *texts])
            similar = np.argsort(-(vectors[1:] @ vectors[0]), kind="stable")
            taken = 0
            for i in similar:
                if ids[i] not in evidence and texts[i] not in hard:
                    hard.append(texts[int(i)])
                    taken += 1
                    if taken == NEGATIVES_PER_SOURCE:
                        break
        said = {t for t, i in zip(texts, ids, strict=True) if i in evidence}
        rest = [t for t in dict.fromkeys(texts) if t not in said and t not in hard]
        hard += rng.sample(rest, min(random_negatives, len(rest)))
        for e in q.evidence:
            negatives = list(hard)
            rng.shuffle(negatives)
            out.append(Pair(q.text, passages.text(pack, e), tuple(negatives)))
    rng.shuffle(out)
    return out
