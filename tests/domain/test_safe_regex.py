"""domain/safe_regex.py: caller patterns run on RE2, and the matcher filters use."""

from __future__ import annotations

import pytest
import re2

from graphrecall.domain import safe_regex
from graphrecall.domain.errors import BadRequest


@pytest.mark.parametrize("ignore_case", [False, True])
def test_the_fast_matcher_answers_as_re2s_search(ignore_case: bool) -> None:
    """``_Found`` runs RE2's match over the UTF-8 bytes; it finds exactly what RE2's own
    ``search`` finds, non-ASCII text, case folding and line anchors included."""
    texts = ["", "abc", "ABC déjà vu", "東京 tokyo", "a\nb", "x" * 50 + "é!", "aaaa!", "😀 ok"]
    patterns = ["a", "^b", "b$", "(?m)^b$", "déjà", "DÉJÀ", "京 t", "(a|aa)+$", r"\bok\b", "é!$"]
    for pattern in patterns:
        # Inline flags are not a caller's to write (PostgreSQL refuses them): the
        # multi-line flag is the argument like_regex's "m" sets.
        ours = safe_regex.compile_user(
            pattern.removeprefix("(?m)"),
            param="p",
            ignore_case=ignore_case,
            multi_line=pattern.startswith("(?m)"),
        )
        options = re2.Options()
        options.case_sensitive = not ignore_case
        theirs = re2.compile(pattern, options)
        for text in texts:
            expected = theirs.search(text) is not None
            assert (ours.search(text) is not None) == expected, (pattern, text)


# Patterns RE2 reads and PostgreSQL (ARE, and jsonpath's like_regex) refuses, each
# measured on PostgreSQL 18 (tests/store/postgres/test_regex_dialect.py runs them there).
NOT_PORTABLE = [
    r"\p{Greek}",
    r"\pL",
    r"[\p{L}]",
    r"\PN",
    r"[^\x00-\x{10FFFF}]",
    r"\x{41}",
    "a{1000}",
    "a{256}",
    "a{2,256}",
    r"\Qa.b\E",
    r"a\z",
    r"\C",
    "(?i)a",
    "(?U)a*",
    "(?s:a.)",
    "(?P<n>a)",
    "(?<n>a)",
    "[[:^alpha:]]",
    r"[\d-z]",
]
# Patterns both accept (the escapes and shapes a caller is likely to write).
PORTABLE = [
    "a{255}",
    "a{0,255}",
    "a{3,}",
    r"\x41",
    r"\d\s\w\D\S\W",
    r"\bword\B",
    "a*?",
    "(?:ab)+",
    r"[[:alpha:]][[:word:]]",
    r"[\d-]",
    r"[\]]",
    "[]a]",
    "[^]a]",
    r"\A\.",
    "é+😀",
    r"\^\$\{\}",
    "a{",
    "x{,3}",
    r"\\p",  # an escaped backslash, then p
    r"[\\x{]",  # the same, in a class
]


@pytest.mark.parametrize("pattern", NOT_PORTABLE)
def test_a_pattern_postgresql_refuses_is_refused_on_every_backend(pattern: str) -> None:
    re2.compile(pattern)  # RE2 alone would accept it
    with pytest.raises(BadRequest) as info:
        safe_regex.compile_user(pattern, param="grep")
    assert info.value.param == "grep"
    assert "not supported" in info.value.message


@pytest.mark.parametrize("pattern", PORTABLE)
def test_a_portable_pattern_is_accepted(pattern: str) -> None:
    assert safe_regex.portable_problem(pattern) is None
    safe_regex.compile_user(pattern, param="grep")
