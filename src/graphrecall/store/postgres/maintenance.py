"""Health and upkeep of the PostgreSQL store's in-process copies: the text tables'
postings (``term_index.py``), the owners' vector matrices (``vector_copies.py``), and
the change logs they catch up from; erasing deleted rows' bytes."""

from __future__ import annotations

import time
from collections.abc import Collection, Iterator
from contextlib import contextmanager
from typing import Any

from graphrecall.domain import clock
from graphrecall.domain.scopes import SCOPE_OF, SCOPES, TABLES, TEXT_TABLES, owner_field
from graphrecall.store.base import Maintenance
from graphrecall.store.postgres.migrations import VECTOR_TABLES, hnsw_index
from graphrecall.store.postgres.term_index_image import ERASED_SEQ
from graphrecall.store.postgres.text_search import TextSearch
from graphrecall.store.postgres.vector_copies import VectorCopies

# The settings rows that mark a table's deleted rows as still to be erased (``erase``).
ERASE_MARK = "erase_pending:"
# Tables every erasure vacuums as well: the BM25 vocabulary and the saved images, which
# hold terms of any text table.
ERASE_ALWAYS = ("lexical_terms", "term_index_images")


class PostgresMaintenance(Maintenance):
    def __init__(self, text: TextSearch, vectors: VectorCopies) -> None:
        self._text = text
        self._vectors = vectors
        self.db = text.db

    def mark_erasure(self, tables: Collection[str]) -> None:
        with self.db.transaction():
            for table in sorted(set(tables)):
                self.db.execute(
                    "INSERT INTO settings (key, value) VALUES (%s, %s)"
                    " ON CONFLICT (key) DO UPDATE SET value = excluded.value",
                    [ERASE_MARK + table, clock.now()],
                )

    def erase(self) -> dict[str, Any]:
        """A deleted row stays in its heap page (and its index entries) as a dead tuple
        until VACUUM, and its bytes stay in the page's free space after it; a GIN index
        keeps a key for every term it ever held. So, for the marked tables:

        - the BM25 vocabulary forgets terms no row holds any more (``lexical_terms``);
        - the saved postings images of the marked text tables are deleted, and an image
          read before this point is refused later (``ERASED_SEQ``): they hold terms;
        - each marked table (with its TOAST table and indexes), the vocabulary and the
          images are rewritten (``VACUUM FULL``: new files, the old ones unlinked). It
          locks each table while it is rewritten; its time grows with the table
          (docs/security.md has the figures and what the WAL keeps)."""
        started = time.monotonic()
        marks = self.db.query(
            "SELECT key FROM settings WHERE key LIKE %s", [ERASE_MARK.replace("_", r"\_") + "%"]
        )
        tables = sorted(str(row["key"])[len(ERASE_MARK) :] for row in marks)
        if not tables:
            return {"erased_at": clock.now(), "tables": [], "seconds": 0.0}
        text = [t for t in tables if t in TEXT_TABLES]
        with self.db.transaction():
            last = self.db.query("SELECT coalesce(max(seq), 0) AS last FROM lexical_changes")
            seq = int(last[0]["last"])
            if text:
                self.db.execute(
                    "DELETE FROM lexical_terms WHERE tbl = ANY(%s) AND rows <= 0", [text]
                )
                self.db.execute("DELETE FROM term_index_images WHERE tbl = ANY(%s)", [text])
            for table in text:
                self.db.execute(
                    "INSERT INTO settings (key, value) VALUES (%s, %s)"
                    " ON CONFLICT (key) DO UPDATE SET value = excluded.value",
                    [ERASED_SEQ + table, str(seq)],
                )
        vacuumed = [*tables, *ERASE_ALWAYS]
        with self.db.pool.connection() as conn:  # autocommit: VACUUM runs outside one
            # FULL: plain VACUUM frees a dead tuple's line but leaves its bytes in the
            # page's free space (measured: the heap, its GIN index and the vocabulary
            # kept the deleted text); FULL writes each table and its indexes anew and
            # unlinks the old files.
            conn.execute(f"VACUUM (FULL) {', '.join(vacuumed)}")
            statistics = _erase_statistics(conn, tables)
        with self.db.transaction():
            self.db.execute(
                "DELETE FROM settings WHERE key = ANY(%s)", [[ERASE_MARK + t for t in tables]]
            )
        return {
            "erased_at": clock.now(),
            "tables": tables,
            "rewritten": vacuumed,
            "statistics_erased": statistics,
            "seconds": round(time.monotonic() - started, 3),
        }

    def pending_erasure(self) -> bool:
        return bool(
            self.db.query(
                "SELECT 1 FROM settings WHERE key LIKE %s LIMIT 1",
                [ERASE_MARK.replace("_", r"\_") + "%"],
            )
        )

    @contextmanager
    def bulk_load(self) -> Iterator[None]:
        """The per-row lexical triggers are off and the HNSW indexes dropped while it loads
        (each row would update every one of its terms' count rows, each vector walk the
        graph: a 100k-fact build ran at ~30 rows/s); on leaving, the counts the triggers
        keep are computed at once from the rows (only inserts happened, so they are the
        same) and the indexes built as migration 6 does."""
        with self.db.connection() as conn:
            for table in TEXT_TABLES:
                conn.execute(f"ALTER TABLE {table} DISABLE TRIGGER {table}_lex_insert")
            for table in VECTOR_TABLES:
                conn.execute(f"DROP INDEX IF EXISTS embeddings_hnsw_{table}")
        yield
        with self.db.connection() as conn:
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


def _erase_statistics(conn: Any, tables: list[str]) -> bool:
    """The planner's column statistics (``pg_statistic``) keep sampled values of each
    column, deleted text included, and ANALYZE of a table left empty keeps the old ones:
    the tables' rows there are deleted, recomputed from what is left, and the catalog
    rewritten. Only a superuser may; False (and the gap in docs/security.md) otherwise."""
    superuser = conn.execute(
        "SELECT 1 FROM pg_roles WHERE rolname = current_user AND rolsuper"
    ).fetchone()
    if superuser is None:
        return False
    conn.execute(
        "DELETE FROM pg_catalog.pg_statistic WHERE starelid = ANY(%s::regclass[])", [tables]
    )
    conn.execute(f"ANALYZE {', '.join(tables)}")
    conn.execute("VACUUM (FULL) pg_catalog.pg_statistic")
    return True
