"""Text split and stemmed exactly as SQLite's FTS5 index does it.

The lexical leg must rank the same on both backends, so the tokens are made by the same
code: FTS5's ``porter unicode61 remove_diacritics 2`` tokenizer, run in an in-memory
SQLite database (the standard library's) and read back through ``fts5vocab``. PostgreSQL
then stores the tokens (a ``tsvector`` of exact lexemes for candidates, and per-column
counts for BM25); its own parsers and dictionaries are never used.
"""

from __future__ import annotations

import hashlib
import sqlite3
import threading
from collections.abc import Sequence

TOKENIZE = "porter unicode61 remove_diacritics 2"
# Per row: its token count over all columns, and each term's count per column.
Counts = tuple[int, dict[str, list[int]]]
# Tokens longer than this many bytes are stored as "#" and a digest: a tsvector lexeme is
# at most 2,047 bytes and a btree key ~2,700, and FTS5 keeps tokens of any length. Store
# and query map them alike, and "#" is never part of an FTS5 token (a separator).
LONGEST = 255


def lexeme(token: str) -> str:
    if len(token.encode()) <= LONGEST:
        return token
    return "#" + hashlib.sha256(token.encode()).hexdigest()


class Tokenizer:
    def __init__(self) -> None:
        self._conn = sqlite3.connect(":memory:", check_same_thread=False, isolation_level=None)
        self._lock = threading.Lock()
        self._layouts: set[int] = set()
        self._terms: dict[str, tuple[str, ...]] = {}

    def close(self) -> None:
        self._conn.close()

    def _table(self, width: int) -> str:
        name = f"t{width}"
        if width not in self._layouts:
            cols = ", ".join(f"c{i}" for i in range(width))
            self._conn.execute(
                f"CREATE VIRTUAL TABLE {name} USING fts5({cols}, tokenize={TOKENIZE!r})"
            )
            self._conn.execute(f"CREATE VIRTUAL TABLE {name}_v USING fts5vocab({name}, instance)")
            self._layouts.add(width)
        return name

    def counts(self, rows: Sequence[Sequence[str | None]]) -> list[Counts]:
        """Each row's (columns in index order) length and term counts per column."""
        if not rows:
            return []
        width = len(rows[0])
        out: list[Counts] = [(0, {}) for _ in rows]
        with self._lock:
            name = self._table(width)
            cols = ", ".join(f"c{i}" for i in range(width))
            marks = ",".join("?" * (width + 1))
            self._conn.executemany(
                f"INSERT INTO {name}(rowid, {cols}) VALUES ({marks})",
                [(i, *row) for i, row in enumerate(rows)],
            )
            found = self._conn.execute(
                f"SELECT doc, term, col, count(*) FROM {name}_v GROUP BY doc, term, col"
            ).fetchall()
            self._conn.execute(f"DELETE FROM {name}")
        for doc, term, col, n in found:
            length, tf = out[doc]
            per = tf.setdefault(lexeme(term), [0] * width)
            per[int(col[1:])] += n
            out[doc] = (length + n, tf)
        return out

    def tokens(self, term: str) -> tuple[str, ...]:
        """A query term's tokens, in order (several for "rock'n'roll": a phrase)."""
        known = self._terms.get(term)
        if known is not None:
            return known
        with self._lock:
            name = self._table(1)
            self._conn.execute(f"INSERT INTO {name}(rowid, c0) VALUES (1, ?)", [term])
            rows = self._conn.execute(f"SELECT term FROM {name}_v ORDER BY offset").fetchall()
            self._conn.execute(f"DELETE FROM {name}")
        found = tuple(lexeme(r[0]) for r in rows)
        if len(self._terms) < 100_000:
            self._terms[term] = found
        return found
