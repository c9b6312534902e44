"""Compiling :mod:`graphrecall.domain.predicates` to SQL, backend-neutral: the
connectives, column tests, stored ranges and field checks. Each SQL backend compiles every other
predicate in its own dialect (``sqlite/predicates.py``, ``postgres/predicates.py``)."""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, ClassVar

from graphrecall.domain import predicates as p
from graphrecall.domain.models import Record
from graphrecall.domain.scopes import owner_field

# A filter naming at most this many episodes, or uuids, allows few rows, found by index.
BOUNDED_EPISODES = 100
BOUNDED_UUIDS = 1_000


def bounded(pred: p.Predicate | None) -> bool:
    """Whether an index finds the few rows ``pred`` allows: it is, or ANDs, a link to a few
    episodes (``episode_uuids``, the ``links`` index) or a short list of uuids (the primary
    key). A search under such a filter lists those rows and ranks just them, instead of
    ranking the best rows and checking them against a filter that few of them pass."""
    match pred:
        case p.LinkedToEpisodes(episode_uuids):
            return len(episode_uuids) <= BOUNDED_EPISODES
        case p.Column("uuid", "in", values):
            return len(values) <= BOUNDED_UUIDS
        case p.Column("uuid", "eq", _):
            return True
        case p.And(items):
            return any(bounded(i) for i in items)
    return False


CMP = {"eq": "=", "gt": ">", "lt": "<", "gte": ">=", "lte": "<="}

# (column, value or values, params) -> the clause; it appends its parameters.
Clause = Callable[[str, Any, list[Any]], str]


@dataclass(frozen=True)
class Dialect:
    """The bits of a column test's SQL that differ between backends (scopes and
    predicates alike)."""

    mark: str  # the parameter placeholder
    true: str
    false: str
    member: Clause  # column IN a non-empty list of values
    equal: Clause  # column = a scalar value (a scope's)
    distinct: str  # "is not", NULL-safe


def column(col: str, op: str, value: Any, params: list[Any], dialect: Dialect) -> str:
    """A column test (``p.Column``)."""
    if op == "is_null":
        return f"{col} IS NULL"
    if op == "is_not_null":
        return f"{col} IS NOT NULL"
    if op == "in":
        values = list(value)
        if not values:
            return dialect.false
        return dialect.member(col, values, params)
    params.append(value)
    if op == "ne":
        return f"{col} {dialect.distinct} {dialect.mark}"
    return f"{col} {CMP[op]} {dialect.mark}"


class SqlCompiler(ABC):
    """Compiles predicates for rows of ``table`` aliased as ``alias``."""

    dialect: ClassVar[Dialect]

    def __init__(self, table: str, columns: frozenset[str], alias: str = "t") -> None:
        self.table = table
        self.columns = columns
        self.alias = alias

    def compile(self, pred: p.Predicate) -> tuple[str, list[Any]]:
        params: list[Any] = []
        sql = self._node(pred, params)
        return sql, params

    def _node(self, pred: p.Predicate, params: list[Any]) -> str:
        a = self.alias
        match pred:
            case p.And(items):
                return "(" + " AND ".join(self._node(i, params) for i in items) + ")"
            case p.Or(items):
                return "(" + " OR ".join(self._node(i, params) for i in items) + ")"
            case p.Not(item):
                # NOT of an unknown (NULL) comparison is unknown too, on both backends.
                return f"(NOT {self._node(item, params)})"
            case p.Nothing():
                return self.dialect.false
            case p.Column(field, op, value):
                return column(f"{a}.{self._field(field)}", op, value, params, self.dialect)
            case p.InRange(start_field, end_field, op, start, end):
                return in_range(
                    f"{a}.{self._field(start_field)}",
                    f"{a}.{self._field(end_field)}",
                    op,
                    start,
                    end,
                    params,
                    self.dialect.mark,
                )
        return self._leaf(pred, params)

    @abstractmethod
    def _leaf(self, pred: p.Predicate, params: list[Any]) -> str:
        """Every predicate but the connectives, column tests and ranges, in the
        backend's dialect."""

    def _field(self, field: str) -> str:
        if field not in self.columns:
            raise ValueError(f"{self.table} has no field {field!r}")
        return field


def in_range(
    s: str, e: str, op: str, start: str, end: str | None, params: list[Any], mark: str
) -> str:
    """A stored range is the point [s, s] when s = e, else the half-open [s, e)."""
    m = mark
    point = f"{s} = {e}"
    if op == "contains":
        params.extend([start, start, start])
        return f"({s} <= {m} AND ({m} < {e} OR ({point} AND {s} = {m})))"
    if op == "overlaps":
        params.extend([end, start, start])
        return f"({s} < {m} AND ({e} > {m} OR ({point} AND {s} >= {m})))"
    if op == "within":
        params.extend([start, end, end])
        return f"({s} >= {m} AND (({s} < {e} AND {e} <= {m}) OR ({point} AND {s} < {m})))"
    if op == "before":
        params.extend([start, start])
        return f"(({s} < {e} AND {e} <= {m}) OR ({point} AND {s} < {m}))"
    params.append(start)
    return f"({s} > {m})"


def restricted(kind: type[Record], scope: Mapping[str, Any], where: p.Predicate | None) -> bool:
    """Whether a search allows fewer rows than its owner's all."""
    return where is not None or bool(set(scope) - {owner_field(kind)})
