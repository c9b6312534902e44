"""Document expansion: a message is full-text indexed with the facts extracted from it, so
a question phrased like a fact ("Caroline adopted a greyhound") finds the message that
said it in the first person ("We got a rescue dog, a greyhound!")."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from graphrecall.domain.models import Edge, Episode
from graphrecall.graph_model.graph_writes import (
    delete_edges,
    insert_edges,
    insert_episodes,
    link_facts,
    update_edge,
)
from graphrecall.store import Store, open_store
from graphrecall.store.sqlite.migrations import MIGRATIONS, migrate

GRAPH = "g-1"
STAMP = "2026-01-01T00:00:00.000000Z"


def _message(n: int, text: str) -> Episode:
    return Episode(
        uuid=f"ep-{n}",
        graph_uuid=GRAPH,
        content=text,
        source="message",
        role="user",
        role_name="Caroline",
        reference_time=STAMP,
        created_at=f"2026-01-01T00:00:{n:02d}.000000Z",
        thread_uuid="t-1",
    )


def _edge(n: int, fact: str) -> Edge:
    return Edge(
        uuid=f"edge-{n}",
        graph_uuid=GRAPH,
        name="ADOPTS",
        fact=fact,
        source_node_uuid="n-1",
        target_node_uuid="n-2",
        created_at=f"2026-01-01T00:01:{n:02d}.000000Z",
        updated_at=STAMP,
    )


def _found(store: Store, *terms: str) -> list[str]:
    return [u for u, _ in store.text_search(Episode, {"graph_uuid": GRAPH}, list(terms))]


def _integrity(path: Path) -> None:
    conn = sqlite3.connect(path)
    conn.execute("INSERT INTO episodes_fts(episodes_fts, rank) VALUES ('integrity-check', 1)")
    conn.close()


def test_facts_linked_to_a_message_make_it_findable(store: Store, tmp_path: Path) -> None:
    insert_episodes(
        store, [_message(1, "We got a rescue dog!"), _message(2, "Lovely weather today.")]
    )
    assert _found(store, "adopted") == []
    insert_edges(store, [_edge(1, "Caroline adopted a greyhound")])
    link_facts(store, GRAPH, "edge-1", ["ep-1"])
    assert _found(store, "adopted") == ["ep-1"]
    # A restatement links the same fact to a second message.
    link_facts(store, GRAPH, "edge-1", ["ep-2"])
    assert sorted(_found(store, "greyhound")) == ["ep-1", "ep-2"]
    _integrity(tmp_path / "db.sqlite")


def test_the_expansion_follows_edits_and_deletes(store: Store, tmp_path: Path) -> None:
    insert_episodes(store, [_message(1, "We got a rescue dog!")])
    insert_edges(
        store, [_edge(1, "Caroline adopted a greyhound"), _edge(2, "Caroline owns a leash")]
    )
    link_facts(store, GRAPH, "edge-1", ["ep-1"])
    link_facts(store, GRAPH, "edge-2", ["ep-1"])
    assert _found(store, "leash") == ["ep-1"]
    edited = store.get(Edge, "edge-1")
    assert edited is not None
    update_edge(store, edited.model_copy(update={"fact": "Caroline adopted a whippet"}))
    assert _found(store, "greyhound") == [] and _found(store, "whippet") == ["ep-1"]
    delete_edges(store, GRAPH, {"uuid": "edge-2"})
    assert _found(store, "leash") == [] and _found(store, "whippet") == ["ep-1"]
    # The message's own words stay indexed throughout.
    assert _found(store, "rescue") == ["ep-1"]
    _integrity(tmp_path / "db.sqlite")


def test_a_link_written_before_its_edge_still_counts(store: Store) -> None:
    insert_episodes(store, [_message(1, "We got a rescue dog!")])
    with store.transaction():
        link_facts(store, GRAPH, "edge-1", ["ep-1"])
        insert_edges(store, [_edge(1, "Caroline adopted a greyhound")])
    assert _found(store, "greyhound") == ["ep-1"]


def test_migration_indexes_the_facts_of_existing_messages(tmp_path: Path) -> None:
    path = tmp_path / "old.sqlite"
    conn = sqlite3.connect(path, isolation_level=None)
    assert migrate(conn, 9) == conn.execute("PRAGMA user_version").fetchone()[0] == 9
    conn.execute(
        "INSERT INTO episodes (uuid, graph_uuid, content, source, role, role_name,"
        " reference_time, created_at, thread_uuid) VALUES (?,?,?,?,?,?,?,?,?)",
        ["ep-1", GRAPH, "We got a rescue dog!", "message", "user", "Caroline", STAMP, STAMP, "t"],
    )
    edge = _edge(1, "Caroline adopted a greyhound")
    conn.execute(
        "INSERT INTO edges (uuid, graph_uuid, name, fact, source_node_uuid, target_node_uuid,"
        " created_at, updated_at) VALUES (?,?,?,?,?,?,?,?)",
        [edge.uuid, GRAPH, edge.name, edge.fact, "n-1", "n-2", edge.created_at, STAMP],
    )
    conn.execute("INSERT INTO links VALUES ('edges', ?, 'edge-1', 'ep-1')", [GRAPH])
    assert migrate(conn) == len(MIGRATIONS)
    assert conn.execute("SELECT search_facts FROM episodes").fetchone()[0] == edge.fact
    conn.close()
    _integrity(path)
    s = open_store(path)
    try:
        assert _found(s, "greyhound") == ["ep-1"]
    finally:
        s.close()
