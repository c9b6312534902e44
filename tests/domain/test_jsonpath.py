"""The metaPredicate subset of PostgreSQL jsonpath: each construct, lax-mode array
unwrapping, three-valued logic (type mismatches are unknown), missing paths, and the
errors (400s naming ``metaPredicate``) for everything outside the subset."""

from __future__ import annotations

from typing import Any

import pytest

from graphrecall.domain import jsonpath
from graphrecall.domain.errors import BadRequest
from graphrecall.domain.jsonpath import JsonPathError, evaluate, matches, parse

DOC: dict[str, Any] = {
    "type": "decision",
    "priority": 3,
    "score": 0.5,
    "done": True,
    "gone": None,
    "tags": ["api", "auth"],
    "nested": {"level": {"deep": "yes"}},
    "people": [{"name": "Ada", "age": 36}, {"name": "Linus", "age": 28}],
    "matrix": [[1, 2], [3]],
    "odd key": "spaced",
    'q"uote': 1,
    "text": "Hello\nWorld",
}


@pytest.mark.parametrize(
    ("expr", "expected"),
    [
        # comparisons and literals
        ('$.type == "decision"', True),
        ('$.type != "decision"', False),
        ('$.type <> "note"', True),
        ("$.priority == 3", True),
        ("$.priority == 3.0", True),
        ("$.priority > 2 && $.priority >= 3 && $.priority < 4 && $.priority <= 3", True),
        ("$.score < 1e0", True),
        ("$.priority > -1", True),
        ("$.done == true", True),
        ("$.done == false", False),
        ("$.done > false", True),
        ("$.gone == null", True),
        ("$.type == null", False),
        ("$.type != null", True),
        ('$.type < "e"', True),
        ("1 == 1", True),
        ("$.priority == $.priority", True),
        # paths
        ('$.nested.level.deep == "yes"', True),
        ('$."odd key" == "spaced"', True),
        ('$."q\\"uote" == 1', True),
        ('$.tags[0] == "api"', True),
        ('$.tags[1] == "api"', False),
        ('$.tags[5] == "api"', False),
        ('$.tags[*] == "auth"', True),
        ('$.people[1].name == "Linus"', True),
        ("$.people[*].age > 30", True),
        ('$.*.level.deep == "yes"', True),
        ('$.nested.* == "x"', False),
        # lax mode: arrays unwrap for member access and comparison; scalars act as arrays
        ('$.tags == "auth"', True),
        ('$.people.name == "Ada"', True),
        ("$.people.age < 30", True),
        ('$.type[0] == "decision"', True),
        ('$.type[*] == "decision"', True),
        ('$.type[1] == "decision"', False),
        ("$.matrix == 3", False),  # unwrapped one level only: [1, 2] and [3] are arrays
        ("$.matrix[*] == 3", True),
        # exists, like_regex, starts with
        ("exists($.gone)", True),
        ("exists($.missing)", False),
        ("exists($.people[*].age)", True),
        ('$.type like_regex "^dec"', True),
        ('$.type like_regex "CIS"', False),
        ('$.type like_regex "CIS" flag "i"', True),
        ('$.text like_regex "^World" flag "m"', True),
        ('$.text like_regex "o.W"', False),
        ('$.text like_regex "o.W" flag "s"', True),
        ('$.type like_regex "d.c" flag "q"', False),
        ('$.tags like_regex "^au"', True),
        ('$.type starts with "dec"', True),
        ('$.tags starts with "ap"', True),
        ('$.type starts with "x"', False),
        # boolean logic, parentheses, lax prefix, bare boolean path
        ('$.priority == 1 || $.type == "decision"', True),
        ("!($.priority == 1)", True),
        ("! $.priority == 3", False),
        ('($.priority == 1 || $.done == true) && !($.type == "note")', True),
        ("lax $.priority == 3", True),
        ("$.done", True),
        ("$.priority", False),
        ("$.tags[*]", False),
        # missing paths give no items: every comparison is false
        ("$.missing == 1", False),
        ("$.missing != 1", False),
        ("!($.missing == 1)", True),
        # strings and escapes
        ('$.text == "Hello\\nWorld"', True),
        ('$.type == "\\u0064ecision"', True),
        ('$.type == "\\x64ecision"', True),
    ],
)
def test_matches(expr: str, expected: bool) -> None:
    assert matches(expr, DOC) is expected, expr


@pytest.mark.parametrize(
    "expr",
    [
        '$.priority == "3"',  # number vs string
        "$.type > 1",
        "$.nested == 1",  # an object is not comparable
        "$.done == 1",
        '$.priority like_regex "3"',
        '$.priority starts with "3"',
        "$.missing",  # a bare path must give one boolean
    ],
)
def test_type_mismatches_are_unknown(expr: str) -> None:
    assert evaluate(parse(expr), DOC) is None
    assert matches(expr, DOC) is False


def test_unknown_propagates_like_sql() -> None:
    unknown = '$.priority == "3"'
    assert matches(f"!({unknown})", DOC) is False  # NOT unknown is unknown
    assert matches(f"{unknown} || $.done == true", DOC) is True
    assert evaluate(parse(f"{unknown} && $.done == true"), DOC) is None
    assert evaluate(parse(f"{unknown} && $.done == false"), DOC) is False
    # lax: one true pair wins even when another pair is unknown
    assert matches('$.mixed == "a"', {"mixed": [1, "a"]}) is True
    assert evaluate(parse('$.mixed == "b"'), {"mixed": [1, "a"]}) is None


@pytest.mark.parametrize(
    ("expr", "says"),
    [
        ("", "empty"),
        ("   ", "empty"),
        ("$.a ==", "expected a path ($...) or a literal"),
        ("$.a = 1", "use == to compare"),
        ("$.a == 1 &&", "expected a path"),
        ("($.a == 1", "expected ')'"),
        ("$.a == 1)", "expected && or ||"),
        ('$.a == "open', "unterminated string"),
        ('$.a == "\\q"', "unsupported escape"),
        ("$.a ? (@ > 1)", "filter expressions"),
        ("@ == 1", "filter expressions"),
        ("$.a + 1 == 2", "arithmetic"),
        ("$.a.size() == 2", "item method .size()"),
        ("$.a[1 to 2] == 1", "ranges"),
        ("$.a[last] == 1", "non-negative index"),
        ("$.a[-1] == 1", "non-negative index"),
        ("$.** == 1", ".** is not supported"),
        ("strict $.a == 1", "strict mode"),
        ("$.a == $limit", "variables ($limit)"),
        ('$.a like_regex "("', "invalid regular expression"),
        ('$.a like_regex "a" flag "z"', "unknown like_regex flag"),
        ('"a" like_regex "a"', "needs a path"),
        ('$.a starts "x"', "'with' after starts"),
        ("$.a starts with $.b", "a string after starts with"),
        ("exists $.a", "'(' after exists"),
        ("$.a == 1 $.b == 2", "expected && or ||"),
        ("$.a is unknown", "expected a comparison"),
        ("$.a == 1 & $.b == 2", "unexpected character"),
    ],
)
def test_errors_name_the_param(expr: str, says: str) -> None:
    with pytest.raises(JsonPathError) as info:
        parse(expr)
    err = info.value
    assert isinstance(err, BadRequest) and err.status == 400
    assert err.param == "metaPredicate"
    assert err.message.startswith("metaPredicate: ") and says in err.message, err.message


def test_length_and_depth_limits() -> None:
    long = "$.a == " + '"' + "x" * jsonpath.MAX_CHARS + '"'
    with pytest.raises(JsonPathError, match="at most 2000 characters"):
        parse(long)
    fits = "(" * jsonpath.MAX_DEPTH + "$.a == 1" + ")" * jsonpath.MAX_DEPTH
    assert matches(fits, {"a": 1})
    deep = "(" * (jsonpath.MAX_DEPTH + 1) + "$.a == 1" + ")" * (jsonpath.MAX_DEPTH + 1)
    with pytest.raises(JsonPathError, match="nested more than 32 levels"):
        parse(deep)
    with pytest.raises(JsonPathError, match="nested more than 32 levels"):
        parse("!" * (jsonpath.MAX_DEPTH + 1) + "$.a == 1")
    long_chain = " || ".join(["$.a == 1"] * 150)  # flat, not nested: fine
    assert matches(long_chain, {"a": 1})


def test_compiled_is_cached() -> None:
    assert jsonpath.compiled("$.a == 1") is jsonpath.compiled("$.a == 1")
