"""Ranking metrics of the retrieval benchmarks, over ranked id lists.

``recall_at``/``ndcg_at``/``covered`` are ``bench locomo``'s: the share of the relevant
items in the top k, and NDCG with binary gains discounted by ``log2(rank + 1)``.

``evaluate`` and ``evaluate_turn2session`` are LongMemEval's own
(``src/retrieval/eval_utils.py`` of the LongMemEval repository), rewritten over ranked
ids instead of corpus indices: recall_any@k (any relevant item in the top k),
recall_all@k (all of them) and its NDCG, whose DCG gives the first two ranks full gain
(``rel[0] + sum(rel[i] / log2(i + 1))`` for i >= 1) and whose ideal is taken over the
whole corpus. At the session level a turn ranking is read as LongMemEval reads it: every
turn stands for its session, and k grows until the top k turns name k distinct sessions
(or the corpus ends), so the duplicates of a session count in NDCG as upstream.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence


def units(episodes: Sequence[str], unit_of: Mapping[str, str] | None) -> list[str]:
    """Ranked episode uuids as the units relevance is judged on, each once: the episodes
    themselves (``unit_of`` None), or the turns they belong to (a turn split into several
    messages ranks at its best part; an episode of no turn is left out)."""
    if unit_of is None:
        return list(episodes)
    return list(dict.fromkeys(unit_of[u] for u in episodes if u in unit_of))


def recall_at(ranked: Sequence[str], relevant: Sequence[str], k: int) -> float:
    wanted = set(relevant)
    return len(wanted.intersection(ranked[:k])) / len(wanted) if wanted else 0.0


def ndcg_at(ranked: Sequence[str], relevant: Sequence[str], k: int) -> float:
    wanted = set(relevant)
    if not wanted:
        return 0.0
    dcg = sum(1 / math.log2(i + 2) for i, u in enumerate(ranked[:k]) if u in wanted)
    ideal = sum(1 / math.log2(i + 2) for i in range(min(len(wanted), k)))
    return dcg / ideal


def covered(found: set[str], relevant: Sequence[str]) -> float:
    wanted = set(relevant)
    return len(wanted & found) / len(wanted) if wanted else 0.0


def _dcg(gains: Sequence[float], k: int) -> float:
    top = list(gains[:k])
    if not top:
        return 0.0
    return top[0] + sum(g / math.log2(i) for i, g in enumerate(top[1:], start=2) if g)


def evaluate(
    ranked: Sequence[str], relevant: Sequence[str], corpus: Sequence[str], k: int
) -> tuple[float, float, float]:
    """LongMemEval's (recall_any@k, recall_all@k, NDCG@k) of one ranking; ``corpus`` is
    every id that could be ranked (the ideal DCG is over its relevant ones)."""
    wanted = set(relevant)
    top = set(ranked[:k])
    recall_any = float(any(r in top for r in wanted))
    recall_all = float(all(r in top for r in wanted))
    ideal = _dcg(sorted((1.0 if c in wanted else 0.0 for c in corpus), reverse=True), k)
    actual = _dcg([1.0 if r in wanted else 0.0 for r in ranked[:k]], k)
    return recall_any, recall_all, actual / ideal if ideal else 0.0


def evaluate_turn2session(
    ranked_turns: Sequence[str],
    relevant_turns: Sequence[str],
    corpus_turns: Sequence[str],
    k: int,
    session_of: Callable[[str], str],
) -> tuple[float, float, float]:
    """LongMemEval's session-level metrics of a turn ranking (``session_of`` maps a turn
    id to its session's)."""
    relevant = sorted({session_of(t) for t in relevant_turns})
    corpus = [session_of(t) for t in corpus_turns]
    ranked = [session_of(t) for t in ranked_turns]
    effective = k
    while effective <= len(corpus) and len(set(ranked[:effective])) < k:
        effective += 1
    return evaluate(ranked, relevant, corpus, effective)
