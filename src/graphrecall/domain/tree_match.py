"""Matching a dotted tree path against a :class:`~graphrecall.domain.predicates.TreePattern`
label by label: dynamic programming over (labels, items), so the time is linear in the
number of labels times the number of items, whatever the pattern (a regular expression
with stars and lookahead backtracks polynomially or worse). Each label is tested with RE2.
"""

from __future__ import annotations

import json
from functools import lru_cache

from graphrecall.domain import safe_regex
from graphrecall.domain.predicates import LabelItem

_Compiled = tuple[tuple[safe_regex.Matcher | None, bool, int, int | None], ...]


def encode(items: tuple[LabelItem, ...]) -> str:
    """The items as one string (a parameter of the SQL function that matches them)."""
    return json.dumps([[i.label, i.negated, i.lo, i.hi] for i in items])


@lru_cache(maxsize=256)
def _decode(text: str) -> _Compiled:
    return tuple(
        (None if label is None else safe_regex.compiled(label, False), negated, lo, hi)
        for label, negated, lo, hi in json.loads(text)
    )


def matches_encoded(text: str, path: str | None) -> bool:
    return path is not None and _matches(_decode(text), path)


def matches(items: tuple[LabelItem, ...], path: str) -> bool:
    return _matches(_decode(encode(items)), path)


def _matches(items: _Compiled, path: str) -> bool:
    labels = path.split(".") if path else []
    n = len(labels)
    # reach[i]: the items so far match labels[:i] exactly.
    reach = [True] + [False] * n
    for matcher, negated, lo, hi in items:
        ok = [matcher is None or (matcher.search(label) is not None) != negated for label in labels]
        before = [0] * (n + 2)  # before[i]: how many of reach[:i] are True
        for i in range(n + 1):
            before[i + 1] = before[i] + reach[i]
        step = [False] * (n + 1)
        run = 0  # consecutive labels ending at i that this item accepts
        for i in range(n + 1):
            if i:
                run = run + 1 if ok[i - 1] else 0
            most = run if hi is None else min(hi, run)
            if most >= lo:
                # Some k in [lo, most] with reach[i - k]: this item takes labels[i-k:i].
                step[i] = before[i - lo + 1] - before[i - most] > 0
        reach = step
        if not any(reach):
            return False
    return reach[n]
