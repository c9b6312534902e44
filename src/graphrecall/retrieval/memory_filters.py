"""The Memory Engine filter language (tree, meta, temporal, grep), validated once and
turned into backend-neutral predicates.

Tree filters follow PostgreSQL ``ltree``: a bare path (``work.projects``) is that node and
everything below it; an ``lquery`` pattern (``*``, ``{n,m}``, ``!``, ``|``, ``@``, ``*``
and ``%`` label modifiers) must match the whole path; a boolean label search (``api & v2``)
is an ``ltxtquery``. Patterns compile to one anchored regular expression over the dotted
path (plus an indexable path prefix when the pattern starts with plain labels). Two
documented behaviours that upstream's code never delivered are honoured, see
docs/memory-engine.md: ``*/!draft/*`` excludes every path with a ``draft`` label, and
``api | auth`` (spaces around ``|``) is the label search "api or auth".
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from graphrecall.domain import jsonpath, safe_regex
from graphrecall.domain import predicates as p
from graphrecall.domain.errors import BadRequest
from graphrecall.domain.tree_paths import normalize_filter

_BARE = re.compile(r"^[A-Za-z0-9_-]+(\.[A-Za-z0-9_-]+)*$")
_ITEM = re.compile(
    r"^(?P<star>\*)?(?P<neg>!)?(?P<alts>[A-Za-z0-9_@*%|-]*)"
    r"(?:\{(?P<lo>\d*)(?P<comma>,)?(?P<hi>\d*)\})?$"
)
_WORD = re.compile(r"^(?P<label>[A-Za-z0-9_-]+)(?P<mods>[@*%]*)$")
_TXT_TOKEN = re.compile(r"\s*(?:(?P<op>[&|!()])|(?P<word>[A-Za-z0-9_-]+[@*%]*))")
MAX_PATTERN_CHARS = 1000
MAX_QUANTIFIER = 1000  # RE2's repeat limit; a path holds at most MAX_PATH_CHARS // 2 labels


@dataclass(frozen=True)
class TemporalFilter:
    """Stored-form timestamps; each given predicate must hold (they are ANDed)."""

    contains: str | None = None
    overlaps: tuple[str, str] | None = None
    within: tuple[str, str] | None = None
    before: str | None = None
    after: str | None = None


def tree_filter(raw: str, home: str, *, param: str = "tree") -> p.Predicate | None:
    """A tree filter as typed -> a predicate on ``tree`` (None: no filter)."""
    if len(raw) > MAX_PATTERN_CHARS:
        raise BadRequest(f"{param}: at most {MAX_PATTERN_CHARS} characters", param=param)
    text = normalize_filter(raw, home)
    if text is None:
        return None
    if _BARE.match(text):
        return p.PathUnder("tree", text)
    if "&" in text or "(" in text or re.search(r"\s", text):
        return _ltxtquery(text, param)
    prefix, items = _lquery(text, param)
    if items is None:  # ``a.b.*``: the node and everything below it
        return p.PathUnder("tree", prefix)
    pattern = p.TreePattern("tree", items)
    return p.And((p.PathUnder("tree", prefix), pattern)) if prefix else pattern


def meta_filter(meta: dict[str, Any] | None) -> p.Predicate | None:
    """JSON containment on ``meta`` (``{}`` matches everything)."""
    return p.JsonContains("meta", meta) if meta else None


def meta_predicate_filter(expression: str, *, param: str = "metaPredicate") -> p.Predicate:
    """A PostgreSQL jsonpath predicate on ``meta`` (``meta @@ expression``), in the subset
    :mod:`graphrecall.domain.jsonpath` documents; parsed here so bad input is a 400."""
    try:
        jsonpath.compiled(expression)
    except jsonpath.JsonPathError as exc:
        raise BadRequest(exc.message, param=param) from None
    return p.JsonPathMatch("meta", expression)


def temporal_filter(tf: TemporalFilter, *, param: str = "temporal") -> p.Predicate | None:
    parts: list[p.Predicate] = []

    def window(op: p.RangeOp, value: tuple[str, str] | None) -> None:
        if value is None:
            return
        start, end = value
        if start > end:
            raise BadRequest(
                f"{param}.{op}: start must not be after end", param=f"{param}.{op}.start"
            )
        # An empty window [t, t) holds nothing, so nothing overlaps or lies within it.
        parts.append(p.Nothing() if start == end else _range(op, start, end))

    if tf.contains is not None:
        parts.append(_range("contains", tf.contains))
    window("overlaps", tf.overlaps)
    window("within", tf.within)
    if tf.before is not None:
        parts.append(_range("before", tf.before))
    if tf.after is not None:
        parts.append(_range("after", tf.after))
    return p.all_of(parts)


def _range(op: p.RangeOp, start: str, end: str | None = None) -> p.Predicate:
    return p.InRange("temporal_start", "temporal_end", op, start, end)


# -- grep: POSIX (PostgreSQL ARE) regular expressions, case-insensitive ------------------

_POSIX_CLASSES = {
    "alpha": "a-zA-Z",
    "digit": "0-9",
    "alnum": "a-zA-Z0-9",
    "upper": "A-Z",
    "lower": "a-z",
    "space": r"\s",
    "blank": r" \t",
    "punct": r"!-/:-@\[-`{-~",
    "xdigit": "0-9A-Fa-f",
    "word": r"\w",
    "cntrl": r"\x00-\x1f\x7f",
    "print": r"\x20-\x7e",
    "graph": r"\x21-\x7e",
}
# RE2 has no lookaround, so ``\m`` / ``\M`` (start / end of a word) become ``\b``: the
# same wherever the next (``\m``) or previous (``\M``) character of the pattern is a word
# character, which is how they are written.
_ARE_ESCAPES = {r"\m": r"\b", r"\M": r"\b", r"\y": r"\b", r"\Y": r"\B"}


def grep_filter(pattern: str, *, param: str = "grep") -> p.Predicate:
    """``content`` matches the POSIX regular expression, ignoring case (run by RE2, in
    linear time: see :mod:`graphrecall.domain.safe_regex`)."""
    if len(pattern) > MAX_PATTERN_CHARS:
        raise BadRequest(f"{param}: at most {MAX_PATTERN_CHARS} characters", param=param)
    translated = re.sub(
        r"\[:(\w+):\]", lambda m: _POSIX_CLASSES.get(m.group(1), m.group(0)), pattern
    )
    translated = re.sub(r"\\[mMyY]", lambda m: _ARE_ESCAPES[m.group(0)], translated)
    safe_regex.compile_user(translated, param=param, ignore_case=True)
    return p.Regex("content", translated, ignore_case=True)


# -- lquery --------------------------------------------------------------------------------


@dataclass(frozen=True)
class _Item:
    star: bool
    negated: bool
    alternatives: tuple[str, ...]  # regex of each alternative (one label)
    literal: str | None  # the label, when the item is one plain label
    quantifier: tuple[int, int | None] | None  # (lo, hi) labels; None: exactly one


def _lquery(text: str, param: str) -> tuple[str, tuple[p.LabelItem, ...] | None]:
    """(literal path prefix, the pattern's items) for an lquery pattern; no items when
    the prefix says it all (plain labels, then one bare ``*``)."""
    items = [_parse_item(part, text, param) for part in text.split(".")]
    prefix: list[str] = []
    for item in items:
        if item.literal is None:
            break
        prefix.append(item.literal)
    rest = items[len(prefix) :]
    if prefix and len(rest) == 1 and _bare_star(rest[0]):
        return ".".join(prefix), None
    out: list[p.LabelItem] = []
    i = 0
    while i < len(items):
        item = items[i]
        if (
            i + 2 < len(items)
            and _bare_star(item)
            and items[i + 1].negated
            and not items[i + 1].quantifier
            and _bare_star(items[i + 2])
        ):
            # ``*.!x.*``: no label of the path matches x (the documented meaning).
            out.append(p.LabelItem(_label(items[i + 1]), True, 1, None))
            i += 3
            continue
        out.append(_label_item(item))
        i += 1
    return ".".join(prefix), tuple(out)


def _bare_star(item: _Item) -> bool:
    return item.star and not item.quantifier


def _label(item: _Item) -> str:
    """An RE2 pattern matching a whole label that is one of the item's alternatives."""
    return "^(?:" + "|".join(item.alternatives) + ")$"


def _label_item(item: _Item) -> p.LabelItem:
    if item.star:
        lo, hi = item.quantifier or (0, None)
        return p.LabelItem(None, False, lo, hi)
    lo, hi = item.quantifier or (1, 1)
    return p.LabelItem(_label(item), item.negated, lo, hi)


def _parse_item(part: str, whole: str, param: str) -> _Item:
    match = _ITEM.match(part)
    bad = BadRequest(f"{param}: invalid tree pattern {whole!r} near {part!r}", param=param)
    if match is None:
        raise bad
    star, alts = bool(match["star"]), match["alts"]
    if star and (match["neg"] or alts):
        raise bad
    if not star and not alts:
        raise bad
    quantifier = _quantifier(match["lo"], match["comma"], match["hi"], bad)
    if star:
        return _Item(True, False, (), None, quantifier)
    words = [_WORD.match(a) for a in alts.split("|")]
    if not all(words):
        raise bad
    regexes = tuple(_word_regex(w["label"], w["mods"]) for w in words if w)
    plain = len(words) == 1 and words[0] and not words[0]["mods"]
    literal = words[0]["label"] if plain and words[0] and not match["neg"] else None
    if quantifier:
        literal = None
    return _Item(False, bool(match["neg"]), regexes, literal, quantifier)


def _quantifier(
    lo: str | None, comma: str | None, hi: str | None, bad: BadRequest
) -> tuple[int, int | None] | None:
    if lo is None and comma is None and hi is None:
        return None
    if not lo and not hi:
        raise bad
    for bound in (lo, hi):
        # A larger count (up to 64 bits and beyond) only overflowed the regex compiler.
        if bound and (len(bound) > 4 or int(bound) > MAX_QUANTIFIER):
            raise BadRequest(
                f"{bad.param}: a repeat count is at most {MAX_QUANTIFIER} (got {bound[:24]})",
                param=bad.param,
            )
    if comma is None:
        return (int(lo), int(lo)) if lo else None
    low, high = int(lo or 0), int(hi) if hi else None
    if high is not None and high < low:
        raise bad
    return low, high


def _word_regex(label: str, mods: str) -> str:
    """One label of a pattern with its modifiers: ``@`` ignore case, ``*`` prefix,
    ``%`` underscore-separated words (each word a prefix when ``*`` is also given)."""
    prefix = "*" in mods
    if "%" in mods:
        words = [re.escape(w) + ("[A-Za-z0-9-]*" if prefix else "") for w in label.split("_")]
        body = "_".join(words) + "(?:_[A-Za-z0-9-]*)*"
    else:
        body = re.escape(label) + ("[A-Za-z0-9_-]*" if prefix else "")
    return f"(?i:{body})" if "@" in mods else body


# -- ltxtquery -----------------------------------------------------------------------------


def _ltxtquery(text: str, param: str) -> p.Predicate:
    """A boolean label search -> AND / OR / NOT of "some label is this word" tests."""
    tokens: list[tuple[str, str]] = []
    pos = 0
    while pos < len(text):
        match = _TXT_TOKEN.match(text, pos)
        if match is None or match.end() == pos:
            if text[pos:].strip() == "":
                break
            raise BadRequest(
                f"{param}: invalid label search {text!r} near {text[pos:]!r}", param=param
            )
        tokens.append(("op", match["op"]) if match["op"] else ("word", match["word"]))
        pos = match.end()
    parser = _TxtParser(tokens, text, param)
    predicate = parser.expr()
    if parser.pos != len(tokens):
        raise parser.error()
    return predicate


class _TxtParser:
    """expr := term ('|' term)*; term := factor ('&' factor)*;
    factor := '!' factor | '(' expr ')' | word."""

    def __init__(self, tokens: list[tuple[str, str]], text: str, param: str) -> None:
        self.tokens, self.text, self.param, self.pos = tokens, text, param, 0

    def error(self) -> BadRequest:
        return BadRequest(f"{self.param}: invalid label search {self.text!r}", param=self.param)

    def _peek(self) -> tuple[str, str] | None:
        return self.tokens[self.pos] if self.pos < len(self.tokens) else None

    def expr(self) -> p.Predicate:
        terms = [self.term()]
        while self._peek() == ("op", "|"):
            self.pos += 1
            terms.append(self.term())
        return terms[0] if len(terms) == 1 else p.Or(tuple(terms))

    def term(self) -> p.Predicate:
        factors = [self.factor()]
        while self._peek() == ("op", "&"):
            self.pos += 1
            factors.append(self.factor())
        return factors[0] if len(factors) == 1 else p.And(tuple(factors))

    def factor(self) -> p.Predicate:
        token = self._peek()
        if token is None:
            raise self.error()
        self.pos += 1
        if token == ("op", "!"):
            return p.Not(self.factor())
        if token == ("op", "("):
            inner = self.expr()
            if self._peek() != ("op", ")"):
                raise self.error()
            self.pos += 1
            return inner
        if token[0] != "word":
            raise self.error()
        word = _WORD.match(token[1])
        if word is None:  # pragma: no cover - the tokenizer only yields valid words
            raise self.error()
        # Some label of the path is the word (a whole label, between dots or the ends).
        label = _word_regex(word["label"], word["mods"])
        return p.Regex("tree", f"(?:^|\\.){label}(?:\\.|$)")
