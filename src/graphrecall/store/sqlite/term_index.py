"""An in-memory copy of a big table's FTS5 postings that ranks a query in numpy.

FTS5 has no early termination: ``ORDER BY bm25() LIMIT k`` calls the ``bm25()`` function
on every row that matches (fulltext.py), a few microseconds each. At 100k facts a question
that names the user matches thousands of rows, and the facts' lexical leg took p50 / p95
9 / 27 ms, its messages' leg 17 / 78 ms: more than the whole search's 25 ms budget.

A :class:`TermIndex` holds, for one table, every term's postings (row, weighted frequency)
read once from the index itself (the ``fts5vocab`` ``instance`` table, so the tokens are
exactly FTS5's, Porter stems and all) and each row's length (the ``_docsize`` shadow table).
A query scores all its rows at once with vectorised arithmetic, using FTS5's own BM25
(``fts5_aux.c``: k1 = 1.2, b = 0.75, IDF ``log((N - n + 0.5) / (n + 0.5))`` floored at
1e-6, a row's frequency the weighted sum over its columns, length over all columns), in
the same order of operations, so every score equals the one ``bm25()`` returns (tested).

The copy is a cache, never a second source of truth: it records the FTS5 structure record
it was read at (which every committed write to the index changes) and is used only while
that record is unchanged. :class:`TermIndexes` rebuilds a stale copy in the background,
at most once per :data:`REBUILD_GAP_FACTOR` times its last build time, and full-text
search meanwhile runs on FTS5 as before.
"""

from __future__ import annotations

import logging
import math
import sqlite3
import threading
import time
from array import array
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import numpy.typing as npt

log = logging.getLogger(__name__)

# Tables with fewer rows are searched on FTS5 alone: there it is fast enough.
MIN_ROWS = 20_000
# A stale copy is rebuilt no sooner than this many times its last build took after that
# build ended (and at least REBUILD_MIN_GAP_S): while a graph is being written to, the
# rebuilds cost at most ~1/(1+factor) of one core.
REBUILD_GAP_FACTOR = 4.0
REBUILD_MIN_GAP_S = 2.0
# FTS5's BM25 constants (fts5_aux.c).
K1 = 1.2
B = 0.75
# The FTS5 structure record's id in ``{table}_fts_data``; any committed write changes it.
STRUCTURE_ID = 10

Ints = npt.NDArray[np.int64]
Floats = npt.NDArray[np.float64]


def _varints(blob: bytes) -> int:
    """The sum of the SQLite varints in ``blob`` (a row's token count per column)."""
    total = value = shift = 0
    for byte in blob:
        value |= (byte & 0x7F) << shift
        if byte & 0x80:
            shift += 7
            continue
        total += value
        value = shift = 0
    return total


@dataclass(frozen=True)
class TermIndex:
    """The postings of one table's full-text index, as of FTS5 structure ``cookie``."""

    table: str
    cookie: bytes
    rowids: Ints  # ascending; position = the row's dense number
    length_norm: Floats  # per row: K1 * ((1 - B) + (B * tokens) / average tokens)
    owners: npt.NDArray[np.int32]  # per row: its owner's number in ``owner_codes``
    owner_codes: dict[str, int]
    spans: dict[str, tuple[int, int]]  # term -> [start, end) in docs / freqs
    docs: npt.NDArray[np.int32]  # dense row numbers, grouped by term
    freqs: npt.NDArray[np.float32]  # weighted frequency of the term in the row

    @property
    def rows(self) -> int:
        return len(self.rowids)

    def matches(self, term: str) -> int:
        start, end = self.spans.get(term, (0, 0))
        return end - start

    def idf(self, term: str) -> float:
        n, hits = self.rows, self.matches(term)
        idf = math.log((n - hits + 0.5) / (hits + 0.5))
        return idf if idf > 0.0 else 1e-6

    def ranked(
        self, phrases: Sequence[str], matching: Sequence[str], owner: str | None, first: int
    ) -> Iterator[tuple[Ints, Floats]]:
        """Rows that hold any of ``matching`` (of ``owner`` only, unless None), best first,
        in chunks of (rowids, scores) that never split a tie, the first of ``first`` rows
        (more if tied), each next four times as big; each row's score is FTS5's ``bm25()``
        over ``phrases`` in that order (its MATCH expression's phrase order)."""
        mask = np.zeros(self.rows, dtype=bool)
        for term in matching:
            start, end = self.spans.get(term, (0, 0))
            mask[self.docs[start:end]] = True
        if owner is not None:
            code = self.owner_codes.get(owner)
            if code is None:
                return
            mask &= self.owners == code
        candidates = np.flatnonzero(mask)
        if not len(candidates):
            return
        docs, parts = [], []
        for term in phrases:
            start, end = self.spans.get(term, (0, 0))
            if start == end:
                continue
            d = self.docs[start:end]
            f = self.freqs[start:end].astype(np.float64)
            docs.append(d)
            parts.append(self.idf(term) * ((f * (K1 + 1.0)) / (f + self.length_norm[d])))
        # bincount adds each row's parts in input order: phrase order, as bm25() does.
        totals = np.bincount(np.concatenate(docs), np.concatenate(parts), minlength=self.rows)
        scores = totals[candidates]
        size = max(1, first)
        while len(candidates):
            if len(candidates) > size:
                cut = np.partition(scores, len(scores) - size)[len(scores) - size]
                top = scores >= cut  # every row tied with the cut comes along
            else:
                top = np.ones(len(candidates), dtype=bool)
            yield self.rowids[candidates[top]], scores[top]
            candidates, scores = candidates[~top], scores[~top]
            size *= 4


def build(
    path: Path, table: str, owner_field: str, weights: Sequence[float], tune: Callable[..., None]
) -> TermIndex:
    """Read ``table``'s full-text index into a :class:`TermIndex`, from one snapshot."""
    conn = sqlite3.connect(str(path), isolation_level=None)
    try:
        tune(conn)
        fts = f"{table}_fts"
        conn.execute(f"CREATE VIRTUAL TABLE temp.postings USING fts5vocab(main, {fts}, instance)")
        conn.execute("BEGIN")  # one snapshot for the cookie, the sizes and the postings
        (cookie,) = conn.execute(
            f"SELECT block FROM {fts}_data WHERE id = ?", [STRUCTURE_ID]
        ).fetchone()
        sized = conn.execute(f"SELECT id, sz FROM {fts}_docsize ORDER BY id").fetchall()
        rowids = np.fromiter((r[0] for r in sized), dtype=np.int64, count=len(sized))
        tokens = np.fromiter((_varints(r[1]) for r in sized), dtype=np.float64, count=len(sized))
        owner_codes: dict[str, int] = {}
        owners = np.full(len(rowids), -1, dtype=np.int32)
        owned = conn.execute(f"SELECT rowid, {owner_field} FROM {table} ORDER BY rowid").fetchall()
        at = np.searchsorted(rowids, np.fromiter((r[0] for r in owned), np.int64, len(owned)))
        for position, (_, name) in zip(at.tolist(), owned, strict=True):
            if position < len(rowids):
                owners[position] = owner_codes.setdefault(str(name), len(owner_codes))
        names = [r[1] for r in conn.execute(f"PRAGMA table_info({fts})")]
        weight_of = {n: weights[i] if i < len(weights) else 1.0 for i, n in enumerate(names)}
        spans: dict[str, tuple[int, int]] = {}
        # Typed arrays, not lists: a million messages are tens of millions of postings.
        docs = array("q")
        freqs = array("f")
        term, doc = None, -1
        for t, d, column in conn.execute("SELECT term, doc, col FROM temp.postings"):
            weight = weight_of[column]
            if t != term:
                if term is not None:
                    spans[term] = (spans[term][0], len(docs))
                spans[t] = (len(docs), len(docs))
                term, doc = t, -1
            if d == doc:
                freqs[-1] += weight
            else:
                docs.append(d)
                freqs.append(weight)
                doc = d
        if term is not None:
            spans[term] = (spans[term][0], len(docs))
        conn.execute("COMMIT")
    finally:
        conn.close()
    average = float(tokens.sum()) / len(rowids) if len(rowids) else 1.0
    return TermIndex(
        table=table,
        cookie=bytes(cookie),
        rowids=rowids,
        length_norm=K1 * ((1 - B) + (B * tokens) / average),
        owners=owners,
        owner_codes=owner_codes,
        spans=spans,
        docs=np.searchsorted(rowids, np.frombuffer(docs, dtype=np.int64)).astype(np.int32),
        freqs=np.frombuffer(freqs, dtype=np.float32).copy(),
    )


class Tokenizer:
    """A query term as the FTS5 tokenizer ``tokenize`` indexes it: its tokens, in order."""

    def __init__(self, tokenize: str) -> None:
        self._conn = sqlite3.connect(":memory:", check_same_thread=False, isolation_level=None)
        self._conn.execute(f"CREATE VIRTUAL TABLE q USING fts5(x, tokenize={tokenize!r})")
        self._conn.execute("CREATE VIRTUAL TABLE qv USING fts5vocab(q, instance)")
        self._lock = threading.Lock()
        self._known: dict[str, tuple[str, ...]] = {}

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

    def close(self) -> None:
        with self._lock:
            self._conn.close()


class TermIndexes:
    """The current :class:`TermIndex` of each big full-text table, rebuilt in the
    background when FTS5 has changed since it was read."""

    def __init__(self, path: Path, tune: Callable[..., None]) -> None:
        self._path = path
        self._tune = tune
        self._lock = threading.Lock()
        self._current: dict[str, TermIndex] = {}
        self._building: set[str] = set()
        self._next_build: dict[str, float] = {}  # monotonic time a rebuild may start
        self._closed = False

    def get(self, table: str, cookie: bytes) -> TermIndex | None:
        """The copy of ``table`` read at ``cookie``, or None if there is none yet."""
        index = self._current.get(table)
        return index if index is not None and index.cookie == cookie else None

    def has(self, table: str) -> bool:
        """Whether ``table`` has a copy, current or not."""
        return table in self._current

    def refresh(self, table: str, owner_field: str, weights: Sequence[float]) -> None:
        """Start rebuilding ``table``'s copy in the background, unless one is being built
        or the last build ended too recently."""
        with self._lock:
            if self._closed or table in self._building:
                return
            if time.monotonic() < self._next_build.get(table, 0.0):
                return
            self._building.add(table)
        threading.Thread(
            target=self._build,
            args=(table, owner_field, tuple(weights)),
            name=f"term-index-{table}",
            daemon=True,
        ).start()

    def _build(self, table: str, owner_field: str, weights: tuple[float, ...]) -> None:
        started = time.monotonic()
        try:
            index = build(self._path, table, owner_field, weights, self._tune)
        except Exception:  # a cache: searches go on with FTS5
            log.exception("term index of %s not built", table)
            index = None
        took = time.monotonic() - started
        with self._lock:
            self._building.discard(table)
            self._next_build[table] = time.monotonic() + max(
                REBUILD_MIN_GAP_S, REBUILD_GAP_FACTOR * took
            )
            if index is not None and not self._closed:
                self._current[table] = index
                log.info("term index of %s: %d rows in %.2f s", table, index.rows, took)

    def status(self) -> dict[str, int]:
        with self._lock:
            return {"ready": len(self._current), "building": len(self._building)}

    def wait(self, timeout: float) -> bool:
        """Wait until no copy is being built (for benchmarks and tests)."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            with self._lock:
                if not self._building:
                    return True
            time.sleep(0.01)
        return False

    def close(self) -> None:
        with self._lock:
            self._closed = True
            self._current.clear()
