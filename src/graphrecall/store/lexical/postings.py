"""An in-memory copy of a table's postings that ranks a query in numpy.

Full-text indexes without early termination score every row that matches a query (a few
microseconds each in FTS5): a question that names the user matches thousands of rows of a
big graph. A :class:`TermIndex` holds, for one table, every term's postings (row, weighted
frequency) and each row's length, read once from the backend's index, and scores all of a
query's rows at once with vectorised arithmetic, with the BM25 of ``bm25.py`` in the same
order of operations, so every score equals the backend's own (tested).

The copy is a cache, never a second source of truth: the backend records what version of
its index a copy was read at and uses it only while that is current. Writes are caught up
with, not rebuilt from scratch: the rows changed since are read into a small
:class:`Delta` (:meth:`TermIndex.changed`), their old postings marked dead.
"""

from __future__ import annotations

import math
from array import array
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

from graphrecall.domain.scopes import STANDARD_BM25, Bm25
from graphrecall.store.lexical import plan
from graphrecall.store.lexical.bm25 import idf, term_scores

Ints = npt.NDArray[np.int64]
Floats = npt.NDArray[np.float64]
Bools = npt.NDArray[np.bool_]
Codes = npt.NDArray[np.int32]
Uuids = npt.NDArray[np.bytes_]  # UTF-8, so they sort as SQL's binary collation does


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


def segment(
    sized: Sequence[tuple[int, float]],
    owned: Sequence[tuple[int, object, str]],
    postings: Iterable[tuple[str, int, str]],
    weight_of: dict[str, float],
    owner_codes: dict[str, int],
) -> Segment:
    """A segment from its rows' ``(rowid, length)`` (tokens over all columns) and
    ``(rowid, owner, uuid)`` in rowid order and their ``(term, rowid, column)`` postings
    in term order; new owners are added to ``owner_codes``."""
    rowids = np.fromiter((r[0] for r in sized), dtype=np.int64, count=len(sized))
    tokens = np.fromiter((r[1] for r in sized), dtype=np.float64, count=len(sized))
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


def counted_segment(
    rows: Sequence[tuple[int, float, object, str, dict[str, list[int]]]],
    weights: Sequence[float],
    owner_codes: dict[str, int],
) -> Segment:
    """A segment from rows stored with their term counts: ``(rowid, length, owner, uuid,
    {term: [count per column]})`` in rowid order (PostgreSQL's ``lex_tf``); a term's
    frequency in a row is its column counts weighted, as :func:`segment` adds them up."""
    rowids = np.fromiter((r[0] for r in rows), dtype=np.int64, count=len(rows))
    tokens = np.fromiter((r[1] for r in rows), dtype=np.float64, count=len(rows))
    owners = np.fromiter(
        (owner_codes.setdefault(str(r[2]), len(owner_codes)) for r in rows),
        dtype=np.int32,
        count=len(rows),
    )
    uuids = np.array([r[3].encode() for r in rows], dtype=np.bytes_)
    if not len(uuids):
        uuids = np.zeros(0, dtype="S1")
    # Per row, its terms and their weighted counts in bulk (a million rows of messages
    # are tens of millions of postings: no per-posting Python statement but the lookup).
    keys: list[str] = []
    counts: list[list[int]] = []  # per posting: the term's count in each column
    per_row = np.zeros(len(rows), dtype=np.int64)
    for number, row in enumerate(rows):
        tf = row[4]
        keys.extend(tf)
        counts.extend(tf.values())
        per_row[number] = len(tf)
    weighted = (
        np.asarray(counts, dtype=np.float64).reshape(len(counts), len(weights))
        @ np.asarray(weights, dtype=np.float64)
        if counts
        else np.zeros(0, dtype=np.float64)
    )
    terms: dict[str, int] = {}
    code_array = np.fromiter(
        (terms.setdefault(key, len(terms)) for key in keys), dtype=np.int64, count=len(keys)
    )
    order = np.argsort(code_array, kind="stable")  # by term, then row (rows come in order)
    ends = np.cumsum(np.bincount(code_array, minlength=len(terms)))
    spans = {
        term: (int(ends[code - 1]) if code else 0, int(ends[code])) for term, code in terms.items()
    }
    docs = np.repeat(np.arange(len(rows), dtype=np.int32), per_row)
    return Segment(
        rowids=rowids,
        tokens=tokens,
        owners=owners,
        uuids=uuids,
        spans=spans,
        docs=docs[order],
        freqs=weighted[order].astype(np.float32),
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
        return idf(self.rows, self.matches(term))

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
            term_idf = idf(self.rows, hits)
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
                parts.append(term_scores(term_idf, freqs, segment.tokens[docs], average, bm25))
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
        self,
        phrases: Sequence[str],
        matching: Sequence[str],
        owner: str | None,
        limit: int,
        allowed: Ints | None = None,
    ) -> list[tuple[str, float]]:
        """The ``limit`` best rows :meth:`_scored` finds as (uuid, score), by score and then
        uuid: what FTS5's ``ORDER BY score DESC, uuid LIMIT limit`` returns when no other
        filter applies, with no SQL (the copy knows each row's uuid). Looking the rows up
        took 2 / 16 ms p50 / p95 of a 100k-fact search, as ties at the cut bring hundreds
        of rows along. ``allowed`` (unless None): only among those rowids."""
        return [(u, s) for u, s, _ in self.best_rows(phrases, matching, owner, limit, allowed)]

    def best_rows(
        self,
        phrases: Sequence[str],
        matching: Sequence[str],
        owner: str | None,
        limit: int,
        allowed: Ints | None = None,
    ) -> list[tuple[str, float, int]]:
        """:meth:`best`'s rows as (uuid, score, rowid)."""
        candidates, scores = self._scored(phrases, matching, owner, allowed)
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
        rowids = self._rowids(candidates[top])
        order = np.lexsort((uuids, -scores))[: max(0, limit)]
        return [
            (u.decode(), s, r)
            for u, s, r in zip(
                uuids[order].tolist(),
                scores[order].tolist(),
                rowids[order].tolist(),
                strict=True,
            )
        ]

    def planned(
        self,
        phrases: Sequence[str],
        rare: Sequence[str],
        weighty: Sequence[str],
        owner: str | None,
        limit: int,
    ) -> list[tuple[str, float, int]]:
        """What a backend's plain query of a match plan returns, as (uuid, score, rowid),
        by score and then uuid: the ``limit`` best rows holding a ``rare`` term, and when
        they are fewer, the fill (lexical/plan.py): the newest ``FILL_ROWS`` rows of
        ``owner`` holding a ``weighty`` term and no rare one, ranked by the fill's own
        expression, (weighty...) NOT (rare...). No filter but the owner."""
        ranked = self.best_rows(phrases, rare, owner, limit)
        if weighty and len(ranked) < limit:
            newest = self.newest(weighty, rare, owner, None, plan.FILL_ROWS)
            ranked += self.best_rows([*weighty, *rare], weighty, owner, limit, newest)
            ranked.sort(key=lambda row: (-row[1], row[0]))
        return ranked[: max(0, limit)]

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


def checked(
    chunks: Iterable[tuple[Ints, Floats]],
    check: Callable[[list[int]], list[tuple[int, str]]],
    limit: int,
    budget: int,
    masked: bool,
) -> list[tuple[str, float]] | None:
    """The best ``limit`` rows of a copy's ranked ``chunks`` (:meth:`TermIndex.ranked`)
    that pass a search's filter, which ``check`` applies in SQL (rowids -> the (rowid,
    uuid) of those that pass); None when the filter passes so few that checking would
    take more than ``budget`` rows (the backend's own full-text search, which filters as
    it ranks, should answer), or, for chunks ranked from in-memory filter columns
    (``masked``), when SQL disagrees with them."""
    seen = 0
    found: list[tuple[str, float]] = []
    for rowids, scores in chunks:
        if seen:
            # The filter passes few of the best rows (so far len(found) of seen): when
            # filling the page would take more than the budget, give up.
            rate = len(found) / seen
            needed = (limit - len(found)) / rate if rate else math.inf
            if seen + needed > budget:
                return None
        score_of = dict(zip(rowids.tolist(), scores.tolist(), strict=True))
        rows = check(list(score_of))
        if masked and len(rows) < len(score_of):
            return None
        found += [(uuid, score_of[rowid]) for rowid, uuid in rows]
        seen += len(score_of)
        if len(found) >= limit:
            break
    found.sort(key=lambda r: (-r[1], r[0]))
    return found[:limit]
