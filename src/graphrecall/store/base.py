"""The storage interface every backend implements (SQLite now, PostgreSQL next), as small
protocols: records, provenance links, vectors, lexical search, the task queue, search
cursors, and maintenance (kept apart from the core interface: ``Store.maintenance``).

Records are the pydantic models of ``graphrecall.domain.models``. Queries are expressed
with a *scope*: a mapping of field name to value, where a scalar means equality, a list
or tuple means membership and ``None`` means "is null". Nothing above this module knows
which database is underneath.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Collection, Iterator, Mapping, Sequence
from contextlib import AbstractContextManager, nullcontext
from typing import Any, NamedTuple, TypeVar

import numpy as np
import numpy.typing as npt

from graphrecall.domain.models import ApiKey, Edge, Episode, Node, Page, PageRequest, Record, Task
from graphrecall.domain.predicates import Predicate
from graphrecall.domain.scopes import STANDARD_BM25, Bm25
from graphrecall.store.adjacency import Adjacency

R = TypeVar("R", bound=Record)
Scope = Mapping[str, Any]
Vector = npt.NDArray[np.float32]


class RecordRows(ABC):
    """Every record kind written, read, filtered, counted, paged; settings and API keys
    (a backend's records part)."""

    @abstractmethod
    def insert(self, records: Sequence[Record]) -> None: ...

    @abstractmethod
    def update(self, record: Record, fields: Collection[str] | None = None) -> None:
        """Replace the stored row with the same uuid, except its derived fields
        (``derived_fields``: their writers keep them); with ``fields``, write only those."""

    def update_many(self, records: Sequence[Record], fields: Collection[str]) -> None:
        """``update(record, fields)`` for every record (the store wraps the call in one
        transaction). A backend where each statement is a network round trip sends them
        as one batch."""
        for record in records:
            self.update(record, fields)

    @abstractmethod
    def get(self, kind: type[R], uuid: str, scope: Scope | None = None) -> R | None: ...

    @abstractmethod
    def find(
        self,
        kind: type[R],
        scope: Scope,
        *,
        where: Predicate | None = None,
        order_by: str = "uuid",
        limit: int | None = None,
        descending: bool = False,
    ) -> list[R]: ...

    @abstractmethod
    def count(self, kind: type[R], scope: Scope, where: Predicate | None = None) -> int: ...

    @abstractmethod
    def matching(
        self, kind: type[Record], scope: Scope, uuids: Sequence[str], where: Predicate
    ) -> set[str]:
        """Which of ``uuids`` (records of ``kind`` in ``scope``) match ``where``: one
        lookup per uuid, however many records the predicate alone would match."""

    @abstractmethod
    def count_by(
        self, kind: type[R], field: str, scope: Scope, where: Predicate | None = None
    ) -> dict[Any, int]:
        """Number of matching records per distinct value of ``field``."""

    @abstractmethod
    def delete(self, kind: type[R], scope: Scope) -> int:
        """Delete matching records with their embeddings and provenance links."""

    @abstractmethod
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
        """One page ordered by ``page.order_by`` then uuid, with a keyset cursor, so
        every record is returned exactly once across pages even while rows are added.
        ``search`` is a case-insensitive substring matched against ``search_fields``."""

    @abstractmethod
    def setting(self, key: str, default: str) -> str:
        """Read a setting; on first read store ``default`` and return it."""

    @abstractmethod
    def put_setting(self, key: str, value: str) -> None:
        """Store a setting, replacing its value."""

    @abstractmethod
    def find_api_key(self, key_hash: str) -> ApiKey | None: ...


class Exchange(NamedTuple):
    """A message with its neighbours in its thread: ``before`` the last message strictly
    earlier by ``created_at`` (ties: the greatest uuid), ``after`` the first strictly
    later (ties: the least uuid); None at a thread's ends or for an episode without one."""

    message: Episode
    before: Episode | None
    after: Episode | None


class GraphShape(ABC):
    """The graph's shape: nodes by name, adjacency, degrees (a backend's graph part)."""

    @abstractmethod
    def nodes_named(self, graph_uuid: str, name: str) -> list[Node]:
        """Nodes whose name equals ``name`` ignoring case, oldest first."""

    @abstractmethod
    def adjacency(self, graph_uuid: str, node_uuids: Sequence[str]) -> list[tuple[str, str, str]]:
        """(edge uuid, source, target) of the live (unexpired) edges touching the nodes:
        the graph leg's and node-distance's traversal step, without building records."""

    @abstractmethod
    def graph_adjacency(self, graph_uuid: str) -> Adjacency:
        """All live (unexpired) edges of the graph as sparse rows; backends cache it until
        an edge of the graph changes."""

    @abstractmethod
    def node_degrees(self, graph_uuid: str, node_uuids: Sequence[str]) -> dict[str, int]:
        """Count of live (unexpired) edges touching each node, both directions."""

    @abstractmethod
    def exchanges(self, graph_uuid: str, episode_uuids: Sequence[str]) -> list[Exchange]:
        """The graph's episodes among ``episode_uuids``, in that order (each once), with
        the messages before and after each in its thread. Unknown uuids and other graphs'
        episodes are left out."""

    @abstractmethod
    def newest_edges(self, graph_uuid: str, limits: Mapping[str, int]) -> dict[str, list[Edge]]:
        """Each node's newest live (unexpired) edges, from each end: up to its limit with
        the node as source and up to its limit as target (a self-loop once), newest first
        (``created_at``, then ``uuid``, descending); a node with none: []. The facts a
        node's summary is drawn from, for many nodes in one read."""


class Records(RecordRows, GraphShape):
    """Every record kind: written, read, filtered, counted, paged; transactions."""

    @abstractmethod
    def close(self) -> None: ...

    @abstractmethod
    def transaction(self) -> AbstractContextManager[None]:
        """All writes inside commit together or not at all. Nesting joins the outer one."""

    def in_transaction(self) -> bool:
        """Whether the calling thread is inside ``transaction()`` (work must then stay on
        this thread: another one would wait for the transaction to end)."""
        return False

    def iter_all(self, kind: type[R], scope: Scope, batch: int = 500) -> Iterator[R]:
        page = PageRequest(page_size=batch, order="asc")
        while True:
            result = self.list_page(kind, scope, page)
            yield from result.items
            if not result.next_cursor:
                return
            page = page.model_copy(update={"cursor": result.next_cursor})


class Provenance(ABC):
    """Which episodes mention a node, or support an edge or observation."""

    @abstractmethod
    def link_episodes(
        self, kind: type[Record], graph_uuid: str, uuid: str, episode_uuids: Sequence[str]
    ) -> None:
        """Record that episodes mention a node, or support an edge or observation."""

    @abstractmethod
    def episodes_of(
        self,
        kind: type[Record],
        graph_uuid: str,
        uuids: Sequence[str],
        *,
        limit: int | None = None,
    ) -> dict[str, tuple[list[str], bool]]:
        """Episode uuids linked to each record of the graph, newest first, and whether
        truncated (a record of another graph has none)."""

    @abstractmethod
    def linked_to_episodes(
        self, kind: type[R], graph_uuid: str, episode_uuids: Sequence[str]
    ) -> list[str]:
        """Uuids of the graph's records of ``kind`` linked to any of the episodes."""

    @abstractmethod
    def linked_by_episode(
        self, kind: type[Record], graph_uuid: str, episode_uuids: Sequence[str]
    ) -> dict[str, list[str]]:
        """Uuids of the graph's records of ``kind`` linked to each of the episodes (an
        episode linked to none is absent)."""


class Vectors(ABC):
    """Embeddings per owner and the vector leg."""

    @abstractmethod
    def set_embeddings(
        self, kind: type[Record], owner_uuid: str, items: Sequence[tuple[str, Vector]]
    ) -> None: ...

    @abstractmethod
    def get_embeddings(
        self, kind: type[Record], owner_uuid: str, uuids: Sequence[str]
    ) -> dict[str, Vector]:
        """The vectors of those of ``uuids`` stored for ``owner_uuid`` (its graph, or its
        space for memories); a record without one is absent."""

    @abstractmethod
    def delete_embeddings(self, kind: type[Record], owner_uuid: str, uuids: Sequence[str]) -> None:
        """Forget the owner's vectors of these records (their text changed; a new one is
        coming)."""

    @abstractmethod
    def missing_embeddings(self, kind: type[Record], owner_uuid: str) -> list[str]:
        """Uuids of records of ``kind`` in ``owner_uuid`` that have no vector yet."""

    @abstractmethod
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
        """Exact cosine similarity (vectors are normalised) over the owner's records that
        match ``scope`` and ``where``, best first, as (uuid, similarity)."""

    def prefetch_vectors(self, kind: type[Record], owner_uuid: str) -> None:
        """Start reading the owner's vectors of ``kind`` into memory, apart, when its
        next ``vector_search`` would have to (an owner not searched lately), so that the
        read overlaps the query's embedding; a backend with nothing to read ahead does
        nothing."""
        return None


class LexicalSearch(ABC):
    """The lexical leg: BM25 over a scope's indexed text."""

    @abstractmethod
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
        """BM25 (stemmed) over the kind's text: the ``limit`` records matching any term
        that standard BM25 ranks best (k1 1.2, b 0.75: the index's own), scored with
        ``bm25``'s constants and ordered by that score (ties by uuid), as (uuid, score)
        with higher = better. Only real term matches. (A query with a term the index
        splits into a phrase keeps the standard scores.)"""


class TaskQueue(ABC):
    """Durable ingestion tasks. Any number of worker processes may share a store: claiming
    is atomic per backend (SQLite: one BEGIN IMMEDIATE transaction; Postgres: FOR UPDATE
    SKIP LOCKED), and a claimed task is held under a lease its worker renews; an expired
    lease is taken over."""

    @abstractmethod
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
        """Atomically take the oldest pending task whose graph has no task in progress,
        and the same graph's next pending tasks of a ``batchable`` type after it (in
        order, up to ``max_tasks`` tasks and ``max_episodes`` payload episodes); they
        become ``processing``, leased to ``owner`` for ``lease_seconds``. Tasks whose lease
        expired are first put back to pending. Empty when nothing can be taken now.

        Live tasks (``Task.priority`` 0) are taken, or with ``background`` background ones
        (1) instead. Tracking tasks (-1) are never claimed, requeued, nor make their graph
        busy."""

    @abstractmethod
    def renew_leases(self, owner: str, uuids: Sequence[str], lease_seconds: float) -> list[str]:
        """Extend ``owner``'s leases on these tasks; returns the uuids it still holds."""

    @abstractmethod
    def finish_task(self, task: Task, owner: str) -> bool:
        """Record the end of a task ``owner`` holds (its status, stage, result, error and
        times) and release the lease; False, writing nothing, if the lease was lost."""

    @abstractmethod
    def requeue_expired(self) -> int:
        """Put tasks whose lease expired back to ``pending``; returns how many. (A live
        worker's tasks are left alone.)"""


class Cursors(ABC):
    """Ranked result lists kept for later pages."""

    @abstractmethod
    def save_cursor(
        self, token: str, project_uuid: str, fingerprint: str, results: str, ttl_seconds: int
    ) -> None: ...

    @abstractmethod
    def load_cursor(self, token: str) -> tuple[str, str, str] | None:
        """(project_uuid, fingerprint, results) of an unexpired cursor, else None."""


class Maintenance:
    """Health and upkeep of a backend's indexes and caches; a backend that keeps none
    inherits these no-ops."""

    def vector_index_status(self) -> dict[str, int]:
        """Approximate vector indexes: how many are ``ready`` and how many ``building``
        (empty for a backend that builds none)."""
        return {}

    def text_index_status(self) -> dict[str, int]:
        """In-memory copies of full-text indexes: how many are ``ready`` and how many
        ``building`` (empty for a backend that keeps none)."""
        return {}

    def filter_column_status(self) -> dict[str, int]:
        """In-memory copies of the columns filters test: how many are ``ready`` and how
        many ``building`` (empty for a backend that keeps none)."""
        return {}

    def compact_text_indexes(self) -> bool:
        """One bounded step of compacting the full-text indexes; True when it did work
        (call again while idle), False when none needs it. A store whose index needs no
        compaction does nothing."""
        return False

    def refresh_text_indexes(self) -> None:
        """Start bringing stale in-memory copies of full-text indexes up to date in the
        background (an idle worker calls it once writes have stopped); a backend that keeps
        none does nothing."""
        return None

    def cache_status(self) -> dict[str, dict[str, int]]:
        """The in-process caches of the store, each with what it holds (entries, bytes)
        and, where counted, its hits and misses (for ``/healthz`` and ``bench cold``); a
        store that caches nothing in the process returns ``{}``."""
        return {}

    def wait_until_warm(self, timeout: float = 120.0) -> bool:
        """Start building the in-memory copies a warm store has and wait for them (for
        tests and benchmarks, which should time a warm store); True when none is still
        being built after ``timeout`` seconds."""
        return True

    def wait_for_saved_copies(self, timeout: float) -> bool:
        """Wait until the copies being read from their saved images (started by
        ``wait_until_warm``) are read: a server does before it listens, so its first
        searches find them (copies read whole are never waited for). False when one is
        still being read after ``timeout`` seconds."""
        return True

    def bulk_load(self) -> AbstractContextManager[None]:
        """A load of many records (benchmark builds): inside it the per-row upkeep of the
        indexes may be suspended, and on leaving it what that upkeep keeps is computed from
        the rows at once. Only inserts may happen inside it; searches after it answer as if
        every row had been inserted one by one. A backend with no such upkeep does nothing."""
        return nullcontext()

    def mark_erasure(self, tables: Collection[str]) -> None:
        """Inside the deleting transaction: the bytes of rows deleted from ``tables`` are
        to be erased from every file the store writes. The mark commits with the delete,
        so an erasure a crash interrupted is finished by the next :meth:`erase` (a store
        erases what is marked when it opens and when it closes)."""
        return None

    def erase(self) -> dict[str, Any]:
        """Outside a transaction: erase what :meth:`mark_erasure` marked, from the
        database's files, its full-text and saved index copies and its log, before
        returning; the receipt says what was done and when (never what was erased). A
        store that keeps no files returns ``{}``."""
        return {}

    def warm(self, field: str, owner_uuid: str) -> dict[str, int]:
        """Load now the in-memory copies a search of one owner reads (``field`` names
        the owner: ``graph_uuid`` for a graph), and start building the shared ones
        (``graph.warm``: the first search after a restart, or after the owner's copies
        were evicted, then finds them ready).
        Returns what it loaded and what is still being built, by copy; a store that keeps
        no copies in the process returns ``{}``."""
        return {}


class Store(Records, Provenance, Vectors, LexicalSearch, TaskQueue, Cursors):
    """Persistence for every record kind, provenance links, embeddings and the task queue."""

    @property
    def maintenance(self) -> Maintenance:
        """The backend's upkeep hooks (a no-op one unless it keeps indexes to tend)."""
        return Maintenance()
