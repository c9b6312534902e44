"""The lexical leg on SQLite: FTS5 finds and ranks candidates (or a table's in-memory
copy of its postings does, with exactly FTS5's scores), the shared lexical module
(``store/lexical``) plans which rows are ranked and re-scores them with a scope's own
BM25 constants."""

from __future__ import annotations

import json
import logging
import threading
import time
from collections import OrderedDict
from collections.abc import Iterable, Sequence
from functools import partial
from typing import Any

import numpy as np
import numpy.typing as npt

from graphrecall.domain.models import Record
from graphrecall.domain.predicates import Predicate
from graphrecall.domain.scopes import (
    STANDARD_BM25,
    TABLES,
    TEXT_TABLES,
    Bm25,
    owner_field,
    scope_of_table,
)
from graphrecall.store.base import LexicalSearch, Scope
from graphrecall.store.lexical import bm25 as lexical_bm25
from graphrecall.store.lexical import plan as lexical_plan
from graphrecall.store.lexical import postings
from graphrecall.store.lexical.postings import TermIndex
from graphrecall.store.predicates import bounded
from graphrecall.store.sqlite import fts5, term_index
from graphrecall.store.sqlite import rows as rowmap
from graphrecall.store.sqlite.connection import Database
from graphrecall.store.sqlite.filtering import FilterCopies, restricted
from graphrecall.store.sqlite.migrations import FTS_TOKENIZE
from graphrecall.store.sqlite.pragmas import tune
from graphrecall.store.sqlite.term_index import TermIndexes

log = logging.getLogger(__name__)

# How long a table's cached row count, and a term's count of matching rows, are trusted
# (see ``_row_count``, ``_term_rows``), and how many term counts are kept.
ROW_COUNT_TTL_S = 30.0
TERM_COUNTS_MAX = 50_000
# The in-memory term index checks at most this many of its best rows against a search's
# filters before it leaves the search to FTS5, which filters as it ranks (a filter that
# few of the best rows pass, such as a narrow time window).
TERM_INDEX_CHECK_MAX = 5_000


def _text_weights(table: str) -> tuple[float, ...]:
    """Each column of ``table``'s full-text index's BM25 weight, in column order."""
    return scope_of_table(table).text_weights


class TextSearch(LexicalSearch):
    def __init__(self, db: Database, filters: FilterCopies) -> None:
        self.db = db
        self._filters = filters
        # Row counts of tables (term "") and of a term's matches, with when each was read.
        self._counts: OrderedDict[tuple[str, str], tuple[float, int]] = OrderedDict()
        self._counts_lock = threading.Lock()
        self._tokenizer = fts5.Tokenizer(FTS_TOKENIZE)
        self._fts_weights: dict[str, dict[str, float]] = {}
        # In-memory copies of the big tables' full-text postings (term_index.py).
        self.indexes = TermIndexes(db.path, tune, FTS_TOKENIZE)
        self.indexes.logged = db.logged_text_tables

    def close(self) -> None:
        self.indexes.close()
        self._tokenizer.close()

    def text_search(
        self,
        kind: type[Record],
        scope: Scope,
        terms: Sequence[str],
        *,
        where: Predicate | None = None,
        limit: int = 100,
        bm25: Bm25 = STANDARD_BM25,
    ) -> list[tuple[str, float]]:
        index = None
        if terms and not bounded(where):
            # A small table's copy (kept for re-scoring) serves too: it ranks exactly as
            # FTS5 does, in a fraction of the time.
            table = rowmap.table(kind)
            index = self._term_index(kind, any_size=self.indexes.has(table))
        found = self._standard_text_search(kind, scope, terms, where, limit, index)
        if bm25 == STANDARD_BM25 or not found:
            return found
        # The copy that ranked the rows scores them: under writes, asking again for a
        # current one would catch it up once more (or find it being caught up with).
        if index is None:
            # A copy at any size: it scores the rows in ~0.3 ms, where tokenising them
            # takes ~7 ms (fts5.statistics, its fallback while it is read or caught up).
            index = self._term_index(kind, any_size=True)
        return self._rescored(kind, terms, found, bm25, index)

    def _rescored(
        self,
        kind: type[Record],
        terms: Sequence[str],
        found: list[tuple[str, float]],
        bm25: Bm25,
        index: TermIndex | None,
    ) -> list[tuple[str, float]]:
        """``found`` scored and ordered with ``bm25``'s constants (store/lexical/bm25.py),
        from ``index``'s statistics (a current copy) or else the index's and rows'."""
        phrases: list[str] = []
        counted: list[str] = []  # the terms of ``phrases``, one each
        for term in terms:
            tokens = self._tokenizer.tokens(term)
            if len(tokens) > 1:
                return found  # a phrase ("rock'n'roll"): only FTS5 can count those
            if tokens:
                phrases.append(tokens[0])
                counted.append(term)
        table = rowmap.table(kind)
        marks = ",".join("?" * len(found))
        rowids = {
            str(r[0]): int(r[1])
            for r in self.db.read(
                f"SELECT uuid, rowid FROM {table} WHERE uuid IN ({marks})", [u for u, _ in found]
            )
        }
        scorer: lexical_bm25.Scorer
        if index is not None:
            scorer = partial(index.scores, phrases, bm25=bm25)
        else:
            hits = [self._term_rows(table, term) for term in counted]
            weights = self._column_weights(table)

            def from_rows(rowids: lexical_bm25.Ints) -> dict[int, float]:
                stats = fts5.statistics(
                    self.db.read, self._tokenizer, table, weights, phrases, hits, rowids
                )
                return {} if stats is None else lexical_bm25.scores(stats, bm25)

            scorer = from_rows

        return lexical_bm25.rescored(found, rowids, scorer)

    def _column_weights(self, table: str) -> dict[str, float]:
        """Each column of ``table``'s full-text index and its ``bm25()`` weight."""
        known = self._fts_weights.get(table)
        if known is None:
            names = [str(r[1]) for r in self.db.read(f"PRAGMA table_info({table}_fts)")]
            known = fts5.column_weights(names, _text_weights(table))
            self._fts_weights[table] = known
        return known

    def _standard_text_search(
        self,
        kind: type[Record],
        scope: Scope,
        terms: Sequence[str],
        where: Predicate | None,
        limit: int,
        index: TermIndex | None,
    ) -> list[tuple[str, float]]:
        """The ``limit`` best rows by FTS5's ``bm25()`` (or the same scores of ``index``,
        the table's current copy, where it can serve)."""
        if not terms:
            return []
        table = rowmap.table(kind)
        sql_where, params = rowmap.where(kind, scope, where)
        weights = "".join(f", {w}" for w in _text_weights(table))
        score = f"-bm25({table}_fts{weights}) AS score"
        if bounded(where):
            # The filter's few rows drive (CROSS JOIN keeps them outer), each matched and
            # scored by rowid: every row the filter allows is ranked, over every term.
            rows = self.db.read(
                f"SELECT t.uuid AS uuid, {score} FROM {table} t"
                f" CROSS JOIN {table}_fts ON {table}_fts.rowid = t.rowid"
                f" WHERE {sql_where} AND {table}_fts MATCH ?"
                f" ORDER BY score DESC, uuid LIMIT {int(limit)}",
                [*params, fts5.any_of(terms)],
            )
            return [(r[0], float(r[1])) for r in rows]
        indexed = (
            None
            if index is None
            else self._indexed_search(index, kind, scope, terms, where, sql_where, params, limit)
        )
        filled = False
        if indexed is not None:
            plan, found, filled = indexed
        else:
            plan = lexical_plan.match_plan(
                terms, self._row_count(table), lambda term: self._term_rows(table, term)
            )
        # CROSS JOIN keeps the full-text index as the outer loop: the planner would
        # otherwise drive from an indexed filter and run MATCH once per row.
        select = (
            f"SELECT t.uuid AS uuid, {score} FROM {table}_fts"
            f" CROSS JOIN {table} t ON t.rowid = {table}_fts.rowid"
            f" WHERE {table}_fts MATCH ? AND {sql_where}"
        )

        def ranked(matches: Sequence[str], since: int | None = None) -> list[tuple[str, float]]:
            newest = "" if since is None else f" AND {table}_fts.rowid >= {int(since)}"
            rows = self.db.read(
                " UNION ALL ".join([select + newest] * len(matches))
                + f" ORDER BY score DESC, uuid LIMIT {int(limit)}",
                [v for match in matches for v in (match, *params)],
            )
            return [(r[0], float(r[1])) for r in rows]

        if indexed is None:
            found = ranked(fts5.first(plan))
        fill = fts5.fill(plan)
        if fill is not None and len(found) < limit and not filled:
            # Only the newest FILL_ROWS rows of the fill in scope are scored (lexical/plan.py):
            # the index yields rows newest first, so this stops at the bound, unscored.
            bound = self.db.read(
                f"SELECT {table}_fts.rowid FROM {table}_fts"
                f" CROSS JOIN {table} t ON t.rowid = {table}_fts.rowid"
                f" WHERE {table}_fts MATCH ? AND {sql_where}"
                f" ORDER BY {table}_fts.rowid DESC LIMIT 1 OFFSET {lexical_plan.FILL_ROWS - 1}",
                [fill, *params],
            )
            since = int(bound[0][0]) if bound else None
            found = sorted([*found, *ranked([fill], since)], key=lambda r: (-r[1], r[0]))
        return found[:limit]

    def _indexed_search(
        self,
        index: TermIndex,
        kind: type[Record],
        scope: Scope,
        terms: Sequence[str],
        where: Predicate | None,
        sql_where: str,
        params: list[Any],
        limit: int,
    ) -> tuple[lexical_plan.MatchPlan, list[tuple[str, float]], bool] | None:
        """The plan of ``terms``, the rows it ranks first, from the table's in-memory term
        index, and whether they include the plan's fill; None when there is no current
        index or it cannot serve the query.

        With no filter but the owner, the index ranks the rows and knows their uuids: no
        SQL. Under a filter the in-memory filter columns cover, it ranks only the rows the
        filter allows, the fill's too; under any other, its best rows are checked in SQL,
        and FTS5 ranks the fill."""
        tokens = {t: self._tokenizer.tokens(t) for t in terms}
        if any(len(found) != 1 for found in tokens.values()):
            return None  # a term FTS5 splits into a phrase ("rock'n'roll")
        stem = {t: found[0] for t, found in tokens.items()}
        plan = lexical_plan.match_plan(terms, index.rows, lambda term: index.matches(stem[term]))
        scoped = scope.get(owner_field(kind))
        owner = scoped if isinstance(scoped, str) else None
        rare, weighty = [stem[t] for t in plan.rare], [stem[t] for t in plan.weighty]
        phrases = [stem[t] for t in plan.phrases]
        if not restricted(kind, scope, where):
            # Every row of the owner passes: the copy ranks them, the fill's too (FTS5's
            # fill query walks the common terms' postings), and knows their uuids.
            ranked = index.planned(phrases, rare, weighty, owner, limit)
            return plan, [(uuid, score) for uuid, score, _ in ranked], True
        masked = self._filters.copy(kind, scope, where)
        allowed = None if masked is None else masked[0].rowids[masked[1]]
        chunks = index.ranked(phrases, rare, owner, limit, allowed)
        found = self._checked(index.table, chunks, sql_where, params, limit, masked is not None)
        if found is None:
            return None
        if allowed is None or not plan.has_fill or len(found) >= limit:
            return plan, found, False
        # The fill over the allowed rows: the newest FILL_ROWS that match it, ranked by the
        # fill's own MATCH expression, (weighty...) NOT (rare...).
        newest = index.newest(weighty, rare, owner, allowed, lexical_plan.FILL_ROWS)
        chunks = index.ranked([*weighty, *rare], weighty, owner, limit, newest)
        fill = self._checked(index.table, chunks, sql_where, params, limit, True)
        if fill is None:
            return None
        return plan, sorted([*found, *fill], key=lambda r: (-r[1], r[0]))[:limit], True

    def _checked(
        self,
        table: str,
        chunks: Iterable[tuple[npt.NDArray[np.int64], npt.NDArray[np.float64]]],
        sql_where: str,
        params: list[Any],
        limit: int,
        masked: bool,
    ) -> list[tuple[str, float]] | None:
        """The best ``limit`` rows of the term index's ranked ``chunks`` that pass the
        filter in SQL (``postings.checked``); None when FTS5 should answer."""

        def check(rowids: list[int]) -> list[tuple[int, str]]:
            # CROSS JOIN: look the rows up by rowid, never scan an index of the filter.
            rows = self.db.read(
                f"SELECT t.rowid, t.uuid FROM json_each(?) j CROSS JOIN {table} t"
                f" ON t.rowid = j.value WHERE {sql_where}",
                [json.dumps(rowids), *params],
            )
            return [(int(r[0]), str(r[1])) for r in rows]

        found = postings.checked(chunks, check, limit, TERM_INDEX_CHECK_MAX, masked)
        if found is None and masked:
            log.warning("the filter columns of %s disagree with SQL (or pass few rows)", table)
        return found

    def _term_index(self, kind: type[Record], *, any_size: bool = False) -> TermIndex | None:
        """The current in-memory term index of ``kind``'s table, if it is big enough to
        have one (``any_size``: whatever its size): caught up with the writes since it was
        read when they are few, else None while it is caught up or read again in the
        background."""
        table = rowmap.table(kind)
        if self.db.in_transaction():
            return None
        if not any_size and self._row_count(table) < term_index.MIN_ROWS:
            return None
        structure = self.db.read(
            f"SELECT block FROM {table}_fts_data WHERE id = ?", [fts5.STRUCTURE_ID]
        )
        if not structure:
            return None
        return self.indexes.current(
            table,
            bytes(structure[0][0]),
            owner_field(kind),
            _text_weights(table),
            self.db.pooled,
        )

    def refresh_text_indexes(self) -> None:
        """Bring up to date (catch up, or read again) the stale copies of the tables
        searched from a copy before (not those never searched), so that the first
        searches after a burst of writes find them current."""
        for kind, table in TABLES.items():
            if self.indexes.has(table):
                self._term_index(kind, any_size=True)

    def save_again(self, tables: Sequence[str]) -> None:
        """Start reading again whole, in the background, the copies of ``tables`` whose
        saved files an erasure removed, so the next start finds a file again (without
        one it reads the table whole while FTS5 answers); rebuilds keep their usual
        spacing (``REBUILD_GAP_FACTOR``), so a burst of deletes costs one or two."""
        for kind, table in TABLES.items():
            if table in tables and self.indexes.has(table):
                self.indexes.refresh(table, owner_field(kind), _text_weights(table))

    def wait_for_term_indexes(self, timeout: float = 120.0) -> bool:
        """Start building the in-memory term index of every big table (and every table
        with a copy) whose copy is not current, and wait for the builds (for tests and
        benchmarks, which should time a warm store); True when none is still running
        after ``timeout`` seconds."""
        for kind, table in TABLES.items():
            if table in TEXT_TABLES:
                self._term_index(kind, any_size=self.indexes.has(table))
        return self.indexes.wait(timeout)

    def _row_count(self, table: str) -> int:
        """The table's row count (it only decides whether a term can be common)."""
        return self._count(table, "", f"SELECT count(*) FROM {table}", [])

    def _term_rows(self, table: str, term: str) -> int:
        """How many rows of ``table`` match ``term`` (it only decides whether the term is
        common). Counting walks the term's whole posting list: for a user's name at 100k
        facts that was ~12 % of a search's full-text time, paid again by every query."""
        sql = f"SELECT count(*) FROM {table}_fts WHERE {table}_fts MATCH ?"
        return self._count(table, term, sql, [fts5.quote(term)])

    def _count(self, table: str, term: str, sql: str, params: list[str]) -> int:
        """``sql``'s count, re-read at most every :data:`ROW_COUNT_TTL_S` seconds; the
        :data:`TERM_COUNTS_MAX` most recently used counts are kept."""
        key, now = (table, term), time.monotonic()
        with self._counts_lock:
            cached = self._counts.get(key)
            if cached is not None and now - cached[0] <= ROW_COUNT_TTL_S:
                self._counts.move_to_end(key)
                return cached[1]
        count = int(self.db.read(sql, params)[0][0])
        with self._counts_lock:
            self._counts[key] = (now, count)
            self._counts.move_to_end(key)
            while len(self._counts) > TERM_COUNTS_MAX:
                self._counts.popitem(last=False)
        return count
