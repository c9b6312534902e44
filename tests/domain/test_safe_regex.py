"""domain/safe_regex.py: caller patterns run on RE2, and the matcher filters use."""

from __future__ import annotations

import pytest
import re2

from graphrecall.domain import safe_regex


@pytest.mark.parametrize("ignore_case", [False, True])
def test_the_fast_matcher_answers_as_re2s_search(ignore_case: bool) -> None:
    """``_Found`` runs RE2's match over the UTF-8 bytes; it finds exactly what RE2's own
    ``search`` finds, non-ASCII text, case folding and line anchors included."""
    texts = ["", "abc", "ABC déjà vu", "東京 tokyo", "a\nb", "x" * 50 + "é!", "aaaa!", "😀 ok"]
    patterns = ["a", "^b", "b$", "(?m)^b$", "déjà", "DÉJÀ", "京 t", "(a|aa)+$", r"\bok\b", "é!$"]
    for pattern in patterns:
        ours = safe_regex.compile_user(pattern, param="p", ignore_case=ignore_case)
        options = re2.Options()
        options.case_sensitive = not ignore_case
        theirs = re2.compile(pattern, options)
        for text in texts:
            expected = theirs.search(text) is not None
            assert (ours.search(text) is not None) == expected, (pattern, text)
