"""Tree patterns are matched label by label in linear time: the patterns that made the
old single regular expression backtrack for minutes answer at once, with the same
meaning (tests/retrieval/test_memory_filters.py checks the meaning against a store)."""

from __future__ import annotations

import time

import pytest

from graphrecall.domain import tree_match
from graphrecall.domain.predicates import And, LabelItem, TreePattern
from graphrecall.retrieval.memory_filters import tree_filter


def pattern_of(text: str) -> TreePattern:
    found = tree_filter(text, "home.me")
    if isinstance(found, And):
        found = found.items[-1]
    assert isinstance(found, TreePattern), found
    return found


@pytest.mark.parametrize(
    ("text", "path", "expected"),
    [
        ("a.*.c", "a.c", True),
        ("a.*.c", "a.b.x.c", True),
        ("a.*.c", "a.b.x", False),
        ("*.!b.*", "a.c.d", True),
        ("*.!b.*", "a.b.d", False),
        ("a.*{2}.d", "a.b.c.d", True),
        ("a.*{2}.d", "a.b.d", False),
        ("a.b|c{1,2}.d", "a.c.b.d", True),
        ("a.b|c{1,2}.d", "a.c.b.c.d", False),
        ("a.!b.c", "a.x.c", True),
        ("a.!b.c", "a.b.c", False),
        ("a.pro*.c", "a.project.c", True),
        ("*.B@", "x.b", True),
    ],
)
def test_patterns_keep_their_meaning(text: str, path: str, expected: bool) -> None:
    assert tree_match.matches(pattern_of(text).items, path) is expected


def test_stars_around_a_negation_are_linear() -> None:
    path = ".".join(["a"] * 1000)
    started = time.perf_counter()
    for text in ("*.*.*.*.!b.*.*.*.*.c", "*{1,}.!b.*{1,}.*{1,}.*{1,}.c", "*.a.*.a.*.a.*.!b.*.c"):
        assert tree_match.matches(pattern_of(text).items, path) is False
    # A single regex took over a minute on 60 labels for the first of these.
    assert time.perf_counter() - started < 2.0


def test_any_label_items_and_bounds() -> None:
    items = (LabelItem(None, False, 0, None), LabelItem("^(?:x)$", False, 1, 1))
    assert tree_match.matches(items, "a.b.x")
    assert not tree_match.matches(items, "")
    assert tree_match.matches((LabelItem(None, False, 0, None),), "")
