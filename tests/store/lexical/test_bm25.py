"""The storage-free BM25 (store/lexical/bm25.py), checked against the formula by hand."""

from __future__ import annotations

import math

import numpy as np
import pytest

from graphrecall.domain.scopes import STANDARD_BM25, Bm25
from graphrecall.store.lexical import bm25


def by_hand(rows: int, hits: int, freq: float, length: float, average: float, c: Bm25) -> float:
    idf = max(math.log((rows - hits + 0.5) / (hits + 0.5)), 1e-6)
    return idf * freq * (c.k1 + 1) / (freq + c.k1 * (1 - c.b + c.b * length / average))


@pytest.mark.parametrize("constants", [STANDARD_BM25, Bm25(k1=0.5, b=0.3)])
def test_scores_sum_each_terms_part_as_the_formula_says(constants: Bm25) -> None:
    stats = bm25.RowStatistics(
        rows=100,
        average=8.0,
        rowids=np.array([3, 7, 9], dtype=np.int64),
        lengths=np.array([4.0, 12.0, 8.0]),
        hits=[5, 60],  # a rare term and one in over half the rows (IDF floored)
        freqs=np.array([[1.0, 2.0, 0.0], [1.0, 0.0, 0.0]]),
    )
    got = bm25.scores(stats, constants)
    assert set(got) == {3, 7}  # row 9 holds neither term
    assert got[3] == pytest.approx(
        by_hand(100, 5, 1.0, 4.0, 8.0, constants) + by_hand(100, 60, 1.0, 4.0, 8.0, constants)
    )
    assert got[7] == pytest.approx(by_hand(100, 5, 2.0, 12.0, 8.0, constants))
    assert bm25.idf(100, 60) == 1e-6


def test_rescored_orders_by_the_new_scores_then_uuid_and_drops_vanished_rows() -> None:
    found = [("a", 9.0), ("b", 8.0), ("c", 7.0), ("gone", 6.0)]
    rowids = {"a": 1, "b": 2, "c": 3}
    new = {1: 1.0, 2: 3.0, 3: 3.0}
    out = bm25.rescored(found, rowids, lambda ids: {int(r): new[int(r)] for r in ids})
    assert out == [("b", 3.0), ("c", 3.0), ("a", 1.0)]
