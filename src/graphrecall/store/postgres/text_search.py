"""The lexical leg on PostgreSQL: true BM25 from statistics PostgreSQL keeps.

Each text row stores its tokens (``tokens.py``: FTS5's own tokenizer) as a ``tsvector``
of exact lexemes (GIN-indexed: the candidates), its length ``lex_len`` and its per-column
term counts ``lex_tf``; triggers keep the table's row and token totals and each term's
row count in the writing transaction (``migrations.py``). Scores come from the shared
``store/lexical/bm25.py`` with those statistics, so they equal SQLite's ``bm25()`` for
the same rows: the table's totals, like FTS5's, span every tenant.

Not built yet (see docs/architecture.md): the common-terms plan (``store/lexical/plan``;
it changes results only for tables of 5,000+ rows), and phrases: a query term that splits
into several tokens ("rock'n'roll") matches rows holding all of them, with the smallest of
their counts as its frequency, where FTS5 requires them adjacent and counts occurrences.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from graphrecall.domain.models import Record
from graphrecall.domain.predicates import Predicate
from graphrecall.domain.scopes import SCOPE_OF, STANDARD_BM25, Bm25
from graphrecall.store.base import Scope
from graphrecall.store.lexical import bm25 as lexical_bm25
from graphrecall.store.postgres import rows as rowmap
from graphrecall.store.postgres.connection import Database
from graphrecall.store.postgres.tokens import Tokenizer


def _lexeme(token: str) -> str:
    return "'" + token.replace("\\", "\\\\").replace("'", "''") + "'"


class TextSearch:
    def __init__(self, db: Database, tokenizer: Tokenizer) -> None:
        self.db = db
        self._tokenizer = tokenizer

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
        phrases = [p for p in (self._tokenizer.tokens(t) for t in terms) if p]
        if not phrases or limit <= 0:
            return []
        table = rowmap.table(kind)
        weights = np.asarray(SCOPE_OF[kind].text_weights, dtype=np.float64)
        query = " | ".join("(" + " & ".join(_lexeme(t) for t in p) + ")" for p in phrases)
        sql_where, params = rowmap.where(kind, scope, where, self.db.text_collation)
        found = self.db.query(
            f"SELECT t.uuid, t.lex_len, t.lex_tf FROM {table} t"
            f" WHERE t.lex_tsv @@ %s::tsquery AND {sql_where}",
            [query, *params],
        )
        if not found:
            return []
        totals = self.db.query("SELECT rows, tokens FROM lexical_totals WHERE tbl = %s", [table])
        rows = int(totals[0]["rows"]) if totals else 0
        average = int(totals[0]["tokens"]) / rows if rows else 0.0
        hits = [self._hits(table, p) for p in phrases]
        freqs = np.zeros((len(phrases), len(found)), dtype=np.float64)
        for at, row in enumerate(found):
            tf: dict[str, list[int]] = row["lex_tf"]
            for i, phrase in enumerate(phrases):
                counts = [tf.get(token) for token in phrase]
                if all(c is not None for c in counts):
                    per_column = np.min(np.asarray(counts, dtype=np.float64), axis=0)
                    freqs[i, at] = float(per_column @ weights)
        lengths = np.asarray([r["lex_len"] for r in found], dtype=np.float64)

        def scored(constants: Bm25, keep: np.ndarray[Any, Any]) -> list[tuple[str, float]]:
            stats = lexical_bm25.RowStatistics(
                rows=rows,
                average=average,
                rowids=keep,
                lengths=lengths[keep],
                hits=hits,
                freqs=freqs[:, keep],
            )
            by_at = lexical_bm25.scores(stats, constants)
            out = [(found[at]["uuid"], score) for at, score in by_at.items()]
            return sorted(out, key=lambda x: (-x[1], x[0]))

        best = scored(STANDARD_BM25, np.arange(len(found), dtype=np.int64))[:limit]
        if bm25 == STANDARD_BM25:
            return best
        at_of = {row["uuid"]: at for at, row in enumerate(found)}
        return scored(bm25, np.asarray(sorted(at_of[u] for u, _ in best), dtype=np.int64))

    def _hits(self, table: str, phrase: tuple[str, ...]) -> int:
        """Rows of the table holding the phrase's tokens (all tenants, as FTS5 counts)."""
        if len(phrase) == 1:
            rows = self.db.query(
                "SELECT rows FROM lexical_terms WHERE tbl = %s AND term = %s", [table, phrase[0]]
            )
            return int(rows[0]["rows"]) if rows else 0
        query = " & ".join(_lexeme(t) for t in phrase)
        rows = self.db.query(
            f"SELECT count(*) AS n FROM {table} WHERE lex_tsv @@ %s::tsquery", [query]
        )
        return int(rows[0]["n"])
