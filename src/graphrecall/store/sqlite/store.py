"""SQLite implementation of :class:`graphrecall.store.base.Store`: the parts below share
one :class:`~graphrecall.store.sqlite.connection.Database`, and
:class:`~graphrecall.store.assembled.AssembledStore` answers each method of the interface
from one of them.

- ``records.py``: records written, read, filtered, counted, listed (``rows.py`` maps them);
- ``graph.py``: nodes by name, adjacency (cached per graph), degrees;
- ``links.py``: provenance links between records and episodes;
- ``vectors.py``: embeddings and the vector leg (``vector_index.py``: HNSW);
- ``text_search.py``: the lexical leg (FTS5, ``term_index.py``'s in-memory copies, the
  shared ``store/lexical`` BM25);
- ``filtering.py``: filters as masks from the in-memory filter columns;
- ``queue.py``: the task queue's statements (``store/queue.py`` claims);
- ``maintenance.py``: compaction, erasure and index health; search cursors: ``store/cursors.py``.

This class only builds them, and closes them.
"""

from __future__ import annotations

import logging
import sqlite3
from pathlib import Path

from graphrecall.store.assembled import AssembledStore
from graphrecall.store.cursors import SqlCursors
from graphrecall.store.sqlite.connection import Database
from graphrecall.store.sqlite.filtering import FilterCopies
from graphrecall.store.sqlite.graph import Graphs
from graphrecall.store.sqlite.links import Links
from graphrecall.store.sqlite.maintenance import SQLiteMaintenance
from graphrecall.store.sqlite.queue import SQLiteQueue
from graphrecall.store.sqlite.records import Records
from graphrecall.store.sqlite.text_search import TextSearch
from graphrecall.store.sqlite.vectors import Vectors

log = logging.getLogger(__name__)


class SQLiteStore(AssembledStore):
    def __init__(self, path: Path) -> None:
        self.path = path
        self.db = Database(path)
        graphs = Graphs(self.db)
        self._filters = FilterCopies(self.db)
        self._sqlite_vectors = Vectors(self.db, self._filters)
        self._sqlite_text = TextSearch(self.db, self._filters)
        self._upkeep = SQLiteMaintenance(
            self.db, self._sqlite_text, self._sqlite_vectors, self._filters
        )
        # An erasure a crash interrupted (its delete committed, its mark with it).
        if self._upkeep.pending_erasure():
            self._upkeep.erase()
        super().__init__(
            transactions=self.db,
            records=Records(self.db, graphs, self._sqlite_vectors.removed),
            graphs=graphs,
            links=Links(self.db),
            vectors=self._sqlite_vectors,
            text=self._sqlite_text,
            queue=SQLiteQueue(self.db),
            cursors=SqlCursors(self.db, "?"),
            maintenance=self._upkeep,
        )
        # The in-memory caches, named for tests and benchmarks that inspect them.
        self._term_indexes = self._sqlite_text.indexes
        self._ann = self._sqlite_vectors.ann

    def close(self) -> None:
        # A clean stop leaves no WAL behind (the pages it held may hold deleted text),
        # and nothing marked for erasure.
        try:
            self._upkeep.erase()
        except sqlite3.Error:
            log.warning("erasure at close did not finish", exc_info=True)
        self._sqlite_vectors.close()
        self._filters.close()
        self._sqlite_text.close()
        self.db.close()
