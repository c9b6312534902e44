"""In-memory copies of the columns searches filter on, for turning a filter into a mask.

A broad filter (three edge types and a time window, passing ~5 % of 100k facts) is slow to
apply in SQL at search time: listing its rows reads ~100k rows (~90 ms), and checking each
leg's best rows against it costs a primary-key lookup a row, thousands of rows deep
(the vector leg's post-filter took ~48 ms of a 65 ms search). Kept in memory as numpy
arrays, the same filter becomes a boolean mask over the owner's rows in well under a
millisecond, and each leg ranks exactly the rows it allows: the vector leg scores them,
the term index ranks only them.

:class:`Columns` holds one owner's rows (a graph's edges, say): rowid, uuid, and each
column in :data:`COLUMNS` either as dictionary codes (text) or as ``datetime64[us]``
(timestamps, all in ``clock.to_iso``'s fixed-width form, so their order is the strings'
order). :meth:`Columns.allowed` evaluates the part of the predicate language those
columns cover (comparisons, ``in``, null tests, AND / OR / NOT) with SQL's three-valued
logic; any other predicate, or a value of another type, makes it answer None and the
search filters in SQL, as before. The copy is a cache, never trusted alone: each leg
checks its final page against the filter in SQL and falls back to SQL if any row fails.

The copies are kept current from the row log by ``column_copies.py``.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from itertools import islice
from typing import Any

import numpy as np
import numpy.typing as npt

from graphrecall.domain import predicates as p
from graphrecall.domain.scopes import SCOPES

Ints = npt.NDArray[np.int64]
Bools = npt.NDArray[np.bool_]
Times = npt.NDArray[np.datetime64]

# The filterable columns kept per table, as the scopes declare them: text columns
# (compared by dictionary code) and timestamp columns.
COLUMNS: dict[str, tuple[tuple[str, ...], tuple[str, ...]]] = {
    s.table: (s.filter_text, s.filter_times) for s in SCOPES.values() if s.filter_columns
}
# Masks kept per copy (the latest filters; a search's two legs ask for the same one).
MASKS_KEPT = 8
NOT_A_TIME = np.datetime64("NaT", "us")


def _canonical(value: str) -> bool:
    """Whether ``value`` has ``clock.to_iso``'s fixed-width form (2024-01-02T03:04:05.678901Z)."""
    return (
        len(value) == 27
        and value[4] == "-"
        and value[10] == "T"
        and value[19] == "."
        and value[26] == "Z"
        and value[:4].isdigit()
    )


def _times(values: Sequence[Any]) -> Times | None:
    """Timestamps as ``datetime64[us]`` (NaT for NULL), or None when one is not in the
    canonical form (its order might then differ from the strings' order)."""
    texts: list[str] = []
    for v in values:
        if v is None:
            texts.append("NaT")
        elif isinstance(v, str) and _canonical(v):
            texts.append(v[:-1])
        else:
            return None
    try:
        return np.array(texts, dtype="datetime64[us]")
    except ValueError:
        return None


def _time_value(value: Any) -> np.datetime64 | None:
    """One timestamp as :func:`_times` reads a column (None: not in the stored form)."""
    if value is None:
        return None
    parsed = _times([value])
    return None if parsed is None else parsed[0]


@dataclass(frozen=True)
class Text:
    """A text column as dictionary codes (-1 for NULL). ``words`` and ``code_of`` only
    grow, and a later copy may share them: this copy knows their first ``known`` words."""

    codes: npt.NDArray[np.int32]
    words: list[str]
    code_of: dict[str, int]
    known: int

    def code(self, word: str) -> int | None:
        code = self.code_of.get(word)
        return code if code is not None and code < self.known else None

    @staticmethod
    def of(values: Sequence[Any]) -> Text | None:
        code_of: dict[str, int] = {}
        codes = np.empty(len(values), dtype=np.int32)
        for i, v in enumerate(values):
            if v is None:
                codes[i] = -1
            elif isinstance(v, str):
                codes[i] = code_of.setdefault(v, len(code_of))
            else:
                return None  # a number in a text column: SQL's affinity rules apply
        return Text(codes, list(code_of), code_of, len(code_of))

    def with_values(self, rows: Ints, values: Sequence[Any], size: int) -> Text | None:
        """A copy with ``rows`` set to ``values``, grown to ``size`` rows. New words are
        appended to the shared dictionary when this copy knows all of it (the usual case:
        copies catch up one after another); else the copy gets a dictionary of its own."""
        if any(v is not None and not isinstance(v, str) for v in values):
            return None  # a number in a text column: SQL's affinity rules apply
        words, code_of = self.words, self.code_of
        if len(words) != self.known:  # another copy grew it since
            words, code_of = words[: self.known], {w: i for i, w in enumerate(words[: self.known])}
        codes = np.full(size, -1, dtype=np.int32)
        codes[: len(self.codes)] = self.codes
        for row, v in zip(rows.tolist(), values, strict=True):
            if v is None:
                codes[row] = -1
                continue
            code = code_of.get(v)
            if code is None:
                code = code_of[v] = len(words)
                words.append(v)
            codes[row] = code
        return Text(codes, words, code_of, len(words))


Truth = tuple[Bools, Bools]  # rows where a predicate is true, rows where it is false


@dataclass(frozen=True)
class Columns:
    """One owner's rows and their filter columns, as of one moment. Its rows are the
    first ``len(rowids)``: ``uuids`` and ``position`` only grow, and the copy that catches
    up from this one shares them (appending its new rows) unless a row changed its uuid."""

    table: str
    owner_field: str
    owner: str
    rowids: Ints
    uuids: list[str]
    position: dict[str, int]
    alive: Bools
    text: dict[str, Text | None]
    times: dict[str, Times | None]
    _matrix_rows: dict[int, tuple[object, Ints]] = field(default_factory=dict, compare=False)
    # The masks of the latest filters, shared by a search's two legs.
    _masks: dict[object, Bools | None] = field(default_factory=dict, compare=False)
    _masks_lock: threading.Lock = field(default_factory=threading.Lock, compare=False)

    def __len__(self) -> int:
        return len(self.rowids)

    # -- filters ---------------------------------------------------------------------
    def allowed(self, scope: Mapping[str, Any], where: p.Predicate | None) -> Bools | None:
        """The rows ``scope`` and ``where`` allow (read-only), or None when a part of them
        is not covered by these columns (then SQL must filter)."""
        try:
            key: object = (tuple((k, _hashable(v)) for k, v in sorted(scope.items())), where)
            hash(key)
        except TypeError:  # a value that cannot be a key: evaluate it every time
            return self._allowed(scope, where)
        with self._masks_lock:  # the other leg waits for the mask rather than redo it
            if key not in self._masks:
                while len(self._masks) >= MASKS_KEPT:
                    self._masks.pop(next(iter(self._masks)))
                self._masks[key] = self._allowed(scope, where)
            return self._masks[key]

    def _allowed(self, scope: Mapping[str, Any], where: p.Predicate | None) -> Bools | None:
        mask = self.alive.copy()
        for key, value in scope.items():
            if key == self.owner_field:
                if value != self.owner:
                    return None
                continue
            if value is None:
                truth = self._column(p.Column(key, "is_null", None))
            elif isinstance(value, list | tuple | set | frozenset):
                truth = self._column(p.Column(key, "in", tuple(value)))
            else:
                truth = self._column(p.Column(key, "eq", value))
            if truth is None:
                return None
            mask &= truth[0]
        if where is not None:
            truth = self._truth(where)
            if truth is None:
                return None
            mask &= truth[0]
        mask.flags.writeable = False
        return mask

    def _truth(self, pred: p.Predicate) -> Truth | None:
        match pred:
            case p.And(items) | p.Or(items):
                parts = [self._truth(i) for i in items]
                if any(part is None for part in parts):
                    return None
                known = [part for part in parts if part is not None]
                if not known:  # an empty AND is true, an empty OR false
                    every = np.ones(len(self), dtype=bool)
                    return (every, ~every) if isinstance(pred, p.And) else (~every, every)
                if isinstance(pred, p.And):
                    return (
                        np.logical_and.reduce([t for t, _ in known]),
                        np.logical_or.reduce([f for _, f in known]),
                    )
                return (
                    np.logical_or.reduce([t for t, _ in known]),
                    np.logical_and.reduce([f for _, f in known]),
                )
            case p.Not(item):
                inner = self._truth(item)
                return None if inner is None else (inner[1], inner[0])
            case p.Nothing():
                none = np.zeros(len(self), dtype=bool)
                return none, ~none
            case p.Column():
                return self._column(pred)
        return None

    def _column(self, pred: p.Column) -> Truth | None:
        field_name, op, value = pred.field, pred.op, pred.value
        if field_name == "uuid":
            return self._uuid(op, value)
        if field_name in self.text:
            column = self.text[field_name]
            return None if column is None else _text_truth(column, op, value)
        if field_name in self.times:
            times = self.times[field_name]
            return None if times is None else _time_truth(times, op, value)
        return None

    def _uuid(self, op: str, value: Any) -> Truth | None:
        if op not in ("eq", "in"):
            return None
        values = [value] if op == "eq" else list(value)
        if not all(isinstance(v, str) for v in values):
            return None
        size = len(self)
        hit = np.zeros(size, dtype=bool)
        hit[[i for v in values if (i := self.position.get(v, size)) < size]] = True
        return hit, ~hit  # uuid is never NULL

    # -- alignment with a vector matrix ------------------------------------------------
    def matrix_rows(self, index: Mapping[str, int]) -> Ints:
        """Each row's row in the vector matrix whose uuid -> row map is ``index`` (-1 when
        it has no vector); kept for the latest map seen."""
        cached = self._matrix_rows.get(0)
        if cached is not None and cached[0] is index:
            return cached[1]
        size = len(self)
        rows = np.fromiter((index.get(u, -1) for u in islice(self.uuids, size)), np.int64, size)
        self._matrix_rows[0] = (index, rows)
        return rows

    # -- catching up ---------------------------------------------------------------------
    def with_rows(self, logged: Ints, found: Sequence[Sequence[Any]]) -> Columns | None:
        """A copy after the rows ``logged`` (rowids) were written: ``found`` holds those
        still of this owner (rowid, uuid, text..., times..., as :func:`select` reads
        them), the others are dropped. None when the copy must be read again whole (a
        value that does not fit the columns, or a new row numbered below the last)."""
        text_names, time_names = COLUMNS[self.table]
        at = np.searchsorted(self.rowids, logged)
        inside = at < len(self)
        held = at[inside][self.rowids[at[inside]] == logged[inside]]
        if not held.size and not found:
            return self  # the writes were another owner's
        alive = self.alive.copy()
        alive[held] = False  # dropped unless found again below
        size = len(self)
        rows: list[int] = []
        added: list[int] = []
        new_uuids: list[str] = []
        renamed: dict[int, str] = {}  # rows whose rowid another row now has
        last = int(self.rowids[-1]) if size else -1
        for record in found:
            rowid, uuid = int(record[0]), str(record[1])
            i = int(np.searchsorted(self.rowids, rowid))
            if i < size and int(self.rowids[i]) == rowid:
                if self.uuids[i] != uuid:
                    renamed[i] = uuid
                rows.append(i)
            else:
                if rowid <= (added[-1] if added else last):
                    return None  # numbered below the last row: keep the rowids sorted
                added.append(rowid)
                rows.append(size + len(new_uuids))
                new_uuids.append(uuid)
        # A new row's uuid may be one an old row had (deleted, then inserted again).
        moved = any(self.position.get(u, size) < size for u in new_uuids)
        uuids, position = self.uuids, self.position
        if renamed or moved or len(uuids) != size:  # not append-only, or grown by another
            uuids = self.uuids[:size]
            position = {u: i for i, u in enumerate(uuids)}
            for i, uuid in renamed.items():
                if position.get(uuids[i]) == i:
                    del position[uuids[i]]
                uuids[i] = uuid
                position[uuid] = i
        for uuid in new_uuids:
            position[uuid] = len(uuids)
            uuids.append(uuid)
        size = len(uuids)  # this copy's rows: the old ones and the new
        at_rows = np.asarray(rows, dtype=np.int64)
        rowids = np.concatenate([self.rowids, np.asarray(added, dtype=np.int64)])
        alive = np.concatenate([alive, np.zeros(size - len(self), dtype=bool)])
        alive[at_rows] = True
        text: dict[str, Text | None] = {}
        for i, name in enumerate(text_names, start=2):
            column = self.text[name]
            text[name] = (
                None if column is None else column.with_values(at_rows, [r[i] for r in found], size)
            )
        times: dict[str, Times | None] = {}
        for i, name in enumerate(time_names, start=2 + len(text_names)):
            old, new = self.times[name], _times([r[i] for r in found])
            if old is None or new is None:
                times[name] = None
                continue
            grown = np.concatenate([old, np.full(size - len(self), NOT_A_TIME)])
            grown[at_rows] = new
            times[name] = grown
        if any(v is None for v in text.values()) or any(v is None for v in times.values()):
            return None
        copy = Columns(
            self.table, self.owner_field, self.owner, rowids, uuids, position, alive, text, times
        )
        cached = self._matrix_rows.get(0)
        if cached is not None and not renamed:  # the old rows kept their uuids
            index = cached[0]
            assert isinstance(index, dict)
            extra = np.fromiter((index.get(u, -1) for u in uuids[len(self) :]), np.int64)
            copy._matrix_rows[0] = (index, np.concatenate([cached[1], extra]))
        return copy


def _hashable(value: Any) -> Any:
    return tuple(value) if isinstance(value, list | set | frozenset) else value


ORDER = {"gt": np.greater, "lt": np.less, "gte": np.greater_equal, "lte": np.less_equal}


def _truth(
    null: Bools,
    op: str,
    value: Any,
    equal: Callable[[list[Any]], Bools | None],
    order: Callable[[Any, Any], Bools | None],
) -> Truth | None:
    """A comparison of a column with SQL's three-valued logic, given the column's NULLs,
    its non-NULL rows equal to any of some values (``equal``), and its non-NULL rows for
    which ``order(ufunc, value)`` holds; None when either cannot say (SQL decides)."""
    if op == "is_null":
        return null, ~null
    if op == "is_not_null":
        return ~null, null
    values = list(value) if op == "in" else [value]
    if op == "in" and not values:  # SQL's "0": false, even for NULL
        return np.zeros_like(null), np.ones_like(null)
    if op in ("eq", "in", "ne"):
        hit = equal(values)
        if hit is None:
            return None
        if op == "ne":  # IS NOT: NULL is not equal to a value
            return ~hit, hit
        return hit, ~hit & ~null
    if op not in ORDER:
        return None
    hit = order(ORDER[op], value)
    return None if hit is None else (hit, ~hit & ~null)


def _text_truth(column: Text, op: str, value: Any) -> Truth | None:
    codes = column.codes
    null = codes < 0

    def equal(values: list[Any]) -> Bools | None:
        if not all(isinstance(v, str) for v in values):
            return None
        # One lookup per row, through a table of the words (its last entry, for NULL's
        # -1, is False).
        wanted = np.zeros(column.known + 1, dtype=bool)
        wanted[[c for v in values if (c := column.code(v)) is not None]] = True
        hit: Bools = wanted[codes]
        return hit

    def order(compare: Any, bound: Any) -> Bools | None:
        if not isinstance(bound, str):
            return None
        # Decided once per distinct word (binary order: SQLite's BINARY collation on
        # UTF-8 agrees with code point order).
        passes = np.zeros(column.known + 1, dtype=bool)
        if column.known:
            passes[:-1] = compare(np.asarray(column.words[: column.known], dtype=object), bound)
        hit: Bools = passes[codes]
        return hit

    return _truth(null, op, value, equal, order)


def _time_truth(times: Times, op: str, value: Any) -> Truth | None:
    null = np.isnat(times)

    def equal(values: list[Any]) -> Bools | None:
        parsed = [_time_value(v) for v in values]
        if any(v is None for v in parsed):
            return None
        hit: Bools = np.isin(times, np.asarray(parsed, dtype="datetime64[us]")) & ~null
        return hit

    def order(compare: Any, bound: Any) -> Bools | None:
        parsed = _time_value(bound)
        if parsed is None:
            return None
        hit: Bools = compare(times, parsed) & ~null
        return hit

    return _truth(null, op, value, equal, order)


def select(table: str) -> str:
    """The SELECT (before its WHERE) that reads rows for :class:`Columns`."""
    text_names, time_names = COLUMNS[table]
    names = ", ".join(("rowid", "uuid", *text_names, *time_names))
    return f"SELECT {names} FROM {table}"


def read(table: str, owner_field: str, owner: str, rows: Sequence[Sequence[Any]]) -> Columns:
    """The copy of ``rows`` (as :func:`select` reads them); a column whose values do not
    fit is kept as None (filters on it go to SQL). A copy read for searching; ``covers``
    builds its empty one with ``_copy`` itself, so reads stay countable."""
    return _copy(table, owner_field, owner, rows)


def _copy(table: str, owner_field: str, owner: str, rows: Sequence[Sequence[Any]]) -> Columns:
    text_names, time_names = COLUMNS[table]
    width = 2 + len(text_names) + len(time_names)
    values = list(zip(*rows, strict=True)) if rows else [()] * width
    uuids = [str(u) for u in values[1]]
    text = {name: Text.of(values[i]) for i, name in enumerate(text_names, start=2)}
    times = {
        name: _times(values[i]) for i, name in enumerate(time_names, start=2 + len(text_names))
    }
    return Columns(
        table,
        owner_field,
        owner,
        np.asarray(values[0], dtype=np.int64),
        uuids,
        {u: i for i, u in enumerate(uuids)},
        np.ones(len(uuids), dtype=bool),
        text,
        times,
    )


def covers(
    table: str, owner_field: str, owner: str, scope: Mapping[str, Any], where: p.Predicate | None
) -> bool:
    """Whether a copy of ``table`` could turn ``scope`` and ``where`` into a mask, asked
    of an empty copy (the same evaluator, no rows): a search whose filter it could not
    does not start a copy for its owner."""
    if table not in COLUMNS:
        return False
    return _copy(table, owner_field, owner, []).allowed(scope, where) is not None
