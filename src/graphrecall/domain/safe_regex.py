"""Regular expressions a caller writes (``grep``, JSONPath ``like_regex``) run on RE2
(``google-re2``): matching time is linear in the text, whatever the pattern, so no
pattern can stall the process for other tenants (Python's ``re`` backtracks: ``(a|aa)+$``
over 32 ``a`` and a ``!`` took 1.7 s while every other request waited). The price is
RE2's syntax: no backreferences and no lookaround; such a pattern is a 400 naming the
field.

Patterns the server writes itself (tree filters, label by label: domain/tree_match.py)
are RE2 patterns too, so no regular expression runs on a backtracking engine.
"""

from __future__ import annotations

from functools import lru_cache
from typing import Protocol

import re2

from graphrecall.domain.errors import BadRequest

MAX_PATTERN_CHARS = 1000
# RE2's memory budget for one compiled pattern (its default is 8 MiB); a pattern that
# needs more is refused, not run.
MAX_PROGRAM_BYTES = 8 << 20


class BudgetExceeded(BadRequest):
    """A search's pattern work ran past its time budget (store/sqlite/pattern_workers.py);
    the service names the field."""

    code = "regex_budget"


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


class _Found:
    """Whether a pattern occurs in a text; what every caller here asks of a match.

    RE2's own ``search`` turns character offsets into byte offsets and back in Python
    around the match (~14 us for a 2,000-character text, holding the interpreter lock);
    the engine's ``Match`` over the UTF-8 bytes, from the first to the last, answers the
    same in ~1.5 us. A filter runs it once a row, so a tenant's pattern search holds the
    lock a tenth as long (bench isolation, docs/security.md)."""

    __slots__ = ("_match", "_unanchored")

    def __init__(self, compiled: re2._Regexp) -> None:
        self._match = compiled._regexp.Match
        self._unanchored = re2._re2.RE2.Anchor.UNANCHORED

    def search(self, text: str) -> bool | None:
        data = text.encode("utf-8", "surrogatepass")
        return True if self._match(self._unanchored, data, 0, len(data))[0][0] >= 0 else None


@lru_cache(maxsize=256)
def _re2(pattern: str, ignore_case: bool, dot_all: bool, multi_line: bool) -> Matcher:
    if multi_line:
        pattern = "(?m)" + pattern  # ^ and $ at line breaks too
    return _Found(re2.compile(pattern, _options(ignore_case, dot_all)))


def compiled(pattern: str, ignore_case: bool) -> Matcher:
    """The matcher of a stored predicate's pattern, on RE2: user patterns were checked
    by :func:`compile_user`, and the server writes its own (tree labels) for RE2."""
    return _re2(pattern, ignore_case, False, False)
