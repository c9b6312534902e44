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
the same order of operations, so every score equals the one ``bm25()`` returns (tested);
it also scores given rows with other constants (``bm25.py``).

The copy is a cache, never a second source of truth: it records the FTS5 structure record
it was read at (which every committed write to the index changes) and is used only while
that record is unchanged. Writes are caught up with, not rebuilt from scratch: triggers on
each index's ``_docsize`` shadow table (``migrations.ensure_change_log``) log every row the
index adds or drops, and a search that finds the copy stale reads the rows logged since
(:func:`catch_up`, ~0.3 ms a row) into a small new :class:`Segment`, marking their old
postings dead. After many writes, or when the log has been pruned past the copy,
:class:`TermIndexes` rebuilds the copy in the background, at most once per
:data:`REBUILD_GAP_FACTOR` times its last build time; full-text search meanwhile runs on
FTS5 (or on the caught-up copy).
"""

from __future__ import annotations

import json
import logging
import math
import sqlite3
import threading
import time
from array import array
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from graphrecall.domain.scopes import STANDARD_BM25, Bm25
from graphrecall.store.sqlite.migrations import CHANGE_LOG

log = logging.getLogger(__name__)

# Tables with fewer rows are searched on FTS5 alone: there it is fast enough. (It was
# 20,000; on the 10k-fact benchmark graph, engine p50 / p95 with 2,000, two runs each
# alternated: edges/rrf 3.5-3.7 / 8.0-8.2 -> 1.8-1.9 / 2.3 ms, nodes/rrf (2,009 rows)
# 1.1-1.2 / 1.9-2.1 -> 1.1-1.2 / 1.4-2.4 ms.) The messages table keeps a copy at any size
# once a search re-scores from it (bm25.py).
MIN_ROWS = 2_000
# A stale copy is rebuilt no sooner than this many times its last build took after that
# build ended (and at least REBUILD_MIN_GAP_S): while a graph is being written to, the
# rebuilds cost at most ~1/(1+factor) of one core.
REBUILD_GAP_FACTOR = 4.0
REBUILD_MIN_GAP_S = 2.0
# A search catches the copy up itself when at most this many of its table's rows were
# logged as changed since it was read (each costs ~0.3 ms to read and tokenize); more,
# and a background thread catches it up while FTS5 answers.
INLINE_MAX = 100
# A copy more than this many log entries (of any table) behind is read again whole.
LOG_SCAN_MAX = 50_000
# Rows written since the copy was read, past which it is rebuilt in the background (it
# is still used, caught up, meanwhile): the larger of these.
DELTA_MIN_ROWS = 2_000
DELTA_SHARE = 0.02
# The FTS5 structure record's id in ``{table}_fts_data``; any committed write changes it.
STRUCTURE_ID = 10

Ints = npt.NDArray[np.int64]
Floats = npt.NDArray[np.float64]
Bools = npt.NDArray[np.bool_]
Codes = npt.NDArray[np.int32]
Uuids = npt.NDArray[np.bytes_]  # UTF-8, so they sort as SQLite's BINARY collation does


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


def _varints(blob: bytes) -> int:
    """The sum of the SQLite varints in ``blob``: a row's token count over its columns."""
    return sum(varints(blob))


@dataclass(frozen=True)
class Segment:
    """The postings of rows read at one time, numbered by their position in ``rowids``."""

    rowids: Ints  # ascending
    tokens: Floats  # per row: its token count over all columns
    owners: Codes  # per row: its owner's number in the index's ``owner_codes``
    uuids: Uuids  # per row: its record's uuid (b"" for a row the table lacks)
    spans: dict[str, tuple[int, int]]  # term -> [start, end) in docs / freqs
    docs: npt.NDArray[np.int32]  # row numbers, grouped by term
    freqs: npt.NDArray[np.float32]  # weighted frequency of the term in the row

    @property
    def size(self) -> int:
        return len(self.rowids)

    def postings(self, term: str) -> tuple[npt.NDArray[np.int32], npt.NDArray[np.float32]]:
        start, end = self.spans.get(term, (0, 0))
        return self.docs[start:end], self.freqs[start:end]

    def numbers(self, rowids: Ints) -> Ints:
        """The positions of those of ``rowids`` this segment holds."""
        at = np.searchsorted(self.rowids, rowids)
        inside = at < self.size
        at, rowids = at[inside], rowids[inside]
        found: Ints = at[self.rowids[at] == rowids]
        return found


def _segment(
    sized: Sequence[tuple[int, bytes]],
    owned: Sequence[tuple[int, object, str]],
    postings: Iterable[tuple[str, int, str]],
    weight_of: dict[str, float],
    owner_codes: dict[str, int],
) -> Segment:
    """A segment from its rows' ``(rowid, _docsize)``, ``(rowid, owner, uuid)`` in rowid
    order and their ``(term, rowid, column)`` postings in term order (an ``fts5vocab``
    instance table); new owners are added to ``owner_codes``."""
    rowids = np.fromiter((r[0] for r in sized), dtype=np.int64, count=len(sized))
    tokens = np.fromiter((_varints(r[1]) for r in sized), dtype=np.float64, count=len(sized))
    owners = np.full(len(rowids), -1, dtype=np.int32)
    at = np.searchsorted(rowids, np.fromiter((r[0] for r in owned), np.int64, len(owned)))
    inside = at < len(rowids)
    found = np.array([r[2].encode() for r in owned], dtype=np.bytes_)
    uuids = np.zeros(len(rowids), dtype=found.dtype if len(found) else "S1")
    uuids[at[inside]] = found[inside]
    for position, (_, name, _) in zip(at.tolist(), owned, strict=True):
        if position < len(rowids):
            owners[position] = owner_codes.setdefault(str(name), len(owner_codes))
    spans: dict[str, tuple[int, int]] = {}
    # Typed arrays, not lists: a million messages are tens of millions of postings.
    docs = array("q")
    freqs = array("f")
    term, doc = None, -1
    for t, d, column in postings:
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
    return Segment(
        rowids=rowids,
        tokens=tokens,
        owners=owners,
        uuids=uuids,
        spans=spans,
        docs=np.searchsorted(rowids, np.frombuffer(docs, dtype=np.int64)).astype(np.int32),
        freqs=np.frombuffer(freqs, dtype=np.float32).copy(),
    )


@dataclass(frozen=True)
class Delta:
    """The rows caught up with since the copy was read, numbered in arrival order. Its
    postings are kept flat, each with its term's code, so that a catch-up merges the new
    rows in with array concatenation (a term's postings are found by comparing codes:
    the delta holds at most a few thousand rows)."""

    rowids: Ints  # in no particular order
    order: Ints  # the positions of ``rowids`` in ascending order
    tokens: Floats
    owners: Codes
    uuids: Uuids
    codes: Codes  # per posting: its term's number in ``terms``
    docs: npt.NDArray[np.int32]
    freqs: npt.NDArray[np.float32]
    terms: dict[str, int]  # term -> code; shared by a copy's deltas, only ever added to

    @property
    def size(self) -> int:
        return len(self.rowids)

    def postings(self, term: str) -> tuple[npt.NDArray[np.int32], npt.NDArray[np.float32]]:
        code = self.terms.get(term)
        if code is None:
            return self.docs[:0], self.freqs[:0]
        chosen = self.codes == code
        return self.docs[chosen], self.freqs[chosen]

    def numbers(self, rowids: Ints) -> Ints:
        """The positions of those of ``rowids`` this delta holds."""
        ordered = self.rowids[self.order]
        at = np.searchsorted(ordered, rowids)
        inside = at < self.size
        at, rowids = at[inside], rowids[inside]
        found: Ints = self.order[at[ordered[at] == rowids]]
        return found

    @classmethod
    def merged(
        cls, old: Delta | None, keep: Bools | None, new: Segment, terms: dict[str, int]
    ) -> Delta:
        """``old``'s rows where ``keep`` holds, then ``new``'s."""
        codes = np.empty(len(new.docs), dtype=np.int32)
        for term, (start, end) in new.spans.items():
            codes[start:end] = terms.setdefault(term, len(terms))
        parts = []
        shift = 0
        if old is not None and keep is not None:
            kept = np.cumsum(keep) - 1  # old number -> number among the kept rows
            posting = keep[old.docs]
            parts.append(
                (
                    old.rowids[keep],
                    old.tokens[keep],
                    old.owners[keep],
                    old.uuids[keep],
                    old.codes[posting],
                    kept[old.docs[posting]],
                    old.freqs[posting],
                )
            )
            shift = int(keep.sum())
        parts.append(
            (new.rowids, new.tokens, new.owners, new.uuids, codes, new.docs + shift, new.freqs)
        )
        rowids, tokens, owners, uuids, all_codes, docs, freqs = (
            np.concatenate(column) for column in zip(*parts, strict=True)
        )
        return cls(
            rowids=rowids,
            order=np.argsort(rowids, kind="stable"),
            tokens=tokens,
            owners=owners.astype(np.int32),
            uuids=uuids,
            codes=all_codes.astype(np.int32),
            docs=docs.astype(np.int32),
            freqs=freqs.astype(np.float32),
            terms=terms,
        )


Part = Segment | Delta


@dataclass(frozen=True)
class TermIndex:
    """The postings of one table's full-text index, as of FTS5 structure ``cookie`` and
    change-log entry ``seq``: the rows read whole, then (once writes were caught up with)
    a delta of the rows written since, numbered after them; ``alive`` marks the rows
    still current."""

    table: str
    cookie: bytes
    seq: int
    segments: tuple[Part, ...]  # the rows read whole, and the delta if there is one
    offsets: tuple[int, ...]
    alive: Bools | None  # None: every row is
    owner_codes: dict[str, int]
    rows: int  # current rows
    total_tokens: float  # over the current rows

    @classmethod
    def read(
        cls, table: str, cookie: bytes, seq: int, segment: Segment, codes: dict[str, int]
    ) -> TermIndex:
        return cls(
            table=table,
            cookie=cookie,
            seq=seq,
            segments=(segment,),
            offsets=(0,),
            alive=None,
            owner_codes=codes,
            rows=segment.size,
            total_tokens=float(segment.tokens.sum()),
        )

    @property
    def numbered(self) -> int:
        return self.offsets[-1] + self.segments[-1].size

    @property
    def delta_rows(self) -> int:
        """Current rows read by catch-ups since the copy was read whole."""
        return self.numbered - self.segments[0].size

    def matches(self, term: str) -> int:
        hits = 0
        for segment, offset in zip(self.segments, self.offsets, strict=True):
            docs, _ = segment.postings(term)
            if self.alive is None:
                hits += len(docs)
            elif len(docs):
                hits += int(np.count_nonzero(self.alive[docs + offset if offset else docs]))
        return hits

    def idf(self, term: str) -> float:
        return bm25_idf(self.rows, self.matches(term))

    def _holding(self, terms: Sequence[str], owner: str | None, allowed: Ints | None) -> Bools:
        """Which live rows (by number) hold any of ``terms``, of ``owner`` only (unless
        None) and among the rowids ``allowed`` (unless None)."""
        parts_of = list(zip(self.segments, self.offsets, strict=True))
        mask = np.zeros(self.numbered, dtype=bool)
        for term in terms:
            for segment, offset in parts_of:
                docs, _ = segment.postings(term)
                mask[docs + offset if offset else docs] = True
        if owner is not None:
            code = self.owner_codes.get(owner)
            if code is None:
                return np.zeros(self.numbered, dtype=bool)
            for segment, offset in parts_of:
                mask[offset : offset + segment.size] &= segment.owners == code
        if allowed is not None:
            permitted = np.zeros(self.numbered, dtype=bool)
            for segment, offset in parts_of:
                permitted[segment.numbers(allowed) + offset] = True
            mask &= permitted
        if self.alive is not None:
            mask &= self.alive
        return mask

    def newest(
        self,
        matching: Sequence[str],
        excluding: Sequence[str],
        owner: str | None,
        allowed: Ints | None,
        count: int,
    ) -> Ints:
        """The rowids of the newest (highest rowid) ``count`` rows that hold any of
        ``matching`` and none of ``excluding`` (as :meth:`ranked` picks rows): the rows
        FTS5's fill query ranks (fulltext.py)."""
        mask = self._holding(matching, owner, allowed) & ~self._holding(excluding, None, None)
        rowids = self._rowids(np.flatnonzero(mask))
        if len(rowids) > count:
            rowids = np.partition(rowids, len(rowids) - count)[len(rowids) - count :]
        return np.sort(rowids)

    def _scored(
        self,
        phrases: Sequence[str],
        matching: Sequence[str],
        owner: str | None,
        allowed: Ints | None,
        bm25: Bm25 = STANDARD_BM25,
    ) -> tuple[Ints, Floats]:
        """The numbers of the rows that hold any of ``matching`` (of ``owner`` only, unless
        None, and among the rowids ``allowed``, unless None) and each one's score: FTS5's
        ``bm25()`` over ``phrases`` in that order (its MATCH expression's phrase order),
        with ``bm25``'s constants."""
        parts_of = list(zip(self.segments, self.offsets, strict=True))
        holding = self._holding(matching, owner, allowed)
        candidates = np.flatnonzero(holding)
        if not len(candidates):
            return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.float64)
        average = self.total_tokens / self.rows
        numbers, parts = [], []
        for term in phrases:
            hits = self.matches(term)
            if not hits:
                continue
            idf = bm25_idf(self.rows, hits)
            for segment, offset in parts_of:
                docs, freqs = segment.postings(term)
                # Only the candidates' parts are needed: a common term's postings are
                # mostly other rows (another graph's, or rows of common terms alone).
                numbered = docs + offset if offset else docs
                kept = holding[numbered]
                if not kept.any():
                    continue
                docs, freqs, numbered = docs[kept], freqs[kept], numbered[kept]
                numbers.append(numbered)
                parts.append(term_scores(idf, freqs, segment.tokens[docs], average, bm25))
        if not numbers:
            return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.float64)
        # bincount adds each row's parts in input order: phrase order, as bm25() does.
        totals = np.asarray(
            np.bincount(np.concatenate(numbers), np.concatenate(parts), minlength=self.numbered),
            dtype=np.float64,
        )
        found: Ints = candidates.astype(np.int64)
        return found, totals[candidates]

    def ranked(
        self,
        phrases: Sequence[str],
        matching: Sequence[str],
        owner: str | None,
        first: int,
        allowed: Ints | None = None,
    ) -> Iterator[tuple[Ints, Floats]]:
        """The rows :meth:`_scored` finds, best first, in chunks of (rowids, scores) that
        never split a tie, the first of ``first`` rows (more if tied), each next four times
        as big."""
        candidates, scores = self._scored(phrases, matching, owner, allowed)
        size = max(1, first)
        while len(candidates):
            if len(candidates) > size:
                cut = np.partition(scores, len(scores) - size)[len(scores) - size]
                top = scores >= cut  # every row tied with the cut comes along
            else:
                top = np.ones(len(candidates), dtype=bool)
            yield self._rowids(candidates[top]), scores[top]
            candidates, scores = candidates[~top], scores[~top]
            size *= 4

    def scores(self, phrases: Sequence[str], rowids: Ints, bm25: Bm25) -> dict[int, float]:
        """The score of each of ``rowids`` that holds any of ``phrases``, by rowid: FTS5's
        ``bm25()`` over ``phrases`` with ``bm25``'s constants."""
        numbers, scores = self._scored(phrases, phrases, None, rowids, bm25)
        return dict(zip(self._rowids(numbers).tolist(), scores.tolist(), strict=True))

    def best(
        self, phrases: Sequence[str], matching: Sequence[str], owner: str | None, limit: int
    ) -> list[tuple[str, float]]:
        """The ``limit`` best rows :meth:`_scored` finds as (uuid, score), by score and then
        uuid: what FTS5's ``ORDER BY score DESC, uuid LIMIT limit`` returns when no other
        filter applies, with no SQL (the copy knows each row's uuid). Looking the rows up
        took 2 / 16 ms p50 / p95 of a 100k-fact search, as ties at the cut bring hundreds
        of rows along."""
        candidates, scores = self._scored(phrases, matching, owner, None)
        while True:
            top = np.ones(len(scores), dtype=bool)
            if len(scores) > limit > 0:
                cut = np.partition(scores, len(scores) - limit)[len(scores) - limit]
                top = scores >= cut  # every row tied with the cut comes along
            uuids = self._uuids(candidates[top])
            if (uuids != b"").all():
                break
            # A row the table lacks (never, while the index and table agree): drop them all.
            known = self._uuids(candidates) != b""
            candidates, scores = candidates[known], scores[known]
        scores = scores[top]
        order = np.lexsort((uuids, -scores))[: max(0, limit)]
        return [
            (u.decode(), s)
            for u, s in zip(uuids[order].tolist(), scores[order].tolist(), strict=True)
        ]

    def _uuids(self, numbers: Ints) -> Uuids:
        width = max(segment.uuids.dtype.itemsize for segment in self.segments)
        uuids: Uuids = self._per_row(numbers, "uuids", np.dtype(f"S{width}"))
        return uuids

    def _rowids(self, numbers: Ints) -> Ints:
        rowids: Ints = self._per_row(numbers, "rowids", np.dtype(np.int64))
        return rowids

    def _per_row(self, numbers: Ints, column: str, dtype: np.dtype[Any]) -> Any:
        """A per-row column (``rowids``, ``uuids``) of the segments, at row ``numbers``."""
        if len(self.segments) == 1:
            return getattr(self.segments[0], column)[numbers]
        which = np.searchsorted(np.asarray(self.offsets), numbers, side="right") - 1
        out = np.zeros(len(numbers), dtype=dtype)
        for i, (segment, offset) in enumerate(zip(self.segments, self.offsets, strict=True)):
            chosen = which == i
            out[chosen] = getattr(segment, column)[numbers[chosen] - offset]
        return out

    def changed(
        self, cookie: bytes, seq: int, rowids: Ints, segment: Segment, codes: dict[str, int]
    ) -> TermIndex:
        """This copy with ``rowids`` dropped (deleted or rewritten) and ``segment`` (their
        current postings, and new rows') added, as of ``cookie`` and ``seq``."""
        base = self.segments[0]
        old = self.segments[1] if len(self.segments) > 1 else None
        assert isinstance(base, Segment) and (old is None or isinstance(old, Delta))
        alive = self.alive[: base.size].copy() if self.alive is not None else None
        rows, total = self.rows, self.total_tokens
        local = base.numbers(rowids)
        if len(local):
            if alive is None:
                alive = np.ones(base.size, dtype=bool)
            local = local[alive[local]]
            alive[local] = False
            rows -= len(local)
            total -= float(base.tokens[local].sum())
        keep = None
        if old is not None:
            keep = np.ones(old.size, dtype=bool)
            dropped = old.numbers(rowids)
            keep[dropped] = False
            rows -= len(dropped)
            total -= float(old.tokens[dropped].sum())
        delta = Delta.merged(old, keep, segment, old.terms if old is not None else {})
        rows += segment.size
        total += float(segment.tokens.sum())
        segments: tuple[Part, ...] = (base, delta) if delta.size else (base,)
        if alive is not None and delta.size:
            alive = np.concatenate([alive, np.ones(delta.size, dtype=bool)])
        return TermIndex(
            table=self.table,
            cookie=cookie,
            seq=seq,
            segments=segments,
            offsets=(0, base.size) if delta.size else (0,),
            alive=alive,
            owner_codes=codes,
            rows=rows,
            total_tokens=total,
        )


def term_scores(
    idf: float, freqs: npt.NDArray[Any], lengths: npt.NDArray[Any], average: float, bm25: Bm25
) -> Floats:
    """One term's part of BM25 in each row: its ``idf``, its weighted frequency in the row
    (``freqs``) and the row's token count (``lengths``) against the ``average``, in the
    order of operations of FTS5's ``bm25()`` (fts5_aux.c), so that at FTS5's constants
    every score equals the one it returns."""
    f = freqs.astype(np.float64)
    k1, b = bm25.k1, bm25.b
    norm = k1 * ((1 - b) + (b * lengths.astype(np.float64)) / average)
    scores: Floats = idf * ((f * (k1 + 1.0)) / (f + norm))
    return scores


def bm25_idf(rows: int, hits: int) -> float:
    idf = math.log((rows - hits + 0.5) / (hits + 0.5))
    return idf if idf > 0.0 else 1e-6


def _structure(conn: sqlite3.Connection, table: str) -> bytes:
    (cookie,) = conn.execute(
        f"SELECT block FROM {table}_fts_data WHERE id = ?", [STRUCTURE_ID]
    ).fetchone()
    return bytes(cookie)


def _log_seq(conn: sqlite3.Connection) -> int:
    """The last change-log entry's number (0 when there is none). Entries are numbered
    one up from the last, and pruning keeps the newest, so the numbers only grow."""
    row = conn.execute(f"SELECT max(seq) FROM {CHANGE_LOG}").fetchone()
    return int(row[0]) if row and row[0] is not None else 0


def column_weights(names: Sequence[str], weights: Sequence[float]) -> dict[str, float]:
    return {n: weights[i] if i < len(weights) else 1.0 for i, n in enumerate(names)}


def build(
    path: Path, table: str, owner_field: str, weights: Sequence[float], tune: Callable[..., None]
) -> TermIndex:
    """Read ``table``'s full-text index into a :class:`TermIndex`, from one snapshot."""
    conn = sqlite3.connect(str(path), isolation_level=None)
    try:
        tune(conn)
        fts = f"{table}_fts"
        conn.execute(f"CREATE VIRTUAL TABLE temp.postings USING fts5vocab(main, {fts}, instance)")
        names = [r[1] for r in conn.execute(f"PRAGMA table_info({fts})")]
        conn.execute("BEGIN")  # one snapshot for the cookie, the sizes and the postings
        cookie, seq = _structure(conn, table), _log_seq(conn)
        codes: dict[str, int] = {}
        segment = _segment(
            conn.execute(f"SELECT id, sz FROM {fts}_docsize ORDER BY id").fetchall(),
            conn.execute(
                f"SELECT rowid, {owner_field}, uuid FROM {table} ORDER BY rowid"
            ).fetchall(),
            conn.execute("SELECT term, doc, col FROM temp.postings"),
            column_weights(names, weights),
            codes,
        )
        conn.execute("COMMIT")
    finally:
        conn.close()
    return TermIndex.read(table, cookie, seq, segment, codes)


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


class TooFarBehind(Exception):
    """More of a copy's rows changed than its caller would read (``catch_up``'s ``most``)."""


def _logged_since(conn: sqlite3.Connection, index: TermIndex, seq: int) -> list[int] | None:
    """The rows of ``index``'s table logged as changed since it was read, up to log entry
    ``seq``, ascending; None when that is more than LOG_SCAN_MAX entries or the log was
    pruned past the copy."""
    pending = seq - index.seq
    if pending < 0 or pending > LOG_SCAN_MAX:
        return None
    rows = conn.execute(f"SELECT tbl, row FROM {CHANGE_LOG} WHERE seq > ?", [index.seq]).fetchall()
    if len(rows) != pending:
        return None  # pruned past this copy
    return sorted({int(row) for tbl, row in rows if tbl == index.table})


def catch_up(
    index: TermIndex,
    conn: sqlite3.Connection,
    owner_field: str,
    weights: Sequence[float],
    tokenizer: Tokenizer,
    most: int | None = None,
) -> TermIndex | None:
    """``index`` brought up to date from the change log, on ``conn`` (one snapshot); None
    when the log no longer holds every change since it was read. Raises TooFarBehind when
    more than ``most`` (unless None) of its rows changed, before reading any of them."""
    table = index.table
    fts = f"{table}_fts"
    names = [r[1] for r in conn.execute(f"PRAGMA table_info({fts})")]
    conn.execute("BEGIN")
    try:
        cookie, seq = _structure(conn, table), _log_seq(conn)
        found = _logged_since(conn, index, seq)
        if found is None:
            return None
        if most is not None and len(found) > most:
            raise TooFarBehind(table)
        changed = found
        sized: list[tuple[int, bytes]] = []
        content: list[tuple[Any, ...]] = []
        if changed:
            ids = json.dumps(changed)
            sized = [
                (int(r[0]), bytes(r[1]))
                for r in conn.execute(
                    f"SELECT id, sz FROM {fts}_docsize WHERE id IN"
                    " (SELECT value FROM json_each(?)) ORDER BY id",
                    [ids],
                )
            ]
            content = [
                tuple(r)
                for r in conn.execute(
                    f"SELECT rowid, {owner_field}, uuid, {', '.join(names)} FROM {table}"
                    " WHERE rowid IN (SELECT value FROM json_each(?)) ORDER BY rowid",
                    [ids],
                )
            ]
    finally:
        conn.execute("COMMIT")
    indexed = {rowid for rowid, _ in sized}
    content = [row for row in content if row[0] in indexed]
    codes = dict(index.owner_codes)
    segment = _segment(
        sized,
        [(row[0], row[1], row[2]) for row in content],
        tokenizer.postings(names, [(row[0], *row[3:]) for row in content]),
        column_weights(names, weights),
        codes,
    )
    return index.changed(cookie, seq, np.asarray(changed, dtype=np.int64), segment, codes)


Connect = Callable[[], AbstractContextManager[sqlite3.Connection | None]]


def _start(name: str, work: Callable[..., None], *args: Any) -> None:
    """Run ``work(*args)`` on a daemon thread of its own."""
    threading.Thread(target=work, args=args, name=name, daemon=True).start()


class TermIndexes:
    """The current :class:`TermIndex` of each big full-text table, caught up with writes
    by the searches that find it stale, or rebuilt in the background."""

    def __init__(self, path: Path, tune: Callable[..., None], tokenize: str) -> None:
        self._path = path
        self._tune = tune
        # The searches' catch-ups tokenize rows here, never on the queries' tokenizer
        # (whose lock a search takes for a new query term); a background catch-up, which
        # may read thousands of rows, on a tokenizer of its own.
        self._tokenize = tokenize
        self._tokenizer = Tokenizer(tokenize)
        self._lock = threading.Lock()
        self._current: dict[str, TermIndex] = {}
        self._building: set[str] = set()
        self._catching: set[str] = set()
        self._next_build: dict[str, float] = {}  # monotonic time a rebuild may start
        self._closed = False
        self.logged: frozenset[str] = frozenset()  # tables whose changes are logged
        self.caught_up = 0  # catch-ups done (for /healthz, tests and benchmarks)

    def current(
        self,
        table: str,
        cookie: bytes,
        owner_field: str,
        weights: Sequence[float],
        connect: Connect,
    ) -> TermIndex | None:
        """The copy of ``table`` as of ``cookie`` or later: caught up here when it is
        stale by a few logged changes, else None (and a background thread catches it up,
        or rebuilds it)."""
        index = self._current.get(table)
        if index is not None and index.cookie == cookie:
            return index
        if index is None or table not in self.logged:
            self.refresh(table, owner_field, weights)
            return None
        with self._lock:
            if table in self._catching or self._closed:
                return None  # being caught up: FTS5 answers this search
            self._catching.add(table)
        apart = False
        fresh = None
        try:
            with connect() as conn:
                if conn is None:
                    return None
                fresh = catch_up(index, conn, owner_field, weights, self._tokenizer, INLINE_MAX)
        except TooFarBehind:
            name = f"term-index-catch-up-{table}"
            _start(name, self._catch_up_apart, index, owner_field, tuple(weights))
            apart = True  # the thread lets go of the table
            return None
        except Exception:  # a cache: the search goes on with FTS5
            log.exception("term index of %s not caught up", table)
        finally:
            if not apart:
                with self._lock:
                    self._catching.discard(table)
        return self._adopt(index, fresh, owner_field, weights)

    def _catch_up_apart(self, index: TermIndex, owner_field: str, weights: Sequence[float]) -> None:
        fresh = None
        try:
            conn = sqlite3.connect(str(self._path), isolation_level=None)
            try:
                self._tune(conn, read_only=True)
                tokenizer = Tokenizer(self._tokenize)
                try:
                    fresh = catch_up(index, conn, owner_field, weights, tokenizer)
                finally:
                    tokenizer.close()
            finally:
                conn.close()
        except Exception:
            log.exception("term index of %s not caught up", index.table)
        finally:
            with self._lock:
                self._catching.discard(index.table)
        self._adopt(index, fresh, owner_field, weights)

    def _adopt(
        self,
        index: TermIndex,
        fresh: TermIndex | None,
        owner_field: str,
        weights: Sequence[float],
    ) -> TermIndex | None:
        """Make ``fresh`` (caught up from ``index``) the table's copy, unless a rebuild
        replaced ``index`` meanwhile; rebuild when it is None or has grown too much."""
        table = index.table
        if fresh is None:
            self.refresh(table, owner_field, weights)
            return None
        with self._lock:
            if self._current.get(table) is index and not self._closed:
                self._current[table] = fresh
            self.caught_up += 1
        limit = max(DELTA_MIN_ROWS, DELTA_SHARE * fresh.segments[0].size)
        if fresh.delta_rows > limit:
            self.refresh(table, owner_field, weights)
        return fresh

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
        _start(f"term-index-{table}", self._build, table, owner_field, tuple(weights))

    def _build(self, table: str, owner_field: str, weights: Sequence[float]) -> None:
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
            return {
                "ready": len(self._current),
                "building": len(self._building),
                "caught_up": self.caught_up,
            }

    def wait(self, timeout: float) -> bool:
        """Wait until no copy is being built or caught up (for benchmarks and tests)."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            with self._lock:
                if not self._building and not self._catching:
                    return True
            time.sleep(0.01)
        return False

    def close(self) -> None:
        with self._lock:
            self._closed = True
            self._current.clear()
        self._tokenizer.close()
