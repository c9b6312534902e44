"""SQLite implementation of :class:`graphrecall.store.base.Store`, assembled from parts
that share one :class:`~graphrecall.store.sqlite.connection.Database`:

- ``records.py``: records written, read, filtered, counted, listed (``rows.py`` maps them);
- ``graph.py``: nodes by name, adjacency (cached per graph), degrees;
- ``links.py``: provenance links between records and episodes;
- ``vectors.py``: embeddings and the vector leg (``vector_index.py``: HNSW);
- ``text_search.py``: the lexical leg (FTS5, ``term_index.py``'s in-memory copies, the
  shared ``store/lexical`` BM25);
- ``filtering.py``: filters as masks from the in-memory filter columns;
- ``cursors.py``: search cursors; ``maintenance.py``: compaction and index health.

This class only builds them and answers each method of the interface from one of them.
"""

from __future__ import annotations

import time
from collections.abc import Collection, Sequence
from contextlib import AbstractContextManager
from pathlib import Path
from typing import Any

from graphrecall.domain.models import ApiKey, Node, Page, PageRequest, Record, Task
from graphrecall.domain.predicates import Predicate
from graphrecall.domain.scopes import STANDARD_BM25, Bm25
from graphrecall.store.adjacency import Adjacency
from graphrecall.store.base import Maintenance, R, Scope, Store, Vector
from graphrecall.store.sqlite import queue as task_queue
from graphrecall.store.sqlite import rows as rowmap
from graphrecall.store.sqlite.connection import Database
from graphrecall.store.sqlite.cursors import Cursors
from graphrecall.store.sqlite.filtering import FilterCopies
from graphrecall.store.sqlite.graph import Graphs
from graphrecall.store.sqlite.links import Links
from graphrecall.store.sqlite.maintenance import SQLiteMaintenance
from graphrecall.store.sqlite.records import Records
from graphrecall.store.sqlite.text_search import TextSearch
from graphrecall.store.sqlite.vectors import Vectors


class SQLiteStore(Store):
    def __init__(self, path: Path) -> None:
        self.path = path
        self.db = Database(path)
        self._graphs = Graphs(self.db)
        self._filters = FilterCopies(self.db)
        self._vectors = Vectors(self.db, self._filters)
        self._records = Records(self.db, self._graphs, self._vectors.removed)
        self._links = Links(self.db)
        self._text = TextSearch(self.db, self._filters)
        self._cursors = Cursors(self.db)
        self._maintenance = SQLiteMaintenance(self.db, self._text, self._vectors, self._filters)
        # The in-memory caches, named for tests and benchmarks that inspect them.
        self._term_indexes = self._text.indexes
        self._ann = self._vectors.ann

    def close(self) -> None:
        self._vectors.close()
        self._filters.close()
        self._text.close()
        self.db.close()

    @property
    def maintenance(self) -> Maintenance:
        return self._maintenance

    def transaction(self) -> AbstractContextManager[None]:
        return self.db.transaction()

    def in_transaction(self) -> bool:
        return self.db.in_transaction()

    # -- records ---------------------------------------------------------------------
    def insert(self, records: Sequence[Record]) -> None:
        self._records.insert(records)

    def update(self, record: Record, fields: Collection[str] | None = None) -> None:
        self._records.update(record, fields)

    def get(self, kind: type[R], uuid: str, scope: Scope | None = None) -> R | None:
        return self._records.get(kind, uuid, scope)

    def find(
        self,
        kind: type[R],
        scope: Scope,
        *,
        where: Predicate | None = None,
        order_by: str = "uuid",
        limit: int | None = None,
        descending: bool = False,
    ) -> list[R]:
        return self._records.find(
            kind, scope, where=where, order_by=order_by, limit=limit, descending=descending
        )

    def count(self, kind: type[R], scope: Scope, where: Predicate | None = None) -> int:
        return self._records.count(kind, scope, where)

    def matching(
        self, kind: type[Record], scope: Scope, uuids: Sequence[str], where: Predicate
    ) -> set[str]:
        return self._records.matching(kind, scope, uuids, where)

    def count_by(
        self, kind: type[R], field: str, scope: Scope, where: Predicate | None = None
    ) -> dict[Any, int]:
        return self._records.count_by(kind, field, scope, where)

    def delete(self, kind: type[R], scope: Scope) -> int:
        return self._records.delete(kind, scope)

    def list_page(
        self,
        kind: type[R],
        scope: Scope,
        page: PageRequest,
        *,
        search: str | None = None,
        search_fields: Sequence[str] = (),
        where: Predicate | None = None,
    ) -> Page[R]:
        return self._records.list_page(
            kind, scope, page, search=search, search_fields=search_fields, where=where
        )

    def setting(self, key: str, default: str) -> str:
        return self._records.setting(key, default)

    def find_api_key(self, key_hash: str) -> ApiKey | None:
        return self._records.find_api_key(key_hash)

    # -- the graph's shape -------------------------------------------------------------
    def nodes_named(self, graph_uuid: str, name: str) -> list[Node]:
        return self._graphs.nodes_named(graph_uuid, name)

    def adjacency(self, graph_uuid: str, node_uuids: Sequence[str]) -> list[tuple[str, str, str]]:
        return self._graphs.adjacency(graph_uuid, node_uuids)

    def graph_adjacency(self, graph_uuid: str) -> Adjacency:
        return self._graphs.graph_adjacency(graph_uuid)

    def node_degrees(self, graph_uuid: str, node_uuids: Sequence[str]) -> dict[str, int]:
        return self._graphs.node_degrees(graph_uuid, node_uuids)

    # -- provenance ------------------------------------------------------------------
    def link_episodes(
        self, kind: type[Record], graph_uuid: str, uuid: str, episode_uuids: Sequence[str]
    ) -> None:
        self._links.link_episodes(kind, graph_uuid, uuid, episode_uuids)

    def episodes_of(
        self,
        kind: type[Record],
        graph_uuid: str,
        uuids: Sequence[str],
        *,
        limit: int | None = None,
    ) -> dict[str, tuple[list[str], bool]]:
        return self._links.episodes_of(kind, graph_uuid, uuids, limit=limit)

    def linked_to_episodes(
        self, kind: type[R], graph_uuid: str, episode_uuids: Sequence[str]
    ) -> list[str]:
        return self._links.linked_to_episodes(kind, graph_uuid, episode_uuids)

    def linked_by_episode(
        self, kind: type[Record], graph_uuid: str, episode_uuids: Sequence[str]
    ) -> dict[str, list[str]]:
        return self._links.linked_by_episode(kind, graph_uuid, episode_uuids)

    # -- vectors ---------------------------------------------------------------------
    def set_embeddings(
        self, kind: type[Record], owner_uuid: str, items: Sequence[tuple[str, Vector]]
    ) -> None:
        self._vectors.set_embeddings(kind, owner_uuid, items)

    def get_embeddings(
        self, kind: type[Record], owner_uuid: str, uuids: Sequence[str]
    ) -> dict[str, Vector]:
        return self._vectors.get_embeddings(kind, owner_uuid, uuids)

    def delete_embeddings(self, kind: type[Record], owner_uuid: str, uuids: Sequence[str]) -> None:
        self._vectors.delete_embeddings(kind, owner_uuid, uuids)

    def missing_embeddings(self, kind: type[Record], owner_uuid: str) -> list[str]:
        return self._vectors.missing_embeddings(kind, owner_uuid)

    def vector_search(
        self,
        kind: type[Record],
        owner_uuid: str,
        vector: Vector,
        *,
        scope: Scope,
        where: Predicate | None = None,
        limit: int = 100,
    ) -> list[tuple[str, float]]:
        return self._vectors.vector_search(
            kind, owner_uuid, vector, scope=scope, where=where, limit=limit
        )

    # -- the lexical leg -------------------------------------------------------------
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
        return self._text.text_search(kind, scope, terms, where=where, limit=limit, bm25=bm25)

    # -- search cursors --------------------------------------------------------------
    def save_cursor(
        self, token: str, project_uuid: str, fingerprint: str, results: str, ttl_seconds: int
    ) -> None:
        self._cursors.save_cursor(token, project_uuid, fingerprint, results, ttl_seconds)

    def load_cursor(self, token: str) -> tuple[str, str, str] | None:
        return self._cursors.load_cursor(token)

    # -- task queue ------------------------------------------------------------------
    def claim_run(
        self,
        owner: str,
        *,
        lease_seconds: float,
        batchable: frozenset[str],
        max_tasks: int,
        max_episodes: int,
        background: bool = False,
    ) -> list[Task]:
        with self.db.transaction():
            return task_queue.claim_run(
                self.db.conn,
                lambda row: rowmap.from_row(Task, row),
                owner=owner,
                now=time.time(),
                lease_seconds=lease_seconds,
                batchable=batchable,
                max_tasks=max_tasks,
                max_episodes=max_episodes,
                background=background,
            )

    def renew_leases(self, owner: str, uuids: Sequence[str], lease_seconds: float) -> list[str]:
        with self.db.transaction():
            return task_queue.renew(
                self.db.conn, owner, uuids, now=time.time(), lease_seconds=lease_seconds
            )

    def finish_task(self, task: Task, owner: str) -> bool:
        with self.db.transaction():
            return task_queue.finish(self.db.conn, task, owner)

    def requeue_expired(self) -> int:
        with self.db.transaction():
            return task_queue.requeue_expired(self.db.conn, time.time())
