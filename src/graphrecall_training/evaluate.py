"""Evidence recall of an embedding function: for each question, the share of its evidence
turns among the first k of its candidate turns ranked by cosine (vector alone), and
fused with BM25 by RRF (k 60, both weighted 1). The same measure as the benchmarks'
evidence recall, on raw turns and without a server: a quick, honest proxy for deciding
whether a trained model is worth judging with ``graphrecall bench judge``.

Sets: the training packs' held-out split; for evaluation only, LoCoMo (every sample's
turns) and the LongMemEval dev set (each question's haystack).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from graphrecall.library import locomo
from graphrecall_training import data, passages
from graphrecall_training.mine import Encoder, bm25_order

KS = (5, 10, 25)
RRF_K = 60


@dataclass(frozen=True)
class Case:
    query: str
    texts: tuple[str, ...]  # the candidates, as the product embeds them
    evidence: frozenset[int]  # indexes into texts


def recall(cases: Sequence[Case], encode: Encoder) -> dict[str, float]:
    """Evidence recall@k (percent) for the vector ranking and for RRF with BM25."""
    sums: dict[str, float] = {f"{how}@{k}": 0.0 for how in ("vector", "rrf") for k in KS}
    for case in cases:
        by_vector = vector_order(case, encode)
        by_rrf = rrf_order(case, encode, by_vector)
        for how, order in (("vector", by_vector), ("rrf", by_rrf)):
            for k in KS:
                found = len(case.evidence.intersection(order[:k]))
                sums[f"{how}@{k}"] += found / len(case.evidence)
    return {key: round(100 * value / max(len(cases), 1), 2) for key, value in sums.items()}


def vector_order(case: Case, encode: Encoder) -> list[int]:
    vectors = encode([case.query, *case.texts])
    cosine = vectors[1:] @ vectors[0]
    return [int(i) for i in np.argsort(-cosine, kind="stable")]


def rrf_order(case: Case, encode: Encoder, by_vector: list[int] | None = None) -> list[int]:
    """The candidates by RRF of the vector and BM25 rankings; every candidate is ranked
    (the vector ranking holds them all)."""
    fused: dict[int, float] = {}
    for order in (by_vector or vector_order(case, encode), bm25_order(case.query, case.texts)):
        for rank, i in enumerate(order):
            fused[i] = fused.get(i, 0.0) + 1.0 / (RRF_K + rank + 1)
    return sorted(fused, key=lambda i: (-fused[i], i))


def held_out_cases(pack: data.Pack) -> list[Case]:
    _, kept = data.split(pack.questions)
    return [_case(pack, q.text, pack.candidates(q), q.evidence) for q in kept]


def _case(pack: data.Pack, query: str, ids: Sequence[str], evidence: Sequence[str]) -> Case:
    index = {t: i for i, t in enumerate(ids)}
    return Case(
        query,
        tuple(passages.text(pack, t) for t in ids),
        frozenset(index[e] for e in evidence if e in index),
    )


def locomo_cases(path: Path) -> list[Case]:
    """Every LoCoMo question with evidence, over its sample's turns (evaluation only)."""
    cases = []
    for sample in locomo.load(path):
        turns: dict[str, data.Turn] = {}
        order: list[str] = []
        for session in sample.sessions:
            day = session.reference_time.strftime("%Y/%m/%d")
            for t in session.turns:
                turns[t.dia_id] = data.Turn(t.dia_id, t.speaker, t.content, day)
                order.append(t.dia_id)
        pack = data.Pack(turns, {"c": tuple(order)}, [])
        for q in sample.questions:
            if q.evidence:
                cases.append(_case(pack, q.question, order, q.evidence))
    return cases


def longmemeval_cases(path: Path) -> list[Case]:
    """Every LongMemEval dev question with evidence turns, over its haystack."""
    raw = data.read_json(path)
    cases = []
    for item in raw:
        turns: dict[str, data.Turn] = {}
        conversations: dict[str, tuple[str, ...]] = {}
        evidence = []
        for sid, date, session in zip(
            item["haystack_session_ids"],
            item["haystack_dates"],
            item["haystack_sessions"],
            strict=True,
        ):
            ids = []
            for n, turn in enumerate(session):
                tid = f"{sid}_{n}"
                turns[tid] = data.Turn(tid, turn["role"], turn["content"], date)
                ids.append(tid)
                if turn.get("has_answer"):
                    evidence.append(tid)
            conversations[sid] = tuple(ids)
        if evidence:
            pack = data.Pack(turns, conversations, [])
            order = [t for ids in conversations.values() for t in ids]
            cases.append(_case(pack, item["question"], order, evidence))
    return cases
