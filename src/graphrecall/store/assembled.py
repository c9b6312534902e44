"""A :class:`~graphrecall.store.base.Store` assembled from parts, one per protocol of
``base.py``: records, the graph's shape, provenance, vectors, the lexical leg, the task
queue, search cursors and maintenance. It answers each method of the interface from the
part that owns it; a backend (``SQLiteStore``, ``PostgresStore``) only builds its parts,
hands them over here, and says how to close them.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from contextlib import AbstractContextManager
from typing import Any, Protocol

from graphrecall.domain.models import ApiKey, Edge, Node, Page, PageRequest, Record, Task
from graphrecall.domain.predicates import Predicate
from graphrecall.domain.scopes import STANDARD_BM25, Bm25
from graphrecall.store.adjacency import Adjacency
from graphrecall.store.base import (
    Cursors,
    Exchange,
    GraphShape,
    LexicalSearch,
    Maintenance,
    Provenance,
    R,
    RecordRows,
    Scope,
    Store,
    TaskQueue,
    Vector,
    Vectors,
)


class Transactions(Protocol):
    def transaction(self) -> AbstractContextManager[None]: ...

    def in_transaction(self) -> bool: ...


class AssembledStore(Store):
    def __init__(
        self,
        *,
        transactions: Transactions,
        records: RecordRows,
        graphs: GraphShape,
        links: Provenance,
        vectors: Vectors,
        text: LexicalSearch,
        queue: TaskQueue,
        cursors: Cursors,
        maintenance: Maintenance | None = None,
    ) -> None:
        self._transactions = transactions
        self._records = records
        self._graphs = graphs
        self._links = links
        self._vectors = vectors
        self._text = text
        self._queue = queue
        self._cursors = cursors
        self._maintenance = maintenance or Maintenance()

    @property
    def maintenance(self) -> Maintenance:
        return self._maintenance

    def transaction(self) -> AbstractContextManager[None]:
        return self._transactions.transaction()

    def in_transaction(self) -> bool:
        return self._transactions.in_transaction()

    # -- records ---------------------------------------------------------------------
    def insert(self, records: Sequence[Record]) -> None:
        self._records.insert(records)

    def update(self, record: Record, fields: Collection[str] | None = None) -> None:
        self._records.update(record, fields)

    def update_many(self, records: Sequence[Record], fields: Collection[str]) -> None:
        with self.transaction():
            self._records.update_many(records, fields)

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

    def put_setting(self, key: str, value: str) -> None:
        self._records.put_setting(key, value)

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

    def exchanges(self, graph_uuid: str, episode_uuids: Sequence[str]) -> list[Exchange]:
        return self._graphs.exchanges(graph_uuid, episode_uuids)

    def newest_edges(self, graph_uuid: str, limits: Mapping[str, int]) -> dict[str, list[Edge]]:
        return self._graphs.newest_edges(graph_uuid, limits)

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

    def prefetch_vectors(self, kind: type[Record], owner_uuid: str) -> None:
        self._vectors.prefetch_vectors(kind, owner_uuid)

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
        return self._queue.claim_run(
            owner,
            lease_seconds=lease_seconds,
            batchable=batchable,
            max_tasks=max_tasks,
            max_episodes=max_episodes,
            background=background,
        )

    def renew_leases(self, owner: str, uuids: Sequence[str], lease_seconds: float) -> list[str]:
        return self._queue.renew_leases(owner, uuids, lease_seconds)

    def finish_task(self, task: Task, owner: str) -> bool:
        return self._queue.finish_task(task, owner)

    def requeue_expired(self) -> int:
        return self._queue.requeue_expired()
