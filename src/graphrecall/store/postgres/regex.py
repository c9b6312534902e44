"""Python ``re`` patterns as PostgreSQL ARE patterns, for the ``Regex`` filter.

The filter language's regexes are Python's (SQLite runs them with ``re``). ARE shares
most of the syntax; this rewrites what differs and refuses what ARE cannot express, so
a pattern never silently means something else on PostgreSQL.
"""

from __future__ import annotations

import re

from graphrecall.domain.errors import BadRequest

# ARE's "partial newline-sensitive" mode: "." and "[^...]" do not match a newline, as in
# Python without re.DOTALL; "^" and "$" still mean the string's start and end.
_PREFIX = "(?p)"
_UNSUPPORTED = (
    (re.compile(r"\(\?P="), "named back-references"),
    (re.compile(r"\(\?\("), "conditional groups"),
    (re.compile(r"(?<!\\)[*+?}]\+"), "possessive quantifiers"),
    (re.compile(r"\(\?>"), "atomic groups"),
    (re.compile(r"\(\?[aiLmsux-]+[):]"), "inline flags (use the filter's ignore-case)"),
)


def to_are(pattern: str) -> str:
    """The ARE pattern that matches what the Python ``pattern`` matches (``search``
    semantics: unanchored); a :class:`BadRequest` for what ARE cannot express."""
    for found, what in _UNSUPPORTED:
        if found.search(pattern):
            raise BadRequest(f"regex uses {what}, which this backend does not support")
    out: list[str] = []
    i = 0
    in_class = False
    while i < len(pattern):
        ch = pattern[i]
        if ch == "\\" and i + 1 < len(pattern):
            nxt = pattern[i + 1]
            if not in_class and nxt == "b":
                out.append("\\y")
            elif not in_class and nxt == "B":
                out.append("\\Y")
            elif nxt == "Z":
                out.append("\\Z")
            else:
                out.append(ch + nxt)
            i += 2
            continue
        if ch == "[" and not in_class:
            in_class = True
            out.append(ch)
            # A "]" right after "[" or "[^" is a literal in both dialects.
            if pattern[i + 1 : i + 2] == "^":
                out.append("^")
                i += 1
            if pattern[i + 1 : i + 2] == "]":
                out.append("]")
                i += 1
        elif ch == "]" and in_class:
            in_class = False
            out.append(ch)
        elif not in_class and pattern.startswith("(?P<", i):
            end = pattern.find(">", i)
            if end < 0:
                raise BadRequest("regex has an unterminated group name")
            out.append("(")
            i = end
        else:
            out.append(ch)
        i += 1
    return _PREFIX + "".join(out)
