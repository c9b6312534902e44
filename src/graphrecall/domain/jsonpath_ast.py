"""The syntax tree of a parsed SQL/JSONPath predicate (``jsonpath.py`` parses text into
it and evaluates it): paths of steps, literals, comparisons, ``exists``, ``like_regex``,
``starts with``, a bare boolean path, and ``&&`` / ``||`` / ``!``."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

from graphrecall.domain import safe_regex

# -- the tree -------------------------------------------------------------------------------


@dataclass(frozen=True)
class Key:
    name: str


@dataclass(frozen=True)
class AnyKey:
    pass


@dataclass(frozen=True)
class Index:
    index: int | None  # None: [*]


Step = Key | AnyKey | Index


@dataclass(frozen=True)
class Path:
    steps: tuple[Step, ...]


@dataclass(frozen=True)
class Lit:
    value: Any


Operand = Path | Lit
CmpOp = Literal["==", "!=", "<", "<=", ">", ">="]


@dataclass(frozen=True)
class Compare:
    op: CmpOp
    left: Operand
    right: Operand


@dataclass(frozen=True)
class Exists:
    path: Path


@dataclass(frozen=True)
class LikeRegex:
    path: Path
    pattern: safe_regex.Matcher


@dataclass(frozen=True)
class StartsWith:
    path: Path
    prefix: str


@dataclass(frozen=True)
class BoolPath:
    """A bare path at the top level: its single item, when that is a boolean."""

    path: Path


@dataclass(frozen=True)
class AndExpr:
    items: tuple[Expr, ...]


@dataclass(frozen=True)
class OrExpr:
    items: tuple[Expr, ...]


@dataclass(frozen=True)
class NotExpr:
    item: Expr


Expr = Compare | Exists | LikeRegex | StartsWith | BoolPath | AndExpr | OrExpr | NotExpr
