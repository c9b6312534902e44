"""The knee cut of ``filter_low_quality_results``."""

from __future__ import annotations

from graphrecall.retrieval.quality import kept


def test_a_cliff_cuts_the_tail_after_it() -> None:
    scores = [0.85, 0.84, 0.83, 0.82, 0.81, 0.8, 0.79, 0.2, 0.18, 0.17, 0.16, 0.15, 0.14]
    assert kept(scores) == 7


def test_at_least_five_are_kept() -> None:
    scores = [0.8, 0.1, 0.09, 0.08, 0.07, 0.06, 0.05, 0.04]
    assert kept(scores) == 5


def test_a_score_of_point_nine_or_more_is_never_dropped() -> None:
    scores = [0.99, 0.98, 0.97, 0.96, 0.95, 0.94, 0.93, 0.92, 0.5, 0.1, 0.1, 0.1, 0.1]
    assert kept(scores) >= 8
    assert kept([0.95] * 12 + [0.91]) == 13


def test_a_curve_without_a_knee_keeps_everything() -> None:
    straight = [1.0 - i / 20 for i in range(20)]
    assert kept(straight) == 20
    bulging = [1.0 - (i / 19) ** 2 for i in range(20)]  # falls ever faster: no tail
    assert kept(bulging) == 20
    assert kept([0.4] * 9) == 9
    assert kept([0.3, 0.2]) == 2
