"""Whether a sentence says again what a summary already says.

A thread's summary grows a point per new fact; the same statement comes back often (a
fact restated in a later message, the same clause read from two messages, a fact text
with a line break that the summary's own lines split), and a summary that repeats itself
spends its budget on nothing. Two sentences say the same when, after case, punctuation
and spacing are set aside, they are equal, or their words nearly are (``NEAR``, or one
word added: "Kai lives in Berlin" and "Kai lives in Berlin now") and they agree on
negation ("Kai works at Acme" and "Kai no longer works at Acme" are both kept).
"""

from __future__ import annotations

import re

NEAR = 0.8  # word-set overlap (Jaccard) from which two sentences say the same
NEGATIONS = frozenset({"not", "no", "never", "longer", "nt", "neither", "nor", "without"})
FILLER = frozenset({"a", "an", "the"})


def one_line(text: str) -> str:
    """``text`` as one line, without the end mark a summary adds back."""
    return " ".join(text.split()).rstrip(" .")


def _words(text: str) -> list[str]:
    return re.findall(r"[a-z0-9]+", text.casefold().replace("n't", " nt"))


def same_statement(a: str, b: str) -> bool:
    words_a, words_b = _words(a), _words(b)
    if words_a == words_b:
        return True
    if {w for w in words_a if w in NEGATIONS} != {w for w in words_b if w in NEGATIONS}:
        return False
    set_a, set_b = set(words_a) - FILLER, set(words_b) - FILLER
    if not set_a or not set_b:
        return False
    if len(set_a & set_b) / len(set_a | set_b) >= NEAR:
        return True
    # One word more and nothing else ("... a greyhound too", "... team now").
    small, large = sorted((set_a, set_b), key=len)
    return small <= large and len(large - small) == 1 and len(small) >= 3


def said(points: list[str], sentence: str) -> bool:
    """Whether ``points`` already say ``sentence``."""
    return any(same_statement(p, sentence) for p in points)
