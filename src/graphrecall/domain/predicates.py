"""A small, backend-neutral predicate language over records.

The filter language of both faces (Zep ``SearchFilters``, Memory Engine filters) is parsed
and validated once into these nodes; each store backend compiles them to its own query
language. Values are already validated and normalised (timestamps in stored form).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Literal

CompareOp = Literal["eq", "ne", "gt", "lt", "gte", "lte", "in", "is_null", "is_not_null"]
MetaOp = Literal["eq", "ne", "gt", "lt", "gte", "lte", "in", "contains", "is_null", "is_not_null"]


@dataclass(frozen=True)
class Column:
    """A stored field compared to a value (``in`` takes a tuple)."""

    field: str
    op: CompareOp
    value: Any = None


@dataclass(frozen=True)
class JsonPath:
    """A key inside a JSON-object field (``attributes``, ``metadata``, ``meta``).

    Array values are matched element-wise: ``eq`` holds when any element equals the value;
    ``ne`` is the negation of ``eq``; ``contains`` is a case-sensitive substring test.
    ``is_null`` holds when the key is missing or null.
    """

    field: str
    key: str
    op: MetaOp
    value: Any = None


@dataclass(frozen=True)
class HasAnyLabel:
    """The record's ``labels`` array shares at least one label with ``labels``."""

    labels: tuple[str, ...]


@dataclass(frozen=True)
class EndpointLabels:
    """Edges only: ``all_endpoints`` -> both endpoint nodes carry a listed label;
    otherwise at least one endpoint does."""

    labels: tuple[str, ...]
    all_endpoints: bool


@dataclass(frozen=True)
class LinkedToEpisodes:
    """The record is linked (mentioned / supported) by one of these episodes."""

    episode_uuids: tuple[str, ...]


@dataclass(frozen=True)
class EpisodeMetadata:
    """Episode metadata matches ``predicate`` (a tree of JsonPath over ``metadata``):
    for episodes, their own metadata; for other records, at least one linked episode's."""

    predicate: Predicate


@dataclass(frozen=True)
class PathUnder:
    """A dotted hierarchical path field (``tree``) equals ``path`` or lies below it;
    the empty path is the root, which holds everything."""

    field: str
    path: str


@dataclass(frozen=True)
class Regex:
    """A text field matches ``pattern`` (Python ``re`` syntax, validated by the caller)
    anywhere in the value, unless the pattern anchors itself."""

    field: str
    pattern: str
    ignore_case: bool = False


@dataclass(frozen=True)
class LabelItem:
    """One item of a tree pattern: ``lo`` to ``hi`` consecutive labels (``hi`` None: no
    bound), each a whole match of ``label`` (an RE2 pattern; None: any label), or of
    none of it when ``negated``."""

    label: str | None
    negated: bool
    lo: int
    hi: int | None


@dataclass(frozen=True)
class TreePattern:
    """The labels of a dotted path field, in order, match ``items`` (an lquery). Matched
    label by label (graphrecall.domain.tree_match), in time linear in labels x items: as
    one regular expression with lookahead, a pattern of a few stars took minutes."""

    field: str
    items: tuple[LabelItem, ...]


RangeOp = Literal["contains", "overlaps", "within", "before", "after"]


@dataclass(frozen=True)
class InRange:
    """A time range stored in two fields, related to an instant or a window.

    The stored range is the point ``[s, s]`` when start == end, else half-open ``[s, e)``;
    a record without a start never matches. ``contains``: the range includes the instant
    ``start``; ``overlaps`` / ``within``: the range meets / lies inside the half-open
    window ``[start, end)``; ``before`` / ``after``: the range lies strictly before /
    after the instant ``start``. Values are stored-form timestamps (they sort as text).
    """

    start_field: str
    end_field: str
    op: RangeOp
    start: str
    end: str | None = None


@dataclass(frozen=True)
class JsonContains:
    """A JSON field contains ``value`` as PostgreSQL ``jsonb @>`` defines it: objects
    match as subsets, each element of an array must be contained in some element of the
    stored array, scalars must be equal (a scalar never matches an array)."""

    field: str
    value: Any


@dataclass(frozen=True)
class JsonPathMatch:
    """A JSON field satisfies ``expression``, a PostgreSQL jsonpath predicate in the
    subset of :mod:`graphrecall.domain.jsonpath` (``field @@ expression``), already
    validated by the caller."""

    field: str
    expression: str


@dataclass(frozen=True)
class And:
    items: tuple[Predicate, ...]


@dataclass(frozen=True)
class Or:
    items: tuple[Predicate, ...]


@dataclass(frozen=True)
class Not:
    item: Predicate


@dataclass(frozen=True)
class Nothing:
    """Matches no record (e.g. a filter on a field the scope never has)."""


Predicate = (
    Column
    | JsonPath
    | HasAnyLabel
    | EndpointLabels
    | LinkedToEpisodes
    | EpisodeMetadata
    | PathUnder
    | Regex
    | TreePattern
    | InRange
    | JsonContains
    | JsonPathMatch
    | And
    | Or
    | Not
    | Nothing
)


def all_of(items: list[Predicate]) -> Predicate | None:
    """AND of the items, or None when there are none."""
    if not items:
        return None
    return items[0] if len(items) == 1 else And(tuple(items))


def coalesced(columns: Sequence[str], bounds: Sequence[tuple[CompareOp, Any]]) -> Predicate:
    """``COALESCE(columns...)`` meets every ``(op, value)`` bound: the first non-null
    column is the one compared (a record with all of them null never matches)."""
    options: list[Predicate] = []
    for i, column in enumerate(columns):
        nulls = [Column(c, "is_null") for c in columns[:i]]
        options.append(And((*nulls, *(Column(column, op, value) for op, value in bounds))))
    return options[0] if len(options) == 1 else Or(tuple(options))
