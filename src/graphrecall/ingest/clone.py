"""Copying a graph into a new one (the ``graph.clone`` task; services/graph/graphs.clone_graph
creates the empty target and queues it).

Every record of the source graph (nodes, edges, episodes, observations, thread
summaries) is written to the target with a new uuid and the same content, with its
embeddings and provenance links, and every reference between them (an edge's ends, a
link's episodes) follows the new uuids. New uuids are made in the source's uuid order, so
lists ordered by uuid keep their order. What records are searched by is copied as it was
(the same content gives the same derived text and degrees).

The task holds the target graph (the queue runs one task per graph at a time), so work
sent to the clone meanwhile waits for the copy. A redone task (after a crash) first
empties the target, then copies again.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from graphrecall.domain.ids import new_id
from graphrecall.domain.models import (
    DocumentSummary,
    Edge,
    Episode,
    Hyperedge,
    Node,
    Observation,
    Record,
    Task,
    ThreadSummary,
)
from graphrecall.ingest.context import IngestContext
from graphrecall.store.base import Store

CLONE_TASK = "graph.clone"
PAGE = 500
# Episodes first: the links of the others point at them; nodes and hyperedges before the
# edges on them.
KINDS: tuple[type[Record], ...] = (
    Episode,
    Node,
    Hyperedge,
    Edge,
    Observation,
    ThreadSummary,
    DocumentSummary,
)
LINKED: tuple[type[Record], ...] = (Node, Edge, Observation)


def _copy_page(
    store: Store,
    kind: type[Record],
    source: str,
    target: str,
    records: Sequence[Any],
    new: dict[str, str],
) -> None:
    for record in records:
        new[record.uuid] = new_id()
    copies = []
    for record in records:
        update: dict[str, Any] = {"uuid": new[record.uuid], "graph_uuid": target}
        if isinstance(record, Edge):
            update["source_node_uuid"] = new[record.source_node_uuid]
            update["target_node_uuid"] = new[record.target_node_uuid]
            if record.hyperedge_uuid is not None:
                update["hyperedge_uuid"] = new[record.hyperedge_uuid]
        copies.append(record.model_copy(update=update))
    uuids = [r.uuid for r in records]
    with store.transaction():
        store.insert(copies)
        vectors = store.get_embeddings(kind, source, uuids)
        if vectors:
            store.set_embeddings(kind, target, [(new[u], v) for u, v in vectors.items()])
        if kind in LINKED:
            for uuid, (episodes, _) in store.episodes_of(kind, source, uuids).items():
                mapped = [new[e] for e in episodes if e in new]
                if mapped:
                    store.link_episodes(kind, target, new[uuid], mapped)


def clone_graph(ctx: IngestContext, task: Task) -> dict[str, Any]:
    """The ``graph.clone`` handler: copy ``payload.source_graph_uuid`` into the task's
    graph."""
    store = ctx.store
    source, target = task.payload["source_graph_uuid"], task.graph_uuid
    assert target is not None
    with store.transaction():  # a redo starts from an empty target
        for kind in KINDS:
            store.delete(kind, {"graph_uuid": target})
    new: dict[str, str] = {}  # source uuid -> copy's uuid, every kind (episodes first)
    counts: dict[str, int] = {}
    for kind in KINDS:
        page: list[Record] = []
        for record in store.iter_all(kind, {"graph_uuid": source}, batch=PAGE):
            page.append(record)
            if len(page) == PAGE:
                _copy_page(store, kind, source, target, page, new)
                page = []
        if page:
            _copy_page(store, kind, source, target, page, new)
        counts[kind.__name__] = store.count(kind, {"graph_uuid": target})
    # (Not under ``edges``/``episodes``: the SDK reads those result fields as uuid lists.)
    return {"graph_uuid": target, "source_graph_uuid": source, "copied": counts}
