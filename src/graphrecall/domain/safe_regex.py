"""Regular expressions a caller writes (``grep``, JSONPath ``like_regex``) run on RE2
(``google-re2``): matching time is linear in the text, whatever the pattern, so no
pattern can stall the process for other tenants (Python's ``re`` backtracks: ``(a|aa)+$``
over 32 ``a`` and a ``!`` took 1.7 s while every other request waited). The price is
RE2's syntax: no backreferences and no lookaround; such a pattern is a 400 naming the
field.

Patterns the server writes itself (tree filters, label by label: domain/tree_match.py)
are RE2 patterns too, so no regular expression runs on a backtracking engine.

A caller's pattern is also run by PostgreSQL (ARE, for ``grep``; its jsonpath
``like_regex``), which refuses some of what RE2 accepts; :func:`portable_problem` refuses
those here, whatever the backend, so a pattern is a 400 naming its field on both rather
than a server error on one (measured against PostgreSQL 18: tests/domain/test_safe_regex.py
lists each construct, tests/store/postgres/test_regex_dialect.py runs them there).
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
# PostgreSQL's bound on a counted repetition ({n,m}: its DUPMAX); RE2's is 1000.
MAX_REPEAT = 255
# Inline flags ((?i), (?s:...)) and named groups ((?P<n>...), (?<n>...)); lookaround,
# which RE2 refuses itself, is left to its message.
_FLAGS_OR_NAME = re.compile(r"\(\?(?:[A-Za-z-]|<(?![=!]))")
_COUNTED = re.compile(r"\{(\d+)(?:,(\d*))?\}")
# Escapes RE2 reads and PostgreSQL refuses ("invalid escape \ sequence").
_ESCAPES = {
    "p": "Unicode classes (\\p{...})",
    "P": "Unicode classes (\\P{...})",
    "Q": "\\Q...\\E quoting (escape each character instead)",
    "E": "\\Q...\\E quoting (escape each character instead)",
    "z": "\\z (use $)",
    "C": "\\C (use .)",
}


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
    problem = portable_problem(pattern)
    if problem is not None:
        raise BadRequest(
            f"{param}: {problem} is not supported (patterns must run on both storage"
            " backends: RE2 and PostgreSQL)",
            param=param,
        )
    try:
        return _re2(pattern, ignore_case, dot_all, multi_line)
    except re2.error as exc:
        reason = exc.args[0].decode() if exc.args and isinstance(exc.args[0], bytes) else exc
        raise BadRequest(
            f"{param}: invalid regular expression ({reason}); patterns run on RE2,"
            " a linear-time engine without backreferences or lookaround",
            param=param,
        ) from None


def portable_problem(pattern: str) -> str | None:
    """What of ``pattern`` PostgreSQL's regex dialect refuses though RE2 reads it, or
    ``None``. A pattern RE2 refuses anyway is left to RE2's own message."""
    i, in_class = 0, False
    while i < len(pattern):
        ch = pattern[i]
        if ch == "\\" and i + 1 < len(pattern):
            nxt = pattern[i + 1]
            if nxt in _ESCAPES:
                return _ESCAPES[nxt]
            if nxt == "x" and pattern[i + 2 : i + 3] == "{":
                return "\\x{...} (write \\xHH, or the character itself)"
            ranged = pattern[i + 2 : i + 3] == "-" and pattern[i + 3 : i + 4] not in ("]", "")
            if in_class and nxt in "dswDSW" and ranged:
                return f"a range from \\{nxt}"
            i += 2
            continue
        if in_class:
            if pattern.startswith("[:^", i):
                return "negated POSIX classes ([:^...:])"
            if pattern.startswith(("[:", "[.", "[="), i):
                end = pattern.find(pattern[i + 1] + "]", i + 2)
                i = end + 2 if end >= 0 else i + 1
                continue
            in_class = ch != "]"
        elif ch == "[":
            in_class = True
            # A "]" right after "[" or "[^" is a literal in both dialects.
            i += 2 if pattern.startswith("[^", i) else 1
            if pattern[i : i + 1] == "]":
                i += 1
            continue
        elif ch == "(" and _FLAGS_OR_NAME.match(pattern, i):
            return "inline flags and named groups ((?...); use (?:...) and the search's flags)"
        elif ch == "{":
            counted = _COUNTED.match(pattern, i)
            if counted and any(int(n) > MAX_REPEAT for n in counted.groups() if n):
                return f"a repetition count above {MAX_REPEAT}"
        i += 1
    return None


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
