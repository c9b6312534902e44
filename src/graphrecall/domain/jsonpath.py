"""A subset of PostgreSQL SQL/JSONPath predicates (``jsonb @@ jsonpath``), lax mode.

Memory Engine v0.8 filters memories with ``metaPredicate``: ``m.meta @@ '<expr>'``. This
module parses the subset below once (:func:`parse`) and evaluates it in Python
(:func:`matches`); anything else is a :class:`JsonPathError` (a 400 naming the param).

Supported:

- paths: ``$``, ``$.key``, ``$."quoted key"``, ``$.a.b``, ``$.*``, ``$.a[*]``, ``$.a[N]``;
- literals: double-quoted strings (``\\" \\\\ \\/ \\b \\f \\n \\r \\t \\uXXXX \\xNN``),
  numbers (``-1``, ``2.5``, ``1e3``), ``true``, ``false``, ``null``;
- comparisons ``==``, ``!=`` / ``<>``, ``<``, ``<=``, ``>``, ``>=`` between paths and
  literals; ``exists(path)``; ``path like_regex "re" [flag "imsxq"]`` (Python ``re``
  syntax, unanchored); ``path starts with "prefix"``;
- ``&&``, ``||``, ``!``, parentheses; an optional leading ``lax``;
- a bare path at the top level (``$.done``): true when it yields exactly one item, ``true``.

Semantics follow PostgreSQL's lax mode: member access unwraps an array one level, ``[*]``
and ``[0]`` treat a non-array as a one-element array, comparison operands that are arrays
are unwrapped, a path that finds nothing gives no items. A predicate over several items
holds when any pair holds. Logic is three-valued: comparing items of different types (a
string with a number), an object or array, or ``like_regex`` / ``starts with`` on a
non-string is *unknown*; ``null`` equals only ``null`` (and ``!=`` anything else). Unknown
propagates through ``!``, ``&&`` and ``||`` as in SQL, and a record matches only when the
whole predicate is true (PostgreSQL's ``@@`` answers NULL, which a WHERE clause drops).
Strings order by code point (PostgreSQL uses the database collation).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from graphrecall.domain import safe_regex
from graphrecall.domain.errors import BadRequest
from graphrecall.domain.jsonpath_ast import (
    AndExpr,
    AnyKey,
    BoolPath,
    CmpOp,
    Compare,
    Exists,
    Expr,
    Index,
    Key,
    LikeRegex,
    Lit,
    NotExpr,
    Operand,
    OrExpr,
    Path,
    StartsWith,
    Step,
)

MAX_CHARS = 2000
MAX_DEPTH = 32
PARAM = "metaPredicate"


class JsonPathError(BadRequest):
    """The expression is outside the supported subset (or malformed)."""


# -- tokens --------------------------------------------------------------------------------

_TOKEN = re.compile(
    r"""
    (?P<ws>\s+)
  | (?P<str>"(?:[^"\\]|\\.)*")
  | (?P<num>-?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?)
  | (?P<op>==|!=|<>|<=|>=|&&|\|\||[<>!()$.\[\]*@?,=+\-/%])
  | (?P<word>[A-Za-z_][A-Za-z0-9_]*)
    """,
    re.VERBOSE,
)
_ESCAPES = {'"': '"', "\\": "\\", "/": "/", "b": "\b", "f": "\f", "n": "\n", "r": "\r", "t": "\t"}


@dataclass(frozen=True)
class _Tok:
    kind: str  # str, num, op, word, end
    text: str
    pos: int
    value: Any = None


def _keep_escapes(match: re.Match[str]) -> str:
    return match.group(0) if match.group(0).startswith("\\") else ""


def _fail(message: str) -> JsonPathError:
    return JsonPathError(f"{PARAM}: {message}", param=PARAM)


def _unescape(raw: str, pos: int) -> str:
    out: list[str] = []
    i = 0
    while i < len(raw):
        c = raw[i]
        if c != "\\":
            out.append(c)
            i += 1
            continue
        e = raw[i + 1]
        if e in _ESCAPES:
            out.append(_ESCAPES[e])
            i += 2
        elif e == "u" and re.fullmatch(r"[0-9A-Fa-f]{4}", raw[i + 2 : i + 6]):
            out.append(chr(int(raw[i + 2 : i + 6], 16)))
            i += 6
        elif e == "x" and re.fullmatch(r"[0-9A-Fa-f]{2}", raw[i + 2 : i + 4]):
            out.append(chr(int(raw[i + 2 : i + 4], 16)))
            i += 4
        else:
            raise _fail(f"unsupported escape \\{e} in the string at offset {pos}")
    return "".join(out)


def _tokens(text: str) -> list[_Tok]:
    toks: list[_Tok] = []
    pos = 0
    while pos < len(text):
        m = _TOKEN.match(text, pos)
        if m is None:
            if text[pos] == '"':
                raise _fail(f"unterminated string at offset {pos}")
            raise _fail(f"unexpected character {text[pos]!r} at offset {pos}")
        kind = m.lastgroup or ""
        raw = m.group()
        if kind == "str":
            toks.append(_Tok("str", raw, pos, _unescape(raw[1:-1], pos)))
        elif kind == "num":
            is_float = any(c in raw for c in ".eE")
            toks.append(_Tok("num", raw, pos, float(raw) if is_float else int(raw)))
        elif kind in ("op", "word"):
            toks.append(_Tok(kind, raw, pos))
        pos = m.end()
    toks.append(_Tok("end", "end of expression", pos))
    return toks


# -- parser --------------------------------------------------------------------------------

_CMP: dict[str, CmpOp] = {
    "==": "==",
    "!=": "!=",
    "<>": "!=",
    "<": "<",
    "<=": "<=",
    ">": ">",
    ">=": ">=",
}


class _Parser:
    def __init__(self, text: str) -> None:
        self.toks = _tokens(text)
        self.i = 0
        self.depth = 0

    @property
    def tok(self) -> _Tok:
        return self.toks[self.i]

    def _next(self) -> _Tok:
        tok = self.toks[self.i]
        self.i += 1
        return tok

    def _is(self, kind: str, text: str | None = None) -> bool:
        return self.tok.kind == kind and (text is None or self.tok.text == text)

    def _expect(self, kind: str, text: str, what: str) -> _Tok:
        if not self._is(kind, text):
            raise self._unexpected(f"expected {what}")
        return self._next()

    def _unexpected(self, expected: str) -> JsonPathError:
        tok = self.tok
        shown = tok.text if tok.kind == "end" else repr(tok.text)
        return _fail(f"{expected}, found {shown} at offset {tok.pos}")

    def parse(self) -> Expr:
        if self._is("word", "lax"):
            self._next()
        elif self._is("word", "strict"):
            raise _fail("strict mode is not supported (lax is)")
        start = self.i
        if self._is("op", "$"):
            path = self._path()
            if self._is("end"):
                return BoolPath(path)
            self.i = start
        expr = self._or()
        if not self._is("end"):
            raise self._unexpected("expected && or || or the end")
        return expr

    def _enter(self) -> None:
        self.depth += 1
        if self.depth > MAX_DEPTH:
            raise _fail(f"nested more than {MAX_DEPTH} levels deep")

    def _or(self) -> Expr:
        items = [self._and()]
        while self._is("op", "||"):
            self._next()
            items.append(self._and())
        return items[0] if len(items) == 1 else OrExpr(tuple(items))

    def _and(self) -> Expr:
        items = [self._unary()]
        while self._is("op", "&&"):
            self._next()
            items.append(self._unary())
        return items[0] if len(items) == 1 else AndExpr(tuple(items))

    def _unary(self) -> Expr:
        if self._is("op", "!"):
            self._next()
            self._enter()
            item = self._unary()
            self.depth -= 1
            return NotExpr(item)
        if self._is("op", "("):
            self._next()
            self._enter()
            inner = self._or()
            self.depth -= 1
            self._expect("op", ")", "')'")
            return inner
        if self._is("word", "exists"):
            self._next()
            self._expect("op", "(", "'(' after exists")
            path = self._path()
            self._expect("op", ")", "')' after the exists path")
            return Exists(path)
        return self._predicate()

    def _predicate(self) -> Expr:
        left = self._operand()
        tok = self.tok
        if tok.kind == "op" and tok.text in _CMP:
            self._next()
            return Compare(_CMP[tok.text], left, self._operand())
        if tok.kind == "word" and tok.text in ("like_regex", "starts"):
            if not isinstance(left, Path):
                raise _fail(f"{tok.text} needs a path on its left (offset {tok.pos})")
            self._next()
            if tok.text == "starts":
                self._expect("word", "with", "'with' after starts")
                return StartsWith(left, self._string("a string after starts with"))
            return self._like_regex(left)
        if tok.kind == "op" and tok.text == "=":
            raise _fail(f"use == to compare (offset {tok.pos})")
        if tok.kind == "op" and tok.text in ("+", "-", "*", "/", "%"):
            raise _fail(f"arithmetic is not supported (offset {tok.pos})")
        raise self._unexpected("expected a comparison, like_regex or starts with")

    def _like_regex(self, path: Path) -> Expr:
        pos = self.tok.pos
        pattern = self._string("a string pattern after like_regex")
        flags: set[str] = set()
        if self._is("word", "flag"):
            self._next()
            for c in self._string("a string of flags after flag"):
                if c not in "ismxq":
                    raise _fail(f"unknown like_regex flag {c!r} (use i, s, m, x or q)")
                flags.add(c)
        if "q" in flags:
            pattern = re.escape(pattern)
        elif "x" in flags:
            # RE2 has no verbose mode: drop the whitespace and comments it would ignore.
            pattern = re.sub(
                r"\\.|#[^\n]*|\s+", lambda m: m.group(0) if m.group(0)[0] == "\\" else "", pattern
            )
        try:
            matcher = safe_regex.compile_user(
                pattern,
                param="like_regex",
                ignore_case="i" in flags,
                dot_all="s" in flags,
                multi_line="m" in flags,
            )
        except BadRequest as exc:
            raise _fail(f"like_regex at offset {pos}: {exc.message}") from None
        return LikeRegex(path, matcher)

    def _string(self, what: str) -> str:
        if not self._is("str"):
            raise self._unexpected(f"expected {what}")
        value: str = self._next().value
        return value

    def _operand(self) -> Operand:
        tok = self.tok
        if tok.kind == "op" and tok.text == "$":
            return self._path()
        if tok.kind in ("str", "num"):
            self._next()
            return Lit(tok.value)
        if tok.kind == "word" and tok.text in ("true", "false", "null"):
            self._next()
            return Lit({"true": True, "false": False, "null": None}[tok.text])
        if tok.kind == "op" and tok.text == "@":
            raise _fail(f"filter expressions (@, ?(...)) are not supported (offset {tok.pos})")
        if tok.kind == "op" and tok.text in ("+", "-", "*", "/", "%"):
            raise _fail(f"arithmetic is not supported (offset {tok.pos})")
        raise self._unexpected("expected a path ($...) or a literal")

    def _path(self) -> Path:
        dollar = self._expect("op", "$", "'$'")
        if self._is("word") and self.tok.pos == dollar.pos + 1:
            raise _fail(f"variables (${self.tok.text}) are not supported (offset {dollar.pos})")
        steps: list[Step] = []
        while True:
            if self._is("op", "."):
                self._next()
                tok = self.tok
                if tok.kind == "word" or tok.kind == "str":
                    self._next()
                    if self._is("op", "("):
                        raise _fail(f"item method .{tok.text}() is not supported")
                    steps.append(Key(tok.value if tok.kind == "str" else tok.text))
                elif tok.kind == "op" and tok.text == "*":
                    self._next()
                    if self._is("op", "*"):
                        raise _fail(f".** is not supported (offset {tok.pos})")
                    steps.append(AnyKey())
                else:
                    raise self._unexpected("expected a key after '.'")
            elif self._is("op", "["):
                self._next()
                tok = self.tok
                if tok.kind == "op" and tok.text == "*":
                    self._next()
                    steps.append(Index(None))
                elif tok.kind == "num" and isinstance(tok.value, int) and tok.value >= 0:
                    self._next()
                    steps.append(Index(tok.value))
                else:
                    raise self._unexpected("expected * or a non-negative index in [...]")
                self._expect("op", "]", "']' (ranges, last and lists are not supported)")
            elif self._is("op", "?"):
                raise _fail(f"filter expressions ?(...) are not supported (offset {self.tok.pos})")
            else:
                return Path(tuple(steps))


def parse(text: str) -> Expr:
    """Parses ``text`` or raises :class:`JsonPathError` (a 400 naming ``metaPredicate``)."""
    if len(text) > MAX_CHARS:
        raise _fail(f"at most {MAX_CHARS} characters")
    if not text.strip():
        raise _fail("the expression is empty")
    try:
        return _Parser(text).parse()
    except RecursionError:  # pragma: no cover - the depth limit comes first
        raise _fail(f"nested more than {MAX_DEPTH} levels deep") from None


@lru_cache(maxsize=256)
def compiled(text: str) -> Expr:
    """:func:`parse`, cached (the SQL function calls this once per row)."""
    return parse(text)


# -- evaluation ----------------------------------------------------------------------------

Truth = bool | None  # None: unknown


def _step(step: Step, item: Any) -> list[Any]:
    if isinstance(step, Key):
        if isinstance(item, dict):
            return [item[step.name]] if step.name in item else []
        if isinstance(item, list):  # lax: unwrap the array one level
            return [e[step.name] for e in item if isinstance(e, dict) and step.name in e]
        return []
    if isinstance(step, AnyKey):
        if isinstance(item, dict):
            return list(item.values())
        if isinstance(item, list):
            return [v for e in item if isinstance(e, dict) for v in e.values()]
        return []
    if isinstance(item, list):
        if step.index is None:
            return list(item)
        return [item[step.index]] if step.index < len(item) else []
    return [item] if step.index in (None, 0) else []  # lax: a scalar is a 1-element array


def _items(path: Path, doc: Any) -> list[Any]:
    items = [doc]
    for step in path.steps:
        items = [out for item in items for out in _step(step, item)]
    return items


def _unwrapped(operand: Operand, doc: Any) -> list[Any]:
    if isinstance(operand, Lit):
        return [operand.value]
    out: list[Any] = []
    for item in _items(operand, doc):
        if isinstance(item, list):
            out.extend(item)
        else:
            out.append(item)
    return out


def _kind(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "bool"
    if isinstance(value, int | float):
        return "number"
    if isinstance(value, str):
        return "string"
    return "container"


def _compare(op: CmpOp, a: Any, b: Any) -> Truth:
    ka, kb = _kind(a), _kind(b)
    if "container" in (ka, kb):
        return None
    if ka != kb:
        if "null" in (ka, kb):
            return op == "!="
        return None
    if ka == "null":
        a = b = 0
    if op == "==":
        return bool(a == b)
    if op == "!=":
        return bool(a != b)
    if op == "<":
        return bool(a < b)
    if op == "<=":
        return bool(a <= b)
    if op == ">":
        return bool(a > b)
    return bool(a >= b)


def _any(results: Any) -> Truth:
    """Lax mode: true if any result is true, else unknown if any is, else false."""
    unknown = False
    for r in results:
        if r is True:
            return True
        if r is None:
            unknown = True
    return None if unknown else False


def evaluate(expr: Expr, doc: Any) -> Truth:
    """The predicate's three-valued result on the JSON value ``doc``."""
    match expr:
        case Compare(op, left, right):
            lefts, rights = _unwrapped(left, doc), _unwrapped(right, doc)
            return _any(_compare(op, a, b) for a in lefts for b in rights)
        case Exists(path):
            return bool(_items(path, doc))
        case LikeRegex(path, pattern):
            return _any(
                (pattern.search(v) is not None) if isinstance(v, str) else None
                for v in _unwrapped(path, doc)
            )
        case StartsWith(path, prefix):
            return _any(
                v.startswith(prefix) if isinstance(v, str) else None for v in _unwrapped(path, doc)
            )
        case BoolPath(path):
            items = _items(path, doc)
            return items[0] if len(items) == 1 and isinstance(items[0], bool) else None
        case AndExpr(items):
            results = [evaluate(i, doc) for i in items]
            if False in results:
                return False
            return None if None in results else True
        case OrExpr(items):
            results = [evaluate(i, doc) for i in items]
            if True in results:
                return True
            return None if None in results else False
        case NotExpr(item):
            r = evaluate(item, doc)
            return None if r is None else not r
    raise TypeError(f"unknown expression {expr!r}")  # pragma: no cover


def matches(text: str, doc: Any) -> bool:
    """``doc @@ text``: true only when the predicate is true (unknown does not match)."""
    return evaluate(compiled(text), doc) is True
