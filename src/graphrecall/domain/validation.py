"""The one input-validation layer every face runs a request body through before anything
reads it: JSON that parses, nests no deeper than ``MAX_JSON_DEPTH``, holds no integer
outside the signed 64-bit range (SQLite's and Postgres's ``bigint``), no NaN or
infinity (which no JSON reader on the way out accepts), and no text (a string or an
object's key) holding a lone surrogate (``"\\ud800"``: not Unicode, so no UTF-8 writer,
the response serialiser included, can write it back) or a NUL (PostgreSQL's ``text`` and
``jsonb`` cannot hold one; refused on SQLite too, so both backends answer alike).

A value that passed here can be stored and serialised back; a value that did not is
a 400 (or a JSON-RPC client error) naming the offending field as a path such as
``edges[0].attributes.a``. Checking the whole document once at the edge, rather than
field by field in each model, is what keeps a deep ``attributes`` or ``meta`` from
being written and then failing every read.
"""

from __future__ import annotations

import json
import math
import re
from typing import Any

from graphrecall.domain import limits
from graphrecall.domain.errors import BadRequest

INT64_MIN = -(2**63)
INT64_MAX = 2**63 - 1
# What no stored text may hold: NUL and the UTF-16 surrogate halves (valid only in pairs,
# which a JSON parser has already joined; one left over is not a character).
_BAD_CHARS = re.compile("[\x00\ud800-\udfff]")
_SURROGATES = re.compile("[\ud800-\udfff]")


def _reject_constant(name: str) -> Any:
    raise ValueError(f"{name} is not a JSON number")


class InvalidJson(BadRequest):
    """The document is not JSON at all (JSON-RPC's parse error)."""


def parse(raw: bytes | str, *, param: str = "body") -> Any:
    """Parse ``raw`` as JSON (no NaN or infinity); a document nested past what the parser
    can walk is :class:`BadRequest`, not a ``RecursionError``."""
    try:
        return json.loads(raw, parse_constant=_reject_constant)
    except RecursionError:
        raise _too_deep(param) from None
    except (ValueError, UnicodeDecodeError) as exc:
        raise InvalidJson(f"{param} is not valid JSON: {exc}", param=param) from None


def loads(raw: bytes | str, *, param: str = "body") -> Any:
    """:func:`parse` then :func:`check`; raises :class:`BadRequest` naming the offending
    path (``param`` when the document itself is at fault)."""
    value = parse(raw, param=param)
    check(value, param=param)
    return value


def check(value: Any, *, param: str = "body", depth: int = 0) -> None:
    """Raise :class:`BadRequest` naming the first value of ``value`` (a parsed JSON
    document whose own path is ``param``) that nests too deep, is out of range, or is
    text (a string or a key) that cannot be stored (:func:`text_problem`)."""
    # Iterative, so a document that is too deep can never exhaust the interpreter's stack.
    stack: list[tuple[Any, str, int]] = [(value, param, depth)]
    while stack:
        item, path, level = stack.pop()
        if isinstance(item, dict | list):
            if level >= limits.MAX_JSON_DEPTH:
                raise _too_deep(path)
            if isinstance(item, dict):
                for key in item:
                    # A key is checked before its value is walked, so no path below
                    # carries a character the error itself could not be written with.
                    check_text(str(key), param=_key_path(path, printable(str(key))), what="key")
                stack.extend((v, _key_path(path, str(k)), level + 1) for k, v in item.items())
            else:
                stack.extend((v, f"{path}[{i}]", level + 1) for i, v in enumerate(item))
        elif isinstance(item, str):
            check_text(item, param=path)
        elif isinstance(item, bool) or item is None:
            continue
        elif isinstance(item, int):
            if not INT64_MIN <= item <= INT64_MAX:
                raise BadRequest(
                    f"{path}: integer {_short(item)} is outside the signed 64-bit range",
                    param=path,
                )
        elif isinstance(item, float) and not math.isfinite(item):
            raise BadRequest(f"{path}: {item} is not a finite number", param=path)


def clip(value: Any) -> Any:
    """``value`` as is when :func:`check` accepts it; otherwise a copy that any JSON
    writer can serialise: containers past ``MAX_JSON_DEPTH`` become ``None``, NaN and
    infinities ``None``, integers past 64 bits their decimal string, a lone surrogate in
    a string or key U+FFFD.

    The serialisation guard: domain models run what they read back through it, so a
    value stored before the input check existed can never make a read fail."""
    try:
        check(value)
    except BadRequest:
        return _clipped(value, 0)
    return value


def _clipped(value: Any, level: int) -> Any:
    if isinstance(value, dict | list):
        if level >= limits.MAX_JSON_DEPTH:
            return None
        if isinstance(value, dict):
            return {_whole(str(k)): _clipped(v, level + 1) for k, v in value.items()}
        return [_clipped(v, level + 1) for v in value]
    if isinstance(value, str):
        return _whole(value)
    if isinstance(value, bool) or value is None:
        return value
    if isinstance(value, int) and not INT64_MIN <= value <= INT64_MAX:
        return str(value) if value.bit_length() < 14_000 else None
    if isinstance(value, float) and not math.isfinite(value):
        return None
    return value


def text_problem(value: str) -> str | None:
    """Why ``value`` cannot be stored as text (a NUL, a lone surrogate), or ``None``."""
    if value.isascii():  # the common case: one C-level pass, no regex
        return "a NUL character (U+0000)" if "\x00" in value else None
    bad = _BAD_CHARS.search(value)
    if bad is None:
        return None
    char = bad.group()
    if char == "\x00":
        return "a NUL character (U+0000)"
    return f"a lone surrogate (U+{ord(char):04X}), which is not valid Unicode"


def check_text(value: str, *, param: str, what: str = "text") -> str:
    """``value`` when it can be stored as text, else :class:`BadRequest` naming ``param``."""
    problem = text_problem(value)
    if problem is not None:
        raise BadRequest(f"{param or 'body'}: {what} holds {problem}", param=param or "body")
    return value


_WORD = re.compile(r"\w+")


def term_problem(text: str, cap: int = limits.MAX_QUERY_TERMS) -> str | None:
    """Why ``text`` is too costly a query (more than ``cap`` distinct words), or ``None``.
    Each distinct word is a lexical lookup and a time-phrase candidate; the count stops
    at the first word past the cap, so a long text costs no more than a short one here."""
    seen: set[str] = set()
    for match in _WORD.finditer(text):
        seen.add(match.group().lower())
        if len(seen) > cap:
            return f"more than {cap} distinct words; a query holds at most {cap}"
    return None


def check_int(value: int, *, param: str) -> int:
    """``value`` when it fits a signed 64-bit integer, else :class:`BadRequest`."""
    if not INT64_MIN <= value <= INT64_MAX:
        raise BadRequest(
            f"{param}: integer {_short(value)} is outside the signed 64-bit range", param=param
        )
    return value


def _whole(text: str) -> str:
    """``text`` with each lone surrogate replaced by U+FFFD (a NUL is writable JSON)."""
    return text if text.isascii() else _SURROGATES.sub("\ufffd", text)


def printable(text: str) -> str:
    """``text`` with each NUL or lone surrogate written as its ``\\uXXXX`` escape: what an
    error may quote of a refused value."""
    if text_problem(text) is None:
        return text
    return _BAD_CHARS.sub(lambda m: f"\\u{ord(m.group()):04x}", text)


def _key_path(parent: str, key: str) -> str:
    return key if parent in ("", "body") else f"{parent}.{key}"


def _short(value: int) -> str:
    if value.bit_length() > 256:
        return f"of {value.bit_length()} bits"
    text = str(value)
    return text if len(text) <= 24 else f"{text[:10]}...({len(text)} digits)"


def _too_deep(path: str) -> BadRequest:
    shown = path if len(path) <= 80 else f"{path[:60]}...{path[-16:]}"
    return BadRequest(
        f"{shown}: JSON nested deeper than {limits.MAX_JSON_DEPTH} levels", param=path or "body"
    )
