"""What only SQLite's FTS5 knows: its MATCH syntax, its tokenizer, and its on-disk
records (the structure record, the averages record and ``_docsize`` rows), read here to
give the shared BM25 (``store/lexical``) the statistics it needs.

Reading FTS5's format is confined to this module and ``term_index.py``;
``tests/store/sqlite/test_fts5.py`` fails loudly if a SQLite upgrade changes it, and every
reader here has a path that needs none of it (FTS5's own ``bm25()`` ranking).
"""

from __future__ import annotations

import sqlite3
import threading
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np

from graphrecall.store.lexical.bm25 import Ints, RowStatistics
from graphrecall.store.lexical.plan import MatchPlan

Read = Callable[[str, Sequence[Any]], list[Any]]
# The FTS5 structure record's id in ``{table}_fts_data``; any committed write changes it.
STRUCTURE_ID = 10
# The averages record's id in ``{table}_fts_data`` (fts5_index.c, FTS5_AVERAGES_ROWID).
AVERAGES_ID = 1


def quote(term: str) -> str:
    return '"' + term.replace('"', '""') + '"'


def any_of(terms: Sequence[str]) -> str:
    return " OR ".join(quote(t) for t in terms)


def first(plan: MatchPlan) -> list[str]:
    """MATCH expressions whose (disjoint) union the plan ranks first."""
    if not plan.common:
        return [any_of(plan.terms)]
    rare, common = any_of(plan.rare), any_of(plan.common)
    return [f"({rare}) AND ({common})", f"({rare}) NOT ({common})"]


def fill(plan: MatchPlan) -> str | None:
    """The MATCH expression of the plan's fill (None: it has none)."""
    if not plan.weighty:
        return None
    return f"({any_of(plan.weighty)}) NOT ({any_of(plan.rare)})"


def varints(blob: bytes) -> list[int]:
    """The SQLite varints in ``blob`` (FTS5's ``_docsize`` rows: a row's token count per
    column; its averages record: the row count, then each column's token total): big-end
    first, seven bits a byte while the high bit is set, all eight bits of a ninth byte."""
    values: list[int] = []
    value = length = 0
    for byte in blob:
        length += 1
        if length == 9:
            values.append((value << 8) | byte)
            value = length = 0
        elif byte & 0x80:
            value = (value << 7) | (byte & 0x7F)
        else:
            values.append((value << 7) | byte)
            value = length = 0
    return values


def row_length(blob: bytes) -> int:
    """A row's token count over its columns, from its ``_docsize`` record."""
    return sum(varints(blob))


def column_weights(names: Sequence[str], weights: Sequence[float]) -> dict[str, float]:
    return {n: weights[i] if i < len(weights) else 1.0 for i, n in enumerate(names)}


def statistics(
    read: Read,
    tokenizer: Tokenizer,
    table: str,
    weights: Mapping[str, float],
    phrases: Sequence[str],
    hits: Sequence[int],
    rowids: Ints,
) -> RowStatistics | None:
    """BM25's statistics for ``rowids`` and ``phrases`` (tokens, in the order a MATCH
    expression names them; ``hits``: how many rows of the table hold each), from
    ``table``'s full-text index and rows (``weights``: each column of the index by name,
    in order, and its weight); None when the index holds no rows. The terms' frequencies
    come from the rows' own text tokenised as FTS5 does, never from the terms' posting
    lists: a user's name is in every message of theirs, and walking its list is slow."""
    averages = read(f"SELECT block FROM {table}_fts_data WHERE id = ?", [AVERAGES_ID])
    if not averages or not len(rowids):
        return None
    rows, *columns = varints(bytes(averages[0][0]))
    if not rows:
        return None
    marks = ", ".join(str(int(r)) for r in rowids)
    sized = read(f"SELECT id, sz FROM {table}_fts_docsize WHERE id IN ({marks})", [])
    numbers = {int(r[0]): i for i, r in enumerate(sized)}
    lengths = np.array([row_length(bytes(r[1])) for r in sized], dtype=np.float64)
    names = list(weights)
    texts = read(f"SELECT rowid, {', '.join(names)} FROM {table} WHERE rowid IN ({marks})", [])
    freqs = np.zeros((len(phrases), len(sized)), dtype=np.float64)
    position = {p: i for i, p in reversed(list(enumerate(phrases)))}
    distinct = list(position)
    for term, doc, column in tokenizer.postings(names, [tuple(r) for r in texts], distinct):
        at = numbers.get(int(doc))
        if at is not None:
            freqs[position[term], at] += weights[column]
    for i, phrase in enumerate(phrases):  # a term named twice counts twice, as in bm25()
        freqs[i] = freqs[position[phrase]]
    return RowStatistics(
        rows=rows,
        average=sum(columns) / rows,
        rowids=np.array(list(numbers), dtype=np.int64),
        lengths=lengths,
        hits=hits,
        freqs=freqs,
    )


class Tokenizer:
    """Text as the FTS5 tokenizer ``tokenize`` indexes it: a query term's tokens, in
    order, and rows' postings (an in-memory FTS5 table per column layout)."""

    def __init__(self, tokenize: str) -> None:
        self._tokenize = tokenize
        self._conn = sqlite3.connect(":memory:", check_same_thread=False, isolation_level=None)
        self._conn.execute(f"CREATE VIRTUAL TABLE q USING fts5(x, tokenize={tokenize!r})")
        self._conn.execute("CREATE VIRTUAL TABLE qv USING fts5vocab(q, instance)")
        self._lock = threading.Lock()
        self._known: dict[str, tuple[str, ...]] = {}
        self._layouts: dict[tuple[str, ...], str] = {}

    def tokens(self, term: str) -> tuple[str, ...]:
        known = self._known.get(term)
        if known is not None:
            return known
        with self._lock:
            self._conn.execute("INSERT INTO q(rowid, x) VALUES (1, ?)", [term])
            rows = self._conn.execute("SELECT term FROM qv ORDER BY offset").fetchall()
            self._conn.execute("DELETE FROM q")
        found = tuple(r[0] for r in rows)
        if len(self._known) < 100_000:
            self._known[term] = found
        return found

    def postings(
        self,
        columns: Sequence[str],
        rows: Sequence[Sequence[object]],
        terms: Sequence[str] | None = None,
    ) -> list[tuple[str, int, str]]:
        """``(term, rowid, column)`` for every token of ``rows`` (each its rowid and then
        one text per column), in term order, as ``fts5vocab`` lists an index's; only those
        of ``terms`` (tokens) unless None."""
        layout = tuple(columns)
        if terms is not None and not terms:
            return []
        with self._lock:
            name = self._layouts.get(layout)
            if name is None:
                name = f"d{len(self._layouts)}"
                self._conn.execute(
                    f"CREATE VIRTUAL TABLE {name} USING fts5({', '.join(layout)},"
                    f" tokenize={self._tokenize!r})"
                )
                self._conn.execute(
                    f"CREATE VIRTUAL TABLE {name}v USING fts5vocab({name}, instance)"
                )
                self._layouts[layout] = name
            marks = ", ".join("?" * (len(layout) + 1))
            select = f"SELECT term, doc, col FROM {name}v"
            if terms is not None:
                # A term each: fts5vocab seeks an equal term, but scans for IN.
                select = " UNION ALL ".join([f"{select} WHERE term = ?"] * len(terms))
            self._conn.execute("BEGIN")
            try:
                self._conn.executemany(
                    f"INSERT INTO {name}(rowid, {', '.join(layout)}) VALUES ({marks})", rows
                )
                found = self._conn.execute(select, list(terms or ())).fetchall()
            finally:
                self._conn.execute("ROLLBACK")  # the rows were only there to be tokenised
        return found

    def close(self) -> None:
        with self._lock:
            self._conn.close()
