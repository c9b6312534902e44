"""Health and upkeep of the PostgreSQL store's in-process copies: the text tables'
postings (``term_index.py``), the owners' vector matrices (``vector_copies.py``), and
the change logs they catch up from."""

from __future__ import annotations

from graphrecall.domain.scopes import SCOPE_OF, SCOPES, TABLES, TEXT_TABLES, owner_field
from graphrecall.store.base import Maintenance
from graphrecall.store.postgres.text_search import TextSearch
from graphrecall.store.postgres.vector_copies import VectorCopies


class PostgresMaintenance(Maintenance):
    def __init__(self, text: TextSearch, vectors: VectorCopies) -> None:
        self._text = text
        self._vectors = vectors

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
