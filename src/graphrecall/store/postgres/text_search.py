"""The lexical leg on PostgreSQL: true BM25 from statistics PostgreSQL keeps.

Each text row stores its tokens (``tokens.py``: FTS5's own tokenizer) as a ``tsvector``
of exact lexemes (GIN-indexed: the candidates), its length ``lex_len``, its per-column
term counts ``lex_tf`` and its insertion order ``lex_seq``; triggers keep the table's row
and token totals and each term's row count in the writing transaction
(``migrations.py``). Scores come from the shared ``store/lexical/bm25.py`` with those
statistics, and the rows ranked from the shared common-terms plan
(``store/lexical/plan.py``), as the SQLite backend's FTS5 path ranks them: the same rows,
order and scores. The table's totals, like FTS5's, span every tenant.

One documented difference: a query term that splits into several tokens ("rock'n'roll")
matches rows holding all of them, with the smallest of their counts as its frequency,
where FTS5 requires them adjacent and counts the phrase's occurrences.
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import partial
from typing import Any

import numpy as np

from graphrecall.domain.models import Record
from graphrecall.domain.predicates import Predicate
from graphrecall.domain.scopes import SCOPE_OF, STANDARD_BM25, Bm25, owner_field
from graphrecall.store.base import LexicalSearch, Scope
from graphrecall.store.lexical import bm25 as lexical_bm25
from graphrecall.store.lexical import plan as lexical_plan
from graphrecall.store.lexical import postings
from graphrecall.store.lexical.postings import TermIndex
from graphrecall.store.postgres import rows as rowmap
from graphrecall.store.postgres.connection import Database
from graphrecall.store.postgres.term_index import TermIndexes
from graphrecall.store.postgres.tokens import Tokenizer
from graphrecall.store.predicates import restricted

Phrase = tuple[str, ...]
# The in-memory copy checks at most this many of its best rows against a search's filter
# before SQL, which filters as it ranks, answers (as on SQLite: a narrow time window).
CHECK_MAX = 5_000
Row = dict[str, Any]


def _lexeme(token: str) -> str:
    return "'" + token.replace("\\", "\\\\").replace("'", "''") + "'"


def any_of(phrases: Sequence[Phrase]) -> str:
    """A tsquery matching rows that hold any of the phrases (each: all its tokens)."""
    return " | ".join("(" + " & ".join(_lexeme(t) for t in p) + ")" for p in phrases)


class TextSearch(LexicalSearch):
    def __init__(self, db: Database, tokenizer: Tokenizer) -> None:
        self.db = db
        self._tokenizer = tokenizer
        # In-memory copies of the tables' postings (term_index.py), kept current from the
        # change log: they rank a search with no filter but its owner without sending
        # candidate rows over the wire.
        self.indexes = TermIndexes(db)

    def close(self) -> None:
        self.indexes.close()

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
        tokens = {t: self._tokenizer.tokens(t) for t in terms}
        terms = [t for t in terms if tokens[t]]  # a term of no tokens matches nothing
        if not terms or limit <= 0:
            return []
        table = rowmap.table(kind)
        if all(len(tokens[t]) == 1 for t in terms):  # (a phrase: only SQL counts those)
            index = self.indexes.current(table, owner_field(kind), SCOPE_OF[kind].text_weights)
            if index is not None:
                stem = {t: tokens[t][0] for t in terms}
                found = self._indexed(index, kind, scope, where, terms, stem, limit, bm25)
                if found is not None:
                    return found
        # The table's totals and every one-token term's row count in one round trip (the
        # SQL path answers a big table's searches while its copy is read after a start:
        # a statement per term cost each cold search several round trips).
        single = sorted({tokens[t][0] for t in terms if len(tokens[t]) == 1})
        totals = self.db.query(
            "SELECT (SELECT rows FROM lexical_totals WHERE tbl = %s) AS rows,"
            " (SELECT tokens FROM lexical_totals WHERE tbl = %s) AS tokens,"
            " (SELECT coalesce(jsonb_object_agg(term, rows), '{}'::jsonb) FROM lexical_terms"
            " WHERE tbl = %s AND term = ANY(%s::text[])) AS hits",
            [table, table, table, single],
        )[0]
        rows = int(totals["rows"] or 0)
        average = int(totals["tokens"] or 0) / rows if rows else 0.0
        counted: dict[str, Any] = totals["hits"]
        hits = {t: int(counted.get(tokens[t][0], 0)) for t in terms if len(tokens[t]) == 1}

        def hits_of(term: str) -> int:
            if term not in hits:
                hits[term] = self._hits(table, tokens[term])
            return hits[term]

        plan = lexical_plan.match_plan(terms, rows, hits_of)
        sql_where, params = rowmap.where(kind, scope, where, self.db.text_collation)
        weights = np.asarray(SCOPE_OF[kind].text_weights, dtype=np.float64)

        def ranked(
            found: list[Row], order: Sequence[str], constants: Bm25
        ) -> list[tuple[str, float]]:
            """``found`` scored over the terms ``order`` names, in that order (BM25 adds
            the terms' parts in the order the query names them), best first."""
            stats = _statistics(found, [tokens[t] for t in order], weights)
            scored = lexical_bm25.scores(
                lexical_bm25.RowStatistics(
                    rows=rows,
                    average=average,
                    rowids=np.arange(len(found), dtype=np.int64),
                    lengths=stats[0],
                    hits=[hits_of(t) for t in order],
                    freqs=stats[1],
                ),
                constants,
            )
            out = [(found[at]["uuid"], score) for at, score in scored.items()]
            return sorted(out, key=lambda x: (-x[1], x[0]))

        wanted = sorted({token for t in terms for token in tokens[t]})
        first = self._candidates(
            table, sql_where, params, [tokens[t] for t in plan.rare], wanted=wanted
        )
        best = ranked(first, plan.phrases, STANDARD_BM25)[:limit]
        fill: list[Row] = []
        if plan.has_fill and len(best) < limit:
            # The newest FILL_ROWS rows in scope matching (weighty...) NOT (rare...), ranked
            # by that expression's terms, as FTS5 ranks the fill (lexical/plan.py).
            fill = self._candidates(
                table,
                sql_where,
                params,
                [tokens[t] for t in plan.weighty],
                without=[tokens[t] for t in plan.rare],
                newest=lexical_plan.FILL_ROWS,
                wanted=wanted,
            )
            filled = ranked(fill, [*plan.weighty, *plan.rare], STANDARD_BM25)
            best = sorted([*best, *filled], key=lambda x: (-x[1], x[0]))[:limit]
        if bm25 == STANDARD_BM25 or not best or any(len(tokens[t]) > 1 for t in terms):
            return best  # (SQLite too keeps the standard scores of a query with a phrase)
        # Re-scored over every term of the query, in its order, as SQLite re-scores.
        chosen = {uuid for uuid, _ in best}
        return ranked([r for r in (*first, *fill) if r["uuid"] in chosen], terms, bm25)

    def _indexed(
        self,
        index: TermIndex,
        kind: type[Record],
        scope: Scope,
        where: Predicate | None,
        terms: Sequence[str],
        stem: dict[str, str],
        limit: int,
        bm25: Bm25,
    ) -> list[tuple[str, float]] | None:
        """What the SQL path below answers, from ``index`` (a current copy of the table's
        postings): the plan's rows ranked in memory, the fill from the newest rows the
        copy holds, and the rows re-scored with ``bm25`` from the copy's statistics.
        Under a filter (anything but the owner), the copy's best rows are checked in SQL
        (``postings.checked``) and the fill's rows found in SQL; None, and SQL answers,
        when the filter passes few of the best rows."""
        plan = lexical_plan.match_plan(terms, index.rows, lambda t: index.matches(stem[t]))
        scoped = scope.get(owner_field(kind))
        owner = scoped if isinstance(scoped, str) else None
        rare, weighty = [stem[t] for t in plan.rare], [stem[t] for t in plan.weighty]
        phrases = [stem[t] for t in plan.phrases]
        table = rowmap.table(kind)
        rowid_of: dict[str, int] = {}  # each ranked row's number in the copy
        if restricted(kind, scope, where):
            sql_where, params = rowmap.where(kind, scope, where, self.db.text_collation)

            def check(rowids: list[int]) -> list[tuple[int, str]]:
                rows = self.db.query(
                    f"SELECT t.lex_seq, t.uuid FROM {table} t"
                    f" WHERE t.lex_seq = ANY(%s) AND {sql_where}",
                    [rowids, *params],
                )
                passed = [(int(r["lex_seq"]), str(r["uuid"])) for r in rows]
                rowid_of.update((uuid, rowid) for rowid, uuid in passed)
                return passed

            chunks = index.ranked(phrases, rare, owner, limit)
            found = postings.checked(chunks, check, limit, CHECK_MAX, False)
            if found is None:
                return None
            if plan.has_fill and len(found) < limit:
                # The fill's rows (the newest FILL_ROWS the filter passes) from SQL, their
                # scores from the copy.
                query = any_of([(t,) for t in weighty])
                if rare:
                    query = f"({query}) & !({any_of([(t,) for t in rare])})"
                latest = self.db.query(
                    f"SELECT t.lex_seq, t.uuid FROM {table} t WHERE t.lex_tsv @@ %s::tsquery"
                    f" AND {sql_where} ORDER BY t.lex_seq DESC LIMIT {lexical_plan.FILL_ROWS}",
                    [query, *params],
                )
                uuid_of = {int(r["lex_seq"]): str(r["uuid"]) for r in latest}
                rowid_of.update((uuid, rowid) for rowid, uuid in uuid_of.items())
                scored = index.scores(
                    [*weighty, *rare], np.asarray(sorted(uuid_of), dtype=np.int64), STANDARD_BM25
                )
                filled = [(uuid_of[rowid], score) for rowid, score in scored.items()]
                found = sorted([*found, *filled], key=lambda x: (-x[1], x[0]))[:limit]
            best = found
        else:
            ranked = index.planned(phrases, rare, weighty, owner, limit)
            rowid_of.update((uuid, rowid) for uuid, _, rowid in ranked)
            best = [(uuid, score) for uuid, score, _ in ranked]
        if bm25 == STANDARD_BM25 or not best:
            return best
        # Re-scored over every term of the query, in its order, as SQLite re-scores (the
        # copy knows each row's number: no SQL).
        scorer = partial(index.scores, [stem[t] for t in terms], bm25=bm25)
        return lexical_bm25.rescored(best, rowid_of, scorer)

    def _candidates(
        self,
        table: str,
        sql_where: str,
        params: list[Any],
        phrases: Sequence[Phrase],
        *,
        without: Sequence[Phrase] = (),
        newest: int | None = None,
        wanted: Sequence[str],
    ) -> list[Row]:
        """Matching rows with their length and the counts of the ``wanted`` tokens only:
        a long row's whole ``lex_tf`` (hundreds of terms) would cost more to send and
        parse than the scoring itself."""
        query = any_of(phrases)
        if without:
            query = f"({query}) & !({any_of(without)})"
        tail = f" ORDER BY t.lex_seq DESC LIMIT {int(newest)}" if newest is not None else ""
        return self.db.query(
            "SELECT t.uuid, t.lex_len, coalesce((SELECT jsonb_object_agg(k, t.lex_tf -> k)"
            " FROM unnest(%s::text[]) k WHERE t.lex_tf ? k), '{}'::jsonb) AS lex_tf"
            f" FROM {table} t WHERE t.lex_tsv @@ %s::tsquery AND {sql_where}{tail}",
            [list(wanted), query, *params],
        )

    def _hits(self, table: str, phrase: Phrase) -> int:
        """Rows of the table holding the phrase's tokens (all tenants, as FTS5 counts)."""
        if len(phrase) == 1:
            rows = self.db.query(
                "SELECT rows FROM lexical_terms WHERE tbl = %s AND term = %s", [table, phrase[0]]
            )
            return int(rows[0]["rows"]) if rows else 0
        rows = self.db.query(
            f"SELECT count(*) AS n FROM {table} WHERE lex_tsv @@ %s::tsquery", [any_of([phrase])]
        )
        return int(rows[0]["n"])


def _statistics(
    found: list[Row], phrases: Sequence[Phrase], weights: np.ndarray[Any, Any]
) -> tuple[np.ndarray[Any, Any], np.ndarray[Any, Any]]:
    """The rows' lengths, and each phrase's weighted frequency in each row ([phrase, row])."""
    freqs = np.zeros((len(phrases), len(found)), dtype=np.float64)
    for at, row in enumerate(found):
        tf: dict[str, list[int]] = row["lex_tf"]
        for i, phrase in enumerate(phrases):
            counts = [tf.get(token) for token in phrase]
            if all(c is not None for c in counts):
                per_column = np.min(np.asarray(counts, dtype=np.float64), axis=0)
                freqs[i, at] = float(per_column @ weights)
    lengths = np.asarray([r["lex_len"] for r in found], dtype=np.float64)
    return lengths, freqs
