"""The common-terms plan (store/lexical/plan.py), independent of any index's syntax."""

from __future__ import annotations

from graphrecall.store.lexical.plan import match_plan


def test_a_frequent_term_much_commoner_than_the_rarest_is_common() -> None:
    counts = {"jordan": 30_000, "tennis": 40, "court": 9_000}
    plan = match_plan(["jordan", "tennis", "court"], 100_000, counts.__getitem__)
    assert plan.rare == ("tennis",)
    assert plan.common == ("jordan", "court")
    assert plan.weighty == ("jordan", "court")  # both in under half the rows
    assert plan.phrases == ("tennis", "jordan", "court")
    assert plan.has_fill


def test_small_tables_single_terms_and_comparable_terms_are_matched_as_they_are() -> None:
    asked: list[str] = []

    def count(term: str) -> int:
        asked.append(term)
        return 6_000

    assert match_plan(["a", "b"], 1_000, count).common == ()
    assert asked == []  # a small table never counts its terms
    assert match_plan(["a"], 1_000_000, count).common == ()
    assert match_plan(["a", "b"], 100_000, count).common == ()  # comparable counts
    half = match_plan(["a", "b"], 100_000, {"a": 60_000, "b": 10}.__getitem__)
    assert half.common == ("a",) and not half.has_fill  # in over half the rows
