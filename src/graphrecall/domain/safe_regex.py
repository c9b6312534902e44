"""Regular expressions a caller writes (``grep``, JSONPath ``like_regex``) run on RE2
(``google-re2``): matching time is linear in the text, whatever the pattern, so no
pattern can stall the process for other tenants (Python's ``re`` backtracks: ``(a|aa)+$``
over 32 ``a`` and a ``!`` took 1.7 s while every other request waited). The price is
RE2's syntax: no backreferences and no lookaround; such a pattern is a 400 naming the
field.

Patterns the server writes itself (tree filters) may use lookahead; :func:`compiled`
falls back to Python's ``re`` only for what RE2 refuses, and only callers that validated
a user pattern with :func:`compile_user` ever pass one in.
"""

from __future__ import annotations

import re
from functools import lru_cache
from typing import Protocol

import re2

from graphrecall.domain.errors import BadRequest

MAX_PATTERN_CHARS = 1000
# RE2's memory budget for one compiled pattern (its default is 8 MiB); a pattern that
# needs more is refused, not run.
MAX_PROGRAM_BYTES = 8 << 20


class Matcher(Protocol):
    def search(self, text: str) -> object | None: ...


def _options(ignore_case: bool, dot_all: bool) -> re2.Options:
    options = re2.Options()
    options.case_sensitive = not ignore_case
    options.dot_nl = dot_all
    options.max_mem = MAX_PROGRAM_BYTES
    options.log_errors = False
    return options


def compile_user(
    pattern: str,
    *,
    param: str,
    ignore_case: bool = False,
    dot_all: bool = False,
    multi_line: bool = False,
) -> Matcher:
    """``pattern`` compiled by RE2, or :class:`BadRequest` naming ``param``."""
    if len(pattern) > MAX_PATTERN_CHARS:
        raise BadRequest(f"{param}: at most {MAX_PATTERN_CHARS} characters", param=param)
    try:
        return _re2(pattern, ignore_case, dot_all, multi_line)
    except re2.error as exc:
        reason = exc.args[0].decode() if exc.args and isinstance(exc.args[0], bytes) else exc
        raise BadRequest(
            f"{param}: invalid regular expression ({reason}); patterns run on RE2,"
            " a linear-time engine without backreferences or lookaround",
            param=param,
        ) from None


@lru_cache(maxsize=256)
def _re2(pattern: str, ignore_case: bool, dot_all: bool, multi_line: bool) -> Matcher:
    if multi_line:
        pattern = "(?m)" + pattern  # ^ and $ at line breaks too
    result: Matcher = re2.compile(pattern, _options(ignore_case, dot_all))
    return result


@lru_cache(maxsize=256)
def compiled(pattern: str, ignore_case: bool) -> Matcher:
    """The matcher for a stored predicate's pattern: RE2 when it accepts the pattern (every
    user pattern, validated by :func:`compile_user`), else Python ``re`` (server-written
    tree patterns with lookahead)."""
    try:
        return _re2(pattern, ignore_case, False, False)
    except re2.error:
        return re.compile(pattern, re.IGNORECASE if ignore_case else 0)
