"""Upkeep of a SQLite store: merging full-text index segments while idle, pruning the
change logs, erasing deleted rows' bytes, and the health of the in-memory copies."""

from __future__ import annotations

import time
from collections.abc import Collection
from typing import Any

from graphrecall.domain import clock
from graphrecall.domain.scopes import SCOPES, TEXT_TABLES
from graphrecall.store.base import Maintenance
from graphrecall.store.sqlite import term_index
from graphrecall.store.sqlite.connection import Database
from graphrecall.store.sqlite.filtering import FilterCopies
from graphrecall.store.sqlite.migrations import CHANGE_LOG, ROW_LOG
from graphrecall.store.sqlite.text_search import TextSearch
from graphrecall.store.sqlite.vectors import Vectors

# Full-text index compaction (``compact_text_indexes``): pages merged per step (4 KB
# each; ~0.1 s), and how much a table must grow before its index is merged again.
COMPACT_PAGES = 500
COMPACT_GROWTH = 0.1
COMPACT_MIN_ROWS = 1_000
# The full-text change log keeps its newest CHANGE_LOG_KEEP entries (a copy further
# behind is read again whole anyway); it is pruned by compaction once it holds twice as
# many.
CHANGE_LOG_KEEP = term_index.LOG_SCAN_MAX
# The settings rows that mark a table's deleted rows as still to be erased (``erase``).
ERASE_MARK = "erase_pending:"


class SQLiteMaintenance(Maintenance):
    def __init__(
        self, db: Database, text: TextSearch, vectors: Vectors, filters: FilterCopies
    ) -> None:
        self.db = db
        self._text = text
        self._vectors = vectors
        self._filters = filters

    def vector_index_status(self) -> dict[str, int]:
        return self._vectors.ann.status()

    def text_index_status(self) -> dict[str, int]:
        return self._text.indexes.status()

    def filter_column_status(self) -> dict[str, int]:
        return self._filters.columns.status()

    def cache_status(self) -> dict[str, dict[str, int]]:
        return {
            "vector_matrices": self._vectors.matrices.status(),
            "term_indexes": {
                **self._text.indexes.status(),
                "bytes": self._text.indexes.memory_bytes(),
            },
            "filter_columns": self._filters.columns.status(),
        }

    def refresh_text_indexes(self) -> None:
        self._text.refresh_text_indexes()

    def wait_until_warm(self, timeout: float = 120.0) -> bool:
        return self._text.wait_for_term_indexes(timeout)

    def wait_for_saved_copies(self, timeout: float) -> bool:
        return self._text.indexes.wait_for_saved(timeout)

    def warm(self, field: str, owner_uuid: str) -> dict[str, int]:
        """The owner's vector matrices and filter columns are read here; the term
        indexes (whole tables) and the HNSW index of an owner past ``ANN_MIN_ROWS`` are
        built in the background, as a search would start them."""
        self._text.wait_for_term_indexes(0.0)  # starts the builds, does not wait
        vectors = columns = 0
        for scope in SCOPES.values():
            if scope.owner_field != field:
                continue
            vectors += self._vectors.preload(scope.kind, owner_uuid)
            columns += self._filters.columns.preload(scope.table, field, owner_uuid)
        return {
            "vector_rows": vectors,
            "filter_column_rows": columns,
            "term_indexes_building": self._text.indexes.status()["building"],
            "vector_indexes_building": self._vectors.ann.status()["building"],
        }

    def mark_erasure(self, tables: Collection[str]) -> None:
        with self.db.transaction():
            for table in sorted(set(tables)):
                self.db.conn.execute(
                    "INSERT OR REPLACE INTO settings (key, value) VALUES (?, ?)",
                    [ERASE_MARK + table, clock.now()],
                )

    def erase(self) -> dict[str, Any]:
        """With ``secure_delete`` on, a deleted row's bytes are zeroed in its b-tree
        pages as it is deleted; what is left are the copies elsewhere:

        - a full-text index deletes by writing a tombstone, so its older segments keep
          the deleted terms: each marked table's index is merged into one segment
          (FTS5 ``optimize``: the old segments' pages are freed, and so zeroed);
        - the term-index copies saved beside the database: removed (the next whole read
          saves them again);
        - the WAL, which holds the pages as they were before: checkpointed into the
          database and truncated to nothing.

        One erasure at a time runs under the write lock, so no write lands between the
        merge and the checkpoint."""
        started = time.monotonic()
        with self.db.lock:
            marks = self.db.query(
                "SELECT key FROM settings WHERE key >= ? AND key < ?",
                [ERASE_MARK, ERASE_MARK[:-1] + chr(ord(ERASE_MARK[-1]) + 1)],
            )
            tables = sorted(str(row[0])[len(ERASE_MARK) :] for row in marks)
            merged = [t for t in tables if t in TEXT_TABLES]
            for table in merged:
                with self.db.transaction():
                    fts = f"{table}_fts"
                    self.db.conn.execute(f"INSERT INTO {fts}({fts}) VALUES ('optimize')")
            removed = self._text.indexes.forget(merged)
            self._text.save_again(removed)
            if tables:
                with self.db.transaction():
                    self.db.conn.executemany(
                        "DELETE FROM settings WHERE key = ?", [[ERASE_MARK + t] for t in tables]
                    )
            truncated = self.checkpoint()
        return {
            "erased_at": clock.now(),
            "tables": tables,
            "full_text_indexes_merged": merged,
            "saved_copies_removed": removed,
            "wal_truncated": truncated,
            "seconds": round(time.monotonic() - started, 3),
        }

    def checkpoint(self) -> bool:
        """Copy the WAL into the database and truncate it to zero bytes; False when a
        reader of an older snapshot kept it (waited for up to the busy timeout)."""
        with self.db.lock:
            busy = self.db.conn.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchone()[0]
        return not busy

    def pending_erasure(self) -> bool:
        found = self.db.query(
            "SELECT 1 FROM settings WHERE key >= ? AND key < ? LIMIT 1",
            [ERASE_MARK, ERASE_MARK[:-1] + chr(ord(ERASE_MARK[-1]) + 1)],
        )
        return bool(found)

    def compact_text_indexes(self) -> bool:
        """FTS5 writes each transaction's rows as a new segment and merges segments only
        a few at a time, so an index written message by message is read from dozens of
        segments: at 100k messages the episode search's lexical leg took 27-33 / 89-127
        ms (p50 / p95) against 18-21 / 52-76 ms once merged (docs/benchmarks.md). A step merges
        up to COMPACT_PAGES pages of one index toward a single segment, in its own short
        transaction. An index is merged again only once its table has grown by
        COMPACT_GROWTH (and COMPACT_MIN_ROWS rows) since it was last merged, so the cost
        stays proportional to what was written."""
        self._prune_change_log()
        for table in TEXT_TABLES:
            key = f"fts_compacted_rows:{table}"
            # Read first: an idle worker asks every few seconds, and most often nothing
            # is due, which must not take the write lock.
            rows = int(self.db.query(f"SELECT coalesce(max(rowid), 0) FROM {table}")[0][0])
            found = self.db.query("SELECT value FROM settings WHERE key = ?", [key])
            done = int(found[0][0]) if found else 0
            if rows - done < max(COMPACT_MIN_ROWS, done * COMPACT_GROWTH):
                continue
            with self.db.transaction():
                before = self.db.conn.total_changes
                # A negative page count merges segments of every level (an incremental
                # 'optimize'); a change count under 2 means nothing was left to merge.
                fts = f"{table}_fts"
                self.db.conn.execute(
                    f"INSERT INTO {fts}({fts}, rank) VALUES ('merge', ?)", [-COMPACT_PAGES]
                )
                if self.db.conn.total_changes - before >= 2:
                    return True
                self.db.conn.execute(
                    "INSERT OR REPLACE INTO settings (key, value) VALUES (?, ?)", [key, str(rows)]
                )
        return False

    def _prune_change_log(self) -> None:
        """Drop all but the newest CHANGE_LOG_KEEP entries of the full-text change log and
        of the filter columns' row log, once one holds twice as many (a copy they would
        have served is read again)."""
        for table in (CHANGE_LOG, ROW_LOG):
            first, last = self.db.query(f"SELECT min(seq), max(seq) FROM {table}")[0]
            if first is None or last - first < 2 * CHANGE_LOG_KEEP:
                continue
            with self.db.transaction():
                self.db.conn.execute(
                    f"DELETE FROM {table} WHERE seq <= ?", [last - CHANGE_LOG_KEEP]
                )
