"""``filter_low_quality_results``: where a ranked list's tail of poor matches starts.

Zep keeps at least 5 results and never drops one scored 0.9 or more; between those, the
list is cut at the knee of its score curve, where the scores stop falling steeply and
flatten into the tail. The knee is found as Kneedle does for a falling curve (Satopää et
al., 2011): ranks and scores are scaled to [0, 1], and the knee is the result farthest
below the straight line from the first result to the last; it and everything after it go.
A curve with no knee that far below the line (``MIN_KNEE``: a straight or bulging curve,
where no result stands out as the start of a tail) keeps every result.

Scores are the reranker's calibrated relevance in [0, 1] (retrieval/rerank/), so
"0.9" is on the scale every scope shares.
"""

from __future__ import annotations

from collections.abc import Sequence

KEEP_AT_LEAST = 5
NEVER_DROP = 0.9
# How far below the chord (in scaled units) the knee must lie to count as one.
MIN_KNEE = 0.1


def kept(scores: Sequence[float]) -> int:
    """How many of ``scores`` (best first) to keep."""
    n = len(scores)
    if n <= KEEP_AT_LEAST:
        return n
    top, bottom = scores[0], scores[-1]
    if top - bottom <= 1e-9:
        return n  # flat: nothing stands out
    best, knee = MIN_KNEE, n
    for i, score in enumerate(scores):
        below = (1.0 - i / (n - 1)) - (score - bottom) / (top - bottom)
        if below > best:
            best, knee = below, i
    sure = sum(1 for s in scores if s >= NEVER_DROP)
    return max(knee, KEEP_AT_LEAST, sure)
