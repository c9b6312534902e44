"""Reciprocal rank fusion: score(d) = sum over legs of weight / (k + rank_leg(d)).

``RRF_K`` = 60 is the literature's k and Memory Engine's; the graph scopes fuse with a
smaller one (``domain.scopes.GRAPH_RRF_K``).

Ranks start at 1. Ties in the fused score keep the order of the first leg that ranked the
item, so fusion is deterministic.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

RRF_K = 60


def rrf(
    legs: Mapping[str, Sequence[str]],
    *,
    weights: Mapping[str, float] | None = None,
    k: int = RRF_K,
) -> list[tuple[str, float]]:
    scores: dict[str, float] = {}
    first_seen: dict[str, tuple[int, int]] = {}
    for leg_index, (name, ranked) in enumerate(legs.items()):
        weight = 1.0 if weights is None else weights.get(name, 1.0)
        if weight <= 0:
            continue
        for rank, uuid in enumerate(ranked, start=1):
            scores[uuid] = scores.get(uuid, 0.0) + weight / (k + rank)
            first_seen.setdefault(uuid, (rank, leg_index))
    return sorted(scores.items(), key=lambda item: (-item[1], first_seen[item[0]]))
