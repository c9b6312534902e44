"""PostgreSQL implementation of :class:`graphrecall.store.base.Store`: the parts below
share one :class:`~graphrecall.store.postgres.connection.Database` (a psycopg connection
pool), and :class:`~graphrecall.store.assembled.AssembledStore` answers each method of the
interface from one of them.

- ``records.py``: records written, read, filtered, counted, listed (``rows.py`` maps them,
  ``predicates.py`` compiles filters);
- ``graph.py``: nodes by name, adjacency, degrees, and provenance links;
- ``vectors.py``: embeddings (pgvector) and the vector leg (``vector_copies.py``: the
  owners' in-memory matrices, caught up from the vector change log);
- ``text_search.py``: the lexical leg (``tokens.py``: FTS5's tokenizer; shared BM25);
- ``queue.py``: the task queue's statements (``FOR UPDATE SKIP LOCKED``; ``store/queue.py``
  claims); search cursors: ``store/cursors.py``; ``maintenance.py``: the in-memory
  copies' health and the change logs' pruning.

``postgresql://user@host:port/db`` opens it; ``?schema=NAME`` keeps its tables in a
schema of their own. Migrations (``migrations.py``) run on open under an advisory lock.
"""

from __future__ import annotations

from graphrecall.store.assembled import AssembledStore
from graphrecall.store.cursors import SqlCursors
from graphrecall.store.postgres.connection import Database
from graphrecall.store.postgres.graph import Graphs
from graphrecall.store.postgres.links import Links
from graphrecall.store.postgres.maintenance import PostgresMaintenance
from graphrecall.store.postgres.migrations import migrate
from graphrecall.store.postgres.queue import PostgresQueue
from graphrecall.store.postgres.records import Records
from graphrecall.store.postgres.text_search import TextSearch
from graphrecall.store.postgres.tokens import Tokenizer
from graphrecall.store.postgres.vectors import Vectors


class PostgresStore(AssembledStore):
    def __init__(self, url: str) -> None:
        self.db = Database(url)
        self.db.open()
        try:
            with self.db.pool.connection() as conn:
                migrate(conn, self.db.schema)
        except BaseException:
            self.db.close()
            raise
        self._tokenizer = Tokenizer()
        self._lexical = TextSearch(self.db, self._tokenizer)
        self._pgvectors = Vectors(self.db)
        upkeep = PostgresMaintenance(self._lexical, self._pgvectors.copies)
        super().__init__(
            transactions=self.db,
            records=Records(self.db, self._tokenizer),
            graphs=Graphs(self.db),
            links=Links(self.db),
            vectors=self._pgvectors,
            text=self._lexical,
            queue=PostgresQueue(self.db),
            cursors=SqlCursors(self.db, "%s"),
            maintenance=upkeep,
        )
        # An erasure a crash interrupted (its delete committed, its mark with it).
        if upkeep.pending_erasure():
            upkeep.erase()

    def close(self) -> None:
        self._lexical.close()
        self._pgvectors.close()
        self.db.close()
        self._tokenizer.close()
