"""The ranking of ``get_context`` candidates: one global scale with recency bias (``rank``)
and the spread over messages (``diversify``), before the block is packed.
"""

from __future__ import annotations

import heapq
import math
from collections.abc import Mapping, Sequence

from graphrecall.domain import clock
from graphrecall.domain.errors import BadRequest
from graphrecall.domain.models import (
    Edge,
    Episode,
    Node,
    Observation,
    Record,
    ThreadSummary,
)
from graphrecall.services.get_context.block import (
    Item,
)

_KIND_ORDER = {k: i for i, k in enumerate(("observation", "edge", "node", "thread_summary"))}
# A fact whose messages all back a better fact already in the block counts this share of
# its score (``diversify``): a block spread over more messages covers more.
REPEATED_SOURCES = 0.5


def _stamp(item: Item) -> str | None:
    r: Record = item.record
    if isinstance(r, Edge):
        return r.valid_at or r.created_at
    if isinstance(r, Node | Observation):
        return r.updated_at
    if isinstance(r, ThreadSummary):
        return r.last_summarized_episode_valid_at or r.last_summarized_at or r.created_at
    if isinstance(r, Episode):
        return r.reference_time
    return None


def rank(items: list[Item], bias: tuple[float, float] | None) -> list[Item]:
    """Best first on the one global scale: relevance, scaled down for older items by
    ``(1 - w) + w * 0.5 ** (age / half_life)``. Age counts back from the newest candidate of
    the same kind (a fact's time is when it became true, an entity's when it last changed:
    different clocks), so the bias depends on the data's own time span, not on today."""
    if bias is not None:
        weight, half_life = bias
        times = {id(i): _epoch_days(_stamp(i)) for i in items}
        newest: dict[str, float] = {}
        for item in items:
            t = times[id(item)]
            if t is not None:
                newest[item.kind] = max(t, newest.get(item.kind, t))
        for item in items:
            t = times[id(item)]
            if t is None or math.isinf(item.score):
                continue
            age = newest[item.kind] - t
            item.score *= (1 - weight) + weight * 0.5 ** (age / half_life)
    # Ties (the facts of one guiding message share its relevance) go to the item that
    # matched the query better on its own.
    return sorted(
        items,
        key=lambda i: (-i.score, _KIND_ORDER.get(i.kind, 9), -(i.relevance or 0.0), i.uuid),
    )


def diversify(items: list[Item], sources: Mapping[str, Sequence[str]]) -> list[Item]:
    """``items`` (best first) with each fact whose messages all back a fact placed above it
    scaled by ``REPEATED_SOURCES``, and placed again by its new score. Such a fact adds
    another reading of evidence the block already cites (one message often yields several
    facts, which rank together at its relevance), while a fact of another message may add
    evidence it lacks. A fact scaled once is not scaled again."""
    heap = [(-item.score, position, False) for position, item in enumerate(items)]
    heapq.heapify(heap)
    cited: set[str] = set()
    out: list[Item] = []
    while heap:
        _, position, scaled = heapq.heappop(heap)
        item = items[position]
        backing = sources.get(item.uuid, ()) if item.kind == "edge" else ()
        if backing and not scaled and item.score > 0 and cited.issuperset(backing):
            item.score *= REPEATED_SOURCES
            heapq.heappush(heap, (-item.score, position, True))
            continue
        out.append(item)
        cited.update(backing)
    return out


def _epoch_days(stamp: str | None) -> float | None:
    if not stamp:
        return None
    try:
        return clock.parse_iso(stamp, param="stamp").timestamp() / 86_400
    except BadRequest:
        return None
