"""Health and upkeep of the PostgreSQL store's in-process copies: the text tables'
postings (``term_index.py``), the owners' vector matrices (``vector_copies.py``), and
the change logs they catch up from."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from graphrecall.domain.scopes import SCOPE_OF, SCOPES, TABLES, TEXT_TABLES, owner_field
from graphrecall.store.base import Maintenance
from graphrecall.store.postgres.connection import Database
from graphrecall.store.postgres.migrations import VECTOR_TABLES, hnsw_index
from graphrecall.store.postgres.text_search import TextSearch
from graphrecall.store.postgres.vector_copies import VectorCopies


class PostgresMaintenance(Maintenance):
    def __init__(self, db: Database, text: TextSearch, vectors: VectorCopies) -> None:
        self._db = db
        self._text = text
        self._vectors = vectors

    @contextmanager
    def bulk_load(self) -> Iterator[None]:
        """The per-row lexical triggers are off and the HNSW indexes dropped while it loads
        (each row would update every one of its terms' count rows, each vector walk the
        graph: a 100k-fact build ran at ~30 rows/s); on leaving, the counts the triggers
        keep are computed at once from the rows (only inserts happened, so they are the
        same) and the indexes built as migration 6 does."""
        with self._db.connection() as conn:
            for table in TEXT_TABLES:
                conn.execute(f"ALTER TABLE {table} DISABLE TRIGGER {table}_lex_insert")
            for table in VECTOR_TABLES:
                conn.execute(f"DROP INDEX IF EXISTS embeddings_hnsw_{table}")
        yield
        with self._db.connection() as conn:
            conn.execute("SET maintenance_work_mem = '512MB'")
            with conn.transaction():
                for table in TEXT_TABLES:
                    conn.execute("DELETE FROM lexical_totals WHERE tbl = %s", [table])
                    conn.execute(
                        "INSERT INTO lexical_totals"
                        " SELECT %s, count(*), coalesce(sum(lex_len), 0)"
                        f" FROM {table} HAVING count(*) > 0",
                        [table],
                    )
                    conn.execute("DELETE FROM lexical_terms WHERE tbl = %s", [table])
                    conn.execute(
                        "INSERT INTO lexical_terms SELECT %s, k, count(*)"
                        f" FROM {table}, jsonb_object_keys(lex_tf) k GROUP BY k",
                        [table],
                    )
                    conn.execute(f"ALTER TABLE {table} ENABLE TRIGGER {table}_lex_insert")
            for table in VECTOR_TABLES:
                conn.execute(hnsw_index(table))
            conn.execute("RESET maintenance_work_mem")
            conn.execute("ANALYZE")

    def vector_index_status(self) -> dict[str, int]:
        return self._vectors.status()

    def text_index_status(self) -> dict[str, int]:
        return self._text.indexes.status()

    def cache_status(self) -> dict[str, dict[str, int]]:
        indexes = self._text.indexes
        return {
            "term_indexes": {**indexes.status(), "bytes": indexes.memory_bytes()},
            "vector_matrices": self._vectors.matrices.status(),
        }

    def compact_text_indexes(self) -> bool:
        """Prune the change logs (the only upkeep PostgreSQL leaves to the store)."""
        pruned = self._vectors.prune_log()
        return self._text.indexes.prune_log() or pruned

    def refresh_text_indexes(self) -> None:
        """Catch up (or read again) the copies of the tables searched from a copy."""
        for kind, table in TABLES.items():
            if self._text.indexes.has(table):
                self._text.indexes.current(table, owner_field(kind), SCOPE_OF[kind].text_weights)

    def wait_until_warm(self, timeout: float = 120.0) -> bool:
        """Read every text table whole (the big ones in the background) and wait."""
        self._start_copies()
        return self._text.indexes.wait(timeout)

    def wait_for_saved_copies(self, timeout: float) -> bool:
        return self._text.indexes.wait_for_saved(timeout)

    def warm(self, field: str, owner_uuid: str) -> dict[str, int]:
        """The owner's vector copies are read here (a big owner's in the background, as a
        search would), and its HNSW indexes started; the text tables' postings (whole
        tables, not per owner) are started building. Filters are PostgreSQL's own."""
        self._start_copies()
        vectors = 0
        for scope in SCOPES.values():
            if scope.owner_field != field:
                continue
            key = (scope.table, owner_uuid)
            copy, _ = self._vectors.current(key)
            if copy is not None:
                uuids, _, matrix = copy
                self._vectors.ann.prepare(key, uuids, matrix)
                vectors += len(uuids)
        return {
            "vector_rows": vectors,
            "term_indexes_building": self._text.indexes.status()["building"],
            "vector_indexes_building": self._vectors.ann.status()["building"],
        }

    def _start_copies(self) -> None:
        for kind, table in TABLES.items():
            if table in TEXT_TABLES:
                self._text.indexes.current(table, owner_field(kind), SCOPE_OF[kind].text_weights)
