"""Writing episodes, edges and nodes together with what they are searched and sorted by.

An episode's ``search_context``, ``search_replies`` and ``search_facts`` and a node's
``degree`` derive from other records (``indexed_text.py``, ``degree.py``). The writers
here compute them and write them as ordinary columns, and bring up to date the records
whose values a write moves:

- a message inserted gets its context and reply, becomes its predecessor's reply and part
  of the next messages' context; a message deleted or rewritten leaves them;
- an edge inserted, deleted, expired, brought back or moved to other ends or another graph
  moves the degree of its ends; a node inserted after edges that name it counts them;
- a link from an episode to an edge, an edge deleted (its links with it), an edge inserted
  after its links or its fact rewritten changes the facts of the episodes linked to it.

Each call is one transaction (joining the caller's), reading the current rows inside it,
so concurrent writers cannot lose each other's changes. ``Store.update`` leaves derived
fields alone: only these writers set them. Deleting a whole graph needs none of this.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Collection, Iterable, Sequence
from typing import Any

from graphrecall.domain.models import (
    DocumentSummary,
    Edge,
    Episode,
    EpisodeDebugLog,
    Hyperedge,
    IngestionTrace,
    Node,
)
from graphrecall.domain.predicates import And, Column, Predicate
from graphrecall.graph_model.degree import NodeKey, degree_changes
from graphrecall.graph_model.indexed_text import CONTEXT_MESSAGES, facts_text, thread_texts
from graphrecall.store.base import Scope, Store

# -- episodes ----------------------------------------------------------------------------


def insert_episodes(store: Store, episodes: Sequence[Episode]) -> list[Episode]:
    """Insert episodes with their search texts (the facts of links written before them
    too) and update their thread neighbours'; returns the episodes as stored."""
    if not episodes:
        return []
    with store.transaction():
        facts: dict[str, str | None] = {}
        for graph_uuid in {e.graph_uuid for e in episodes}:
            mine = [e.uuid for e in episodes if e.graph_uuid == graph_uuid]
            linked = store.linked_by_episode(Edge, graph_uuid, mine)
            facts |= _facts(store, graph_uuid, linked)
        rows = [
            e.model_copy(
                update={
                    "search_context": None,
                    "search_replies": None,
                    "search_facts": facts.get(e.uuid),
                }
            )
            for e in episodes
        ]
        texts: dict[str, dict[str, str | None]] = {}
        stored: list[Episode] = []
        for (graph_uuid, thread_uuid), new in _by_thread(rows).items():
            first, last = min(e.created_at for e in new), max(e.created_at for e in new)
            window = _thread_window(store, graph_uuid, thread_uuid, first, last, new)
            texts |= window[0]
            stored += window[1]
        rows = [e.model_copy(update=texts.get(e.uuid, {})) for e in rows]
        store.insert(rows)
        _write_texts(store, stored, texts)
    return rows


def rewrite_episode(store: Store, episode: Episode) -> None:
    """Update an episode; when its speaker or words changed, the messages around it in
    its thread (its predecessor's reply, the next messages' context) follow."""
    with store.transaction():
        before = store.get(Episode, episode.uuid, {"graph_uuid": episode.graph_uuid})
        store.update(episode)
        if before is not None and (before.content, before.role_name) != (
            episode.content,
            episode.role_name,
        ):
            _refresh_around(store, [before])


def delete_episodes(store: Store, graph_uuid: str, uuids: Sequence[str]) -> int:
    """Delete episodes of a graph (their links with them); the messages around them in
    their threads no longer hold their words. Returns how many were deleted."""
    with store.transaction():
        gone = store.find(Episode, {"graph_uuid": graph_uuid, "uuid": list(uuids)})
        deleted = store.delete(Episode, {"graph_uuid": graph_uuid, "uuid": list(uuids)})
        _refresh_around(store, gone)
        # What ingestion recorded about them goes with them (ingest/trace.py), and so
        # does the summary of a document none of whose episodes remain.
        store.delete(EpisodeDebugLog, {"graph_uuid": graph_uuid, "uuid": list(uuids)})
        store.delete(IngestionTrace, {"graph_uuid": graph_uuid, "episode_uuid": list(uuids)})
        for document_id in sorted({e.document_id for e in gone if e.document_id}):
            scope = {"graph_uuid": graph_uuid, "document_id": document_id}
            if store.count(Episode, scope) == 0:
                store.delete(DocumentSummary, scope)
    return deleted


def _by_thread(episodes: Iterable[Episode]) -> dict[tuple[str, str], list[Episode]]:
    out: dict[tuple[str, str], list[Episode]] = {}
    for e in episodes:
        if e.thread_uuid is not None:
            out.setdefault((e.graph_uuid, e.thread_uuid), []).append(e)
    return out


def _thread_window(
    store: Store,
    graph_uuid: str,
    thread_uuid: str,
    first: str,
    last: str,
    new: Sequence[Episode] = (),
) -> tuple[dict[str, dict[str, str | None]], list[Episode]]:
    """The stored messages of a thread from CONTEXT_MESSAGES before ``first`` to
    CONTEXT_MESSAGES after ``last`` (``created_at``), with ``new`` (messages being inserted)
    among them, and their search texts as far as the window determines them: those of every
    message whose texts a write between ``first`` and ``last`` moves. Returns (uuid ->
    texts, the stored messages)."""
    scope = {"graph_uuid": graph_uuid, "thread_uuid": thread_uuid}

    def find(where: Predicate, descending: bool = False, limit: int | None = None) -> list[Any]:
        return store.find(
            Episode, scope, where=where, order_by="created_at", descending=descending, limit=limit
        )

    before = find(Column("created_at", "lt", first), True, CONTEXT_MESSAGES)
    inside = find(And((Column("created_at", "gte", first), Column("created_at", "lte", last))))
    after = find(Column("created_at", "gt", last), False, CONTEXT_MESSAGES)
    inserted = {e.uuid for e in new}
    stored = [e for e in [*before, *inside, *after] if e.uuid not in inserted]
    texts = thread_texts(
        [*stored, *new],
        from_start=len(before) < CONTEXT_MESSAGES,
        to_end=len(after) < CONTEXT_MESSAGES,
    )
    return texts, stored


def _refresh_around(store: Store, changed: Sequence[Episode]) -> None:
    """Bring up to date the texts of the stored messages around ``changed`` (messages as
    they were before being deleted or rewritten)."""
    for message in changed:
        if message.thread_uuid is None:
            continue
        stamp = message.created_at
        texts, stored = _thread_window(store, message.graph_uuid, message.thread_uuid, stamp, stamp)
        _write_texts(store, stored, texts)


def _write_texts(
    store: Store, stored: Sequence[Episode], texts: dict[str, dict[str, str | None]]
) -> None:
    """Write the texts of stored episodes that changed (an unchanged text is not written:
    each write re-indexes the row); those that change the same fields in one batch."""
    batches: dict[tuple[str, ...], list[Episode]] = {}
    for episode in stored:
        fields = {
            name: value
            for name, value in texts.get(episode.uuid, {}).items()
            if getattr(episode, name) != value
        }
        if fields:
            batches.setdefault(tuple(fields), []).append(episode.model_copy(update=fields))
    for names, episodes in batches.items():
        store.update_many(episodes, fields=names)


# -- facts -------------------------------------------------------------------------------


def refresh_facts(store: Store, graph_uuid: str, episode_uuids: Collection[str]) -> None:
    """Bring up to date ``search_facts`` of episodes of a graph whose links or linked edges
    changed."""
    if not episode_uuids:
        return
    with store.transaction():
        episodes = store.find(Episode, {"graph_uuid": graph_uuid, "uuid": sorted(episode_uuids)})
        linked = store.linked_by_episode(Edge, graph_uuid, [e.uuid for e in episodes])
        facts = _facts(store, graph_uuid, linked)
        changed = [
            e.model_copy(update={"search_facts": facts.get(e.uuid)})
            for e in episodes
            if e.search_facts != facts.get(e.uuid)
        ]
        store.update_many(changed, fields=("search_facts",))


def link_facts(store: Store, graph_uuid: str, edge_uuid: str, episode_uuids: Sequence[str]) -> None:
    """Link an edge to the episodes it was extracted from (or restated by)."""
    with store.transaction():
        store.link_episodes(Edge, graph_uuid, edge_uuid, episode_uuids)
        refresh_facts(store, graph_uuid, set(episode_uuids))


def _facts(store: Store, graph_uuid: str, linked: dict[str, list[str]]) -> dict[str, str | None]:
    """episode uuid -> its ``search_facts``, from the edge uuids linked to each."""
    wanted = sorted({u for uuids in linked.values() for u in uuids})
    if not wanted:
        return {}
    edges = {e.uuid: e for e in store.find(Edge, {"graph_uuid": graph_uuid, "uuid": wanted})}
    return {
        episode: facts_text(edges[u] for u in uuids if u in edges)
        for episode, uuids in linked.items()
    }


# -- edges and nodes ---------------------------------------------------------------------


def insert_edges(store: Store, edges: Sequence[Edge]) -> None:
    """Insert edges: their ends' degrees move, and episodes linked to them before they
    existed get their facts."""
    if not edges:
        return
    with store.transaction():
        store.insert(edges)
        changes: Counter[NodeKey] = Counter()
        for edge in edges:
            changes.update(degree_changes(None, edge))
        _move_degrees(store, changes)
        _refresh_facts_of(store, edges)


def update_edge(store: Store, edge: Edge) -> None:
    """Update an edge: expiring it, bringing it back or moving it moves degrees; a new
    fact changes the facts of its episodes."""
    with store.transaction():
        before = store.get(Edge, edge.uuid)
        store.update(edge)
        if before is None:
            return
        _move_degrees(store, degree_changes(before, edge))
        if before.fact != edge.fact or before.graph_uuid != edge.graph_uuid:
            _refresh_facts_of(store, [before, edge])


def delete_edges(store: Store, graph_uuid: str, scope: Scope) -> int:
    """Delete the edges of a graph in ``scope`` (their links with them): their ends'
    degrees move and their episodes lose their facts. Returns how many were deleted."""
    scope = {**scope, "graph_uuid": graph_uuid}
    with store.transaction():
        edges = store.find(Edge, scope)
        if not edges:
            return 0
        linked = store.episodes_of(Edge, graph_uuid, [e.uuid for e in edges])
        deleted = store.delete(Edge, {"graph_uuid": graph_uuid, "uuid": [e.uuid for e in edges]})
        changes: Counter[NodeKey] = Counter()
        for edge in edges:
            changes.update(degree_changes(edge, None))
        _move_degrees(store, changes)
        refresh_facts(store, graph_uuid, {u for uuids, _ in linked.values() for u in uuids})
        _drop_empty_hyperedges(store, graph_uuid, {e.hyperedge_uuid for e in edges})
    return deleted


def _drop_empty_hyperedges(store: Store, graph_uuid: str, uuids: set[str | None]) -> None:
    """A hyperedge lives while it has a member edge: forget those that lost their last."""
    candidates = [u for u in uuids if u is not None]
    if not candidates:
        return
    left = store.count_by(
        Edge, "hyperedge_uuid", {"graph_uuid": graph_uuid, "hyperedge_uuid": candidates}
    )
    empty = [u for u in candidates if not left.get(u)]
    if empty:
        store.delete(Hyperedge, {"graph_uuid": graph_uuid, "uuid": empty})


def insert_nodes(store: Store, nodes: Sequence[Node]) -> list[Node]:
    """Insert nodes, each counting the live edges that already name it; returns the nodes
    as stored."""
    if not nodes:
        return []
    with store.transaction():
        counted: Counter[NodeKey] = Counter()
        for graph_uuid in sorted({n.graph_uuid for n in nodes}):
            mine = sorted(n.uuid for n in nodes if n.graph_uuid == graph_uuid)
            for end in ("source_node_uuid", "target_node_uuid"):  # one query per end
                scope = {"graph_uuid": graph_uuid, end: mine, "expired_at": None}
                for uuid, n in store.count_by(Edge, end, scope).items():
                    counted[graph_uuid, uuid] += n
        rows = [n.model_copy(update={"degree": counted[n.graph_uuid, n.uuid]}) for n in nodes]
        store.insert(rows)
    return rows


def _move_degrees(store: Store, changes: Counter[NodeKey]) -> None:
    for graph_uuid in sorted({graph for graph, _ in changes}):
        wanted = sorted(node for graph, node in changes if graph == graph_uuid)
        moved = [
            node.model_copy(update={"degree": node.degree + changes[graph_uuid, node.uuid]})
            for node in store.find(Node, {"graph_uuid": graph_uuid, "uuid": wanted})
        ]
        store.update_many(moved, fields=("degree",))


def _refresh_facts_of(store: Store, edges: Sequence[Edge]) -> None:
    """Refresh the facts of the episodes linked to ``edges``."""
    for graph_uuid in sorted({e.graph_uuid for e in edges}):
        mine = sorted({e.uuid for e in edges if e.graph_uuid == graph_uuid})
        linked = store.episodes_of(Edge, graph_uuid, mine)
        refresh_facts(store, graph_uuid, {u for uuids, _ in linked.values() for u in uuids})
