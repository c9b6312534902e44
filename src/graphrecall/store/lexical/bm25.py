"""BM25, computed from the statistics a backend supplies.

The formula and its order of operations are FTS5's ``bm25()`` (``fts5_aux.c``): IDF
``log((N - n + 0.5) / (n + 0.5))`` floored at 1e-6, a row's frequency of a term the
weighted sum over its columns, its length the token count over all columns, and a
query's score the sum of its terms' parts in the order the query names them. At FTS5's
constants (k1 1.2, b 0.75) every score here equals the one ``bm25()`` returns (tested), so
a query ranks the same whichever path or backend answered it.

A scope may ask for other constants (``domain/scopes.py``). The rows are still the ones
standard BM25 ranks best, whichever path found them: only their scores and order change
(:func:`rescored`).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

from graphrecall.domain.scopes import Bm25

Ints = npt.NDArray[np.int64]
Floats = npt.NDArray[np.float64]
# Scores of rows by rowid (those holding any term), given the rowids.
Scorer = Callable[[Ints], dict[int, float]]


def idf(rows: int, hits: int) -> float:
    """A term's IDF in a table of ``rows`` rows, ``hits`` of which hold it."""
    value = math.log((rows - hits + 0.5) / (hits + 0.5))
    return value if value > 0.0 else 1e-6


def term_scores(
    term_idf: float,
    freqs: npt.NDArray[Any],
    lengths: npt.NDArray[Any],
    average: float,
    bm25: Bm25,
) -> Floats:
    """One term's part of BM25 in each row: its IDF, its weighted frequency in the row
    (``freqs``) and the row's token count (``lengths``) against the ``average``."""
    f = freqs.astype(np.float64)
    k1, b = bm25.k1, bm25.b
    norm = k1 * ((1 - b) + (b * lengths.astype(np.float64)) / average)
    scores: Floats = term_idf * ((f * (k1 + 1.0)) / (f + norm))
    return scores


@dataclass(frozen=True)
class RowStatistics:
    """What BM25 needs to score some rows of one table for a query's terms."""

    rows: int  # rows in the table
    average: float  # their average length (tokens over all columns)
    rowids: Ints  # the rows to score
    lengths: Floats  # each one's length
    hits: Sequence[int]  # per term of the query, in its order: rows of the table holding it
    freqs: Floats  # [term, row]: the term's weighted frequency in the row


def scores(stats: RowStatistics, bm25: Bm25) -> dict[int, float]:
    """The score of each of ``stats.rowids`` that holds any of the terms, by rowid."""
    totals = np.zeros(len(stats.rowids), dtype=np.float64)
    holding = np.zeros(len(stats.rowids), dtype=bool)
    if not stats.rows:
        return {}
    for i, count in enumerate(stats.hits):
        if not count:
            continue
        held = stats.freqs[i] > 0
        holding |= held
        parts = term_scores(
            idf(stats.rows, count), stats.freqs[i], stats.lengths, stats.average, bm25
        )
        totals[held] += parts[held]
    return {
        int(rowid): float(totals[at])
        for at, rowid in enumerate(stats.rowids.tolist())
        if holding[at]
    }


def rescored(
    found: Sequence[tuple[str, float]], rowids: Mapping[str, int], scorer: Scorer
) -> list[tuple[str, float]]:
    """``found`` (uuid, score) with each row's score from ``scorer``, best first, ties by
    uuid; rows gone from the table since they were found (no rowid) are dropped."""
    present = [(uuid, rowids[uuid]) for uuid, _ in found if uuid in rowids]
    if not present:
        return []
    scored = scorer(np.array(sorted(r for _, r in present), dtype=np.int64))
    out = [(uuid, scored.get(rowid, 0.0)) for uuid, rowid in present]
    return sorted(out, key=lambda row: (-row[1], row[0]))
