"""The writers that keep what episodes and nodes are searched and sorted by
(``graph_writes.py``): every write path leaves the columns as the triggers of migrations
10, 11 and 13 left them, and as computing them from scratch gives."""

from __future__ import annotations

import random
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from graphrecall.domain.models import Edge, Episode, Node
from graphrecall.graph_model import graph_writes as gw
from graphrecall.store.base import Store
from graphrecall.store.sqlite import migrations
from graphrecall.store.sqlite.store import SQLiteStore
from tests.ingest.search_columns import expected_columns, stored_columns

GRAPH, OTHER = "g-1", "g-2"
STAMP = "2026-01-01T00:00:00.000000Z"
WORDS = [
    "tea",
    "dog",
    "Lisbon",
    "pottery",
    "hiking",
    "married",
    "adopted",
    "violin",
    "garden",
    "ferry",
]


@pytest.fixture()
def trigger_store(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[SQLiteStore]:
    """A store whose schema stops at migration 15: triggers compute the columns."""
    monkeypatch.setattr(migrations, "MIGRATIONS", migrations.MIGRATIONS[:15])
    s = SQLiteStore(tmp_path / "triggers.db")
    monkeypatch.undo()
    # The column a later migration (21) gives the rows these tests write.
    s.db.conn.execute("ALTER TABLE edges ADD COLUMN hyperedge_uuid TEXT")
    yield s
    s.close()


def _message(n: int, minute: int, thread: str, rng: random.Random) -> Episode:
    return Episode(
        uuid=f"m{n:03d}",
        graph_uuid=GRAPH,
        content=" ".join(rng.choice(WORDS) for _ in range(rng.randint(1, 80))),
        source="message",
        role="user",
        role_name=rng.choice(["Ann", "Bob"]),
        reference_time=STAMP,
        created_at=f"2026-01-01T{minute // 60:02d}:{minute % 60:02d}:00.000000Z",
        thread_uuid=thread,
    )


def _node(uuid: str, graph: str = GRAPH) -> Node:
    return Node(uuid=uuid, graph_uuid=graph, name=uuid, created_at=STAMP, updated_at=STAMP)


def _edge(n: int, rng: random.Random, nodes: list[str]) -> Edge:
    stamp = f"2026-01-02T00:{n // 60:02d}:{n % 60:02d}.000000Z"
    return Edge(
        uuid=f"e{n:03d}",
        graph_uuid=GRAPH,
        name="R",
        fact=f"{rng.choice(WORDS)} fact {n}",
        source_node_uuid=rng.choice(nodes),
        target_node_uuid=rng.choice(nodes),
        created_at=stamp,
        updated_at=stamp,
        expired_at=STAMP if rng.random() < 0.2 else None,
    )


class _Both:
    """The same writes to a store at migration 15 (plain store writes: the triggers keep
    the columns) and to a current one (through ``graph_writes``)."""

    def __init__(self, old: Store, new: Store) -> None:
        self.old, self.new = old, new

    def insert_messages(self, rows: list[Episode]) -> None:
        self.old.insert(rows)
        gw.insert_episodes(self.new, rows)

    def rewrite(self, episode: Episode) -> None:
        self.old.update(episode)
        gw.rewrite_episode(self.new, episode)

    def delete_messages(self, uuids: list[str]) -> None:
        self.old.delete(Episode, {"graph_uuid": GRAPH, "uuid": uuids})
        gw.delete_episodes(self.new, GRAPH, uuids)

    def insert_nodes(self, nodes: list[Node]) -> None:
        self.old.insert(nodes)
        gw.insert_nodes(self.new, nodes)

    def insert_edges(self, edges: list[Edge]) -> None:
        self.old.insert(edges)
        gw.insert_edges(self.new, edges)

    def update_edge(self, edge: Edge) -> None:
        self.old.update(edge)
        gw.update_edge(self.new, edge)

    def delete_edges(self, graph: str, scope: dict[str, Any]) -> None:
        self.old.delete(Edge, {**scope, "graph_uuid": graph})
        gw.delete_edges(self.new, graph, scope)

    def link(self, edge_uuid: str, episodes: list[str]) -> None:
        self.old.link_episodes(Edge, GRAPH, edge_uuid, episodes)
        gw.link_facts(self.new, GRAPH, edge_uuid, episodes)


def test_every_write_path_agrees_with_the_old_triggers(
    trigger_store: SQLiteStore, tmp_path: Path
) -> None:
    new = SQLiteStore(tmp_path / "writers.db")
    both = _Both(trigger_store, new)
    rng = random.Random(7)
    minutes = rng.sample(range(1, 1400), 300)  # distinct times, arriving in any order
    nodes = [f"n{i}" for i in range(10)]
    both.insert_nodes([_node(n) for n in nodes[:6]] + [_node("x", OTHER)])
    messages: dict[str, Episode] = {}
    edges: dict[str, Edge] = {}
    counter = 0
    for step in range(260):
        op = rng.random()
        if step == 120:
            both.insert_nodes([_node(n) for n in nodes[6:]])  # named by edges already
        if op < 0.3 or len(messages) < 4:
            batch = []
            for _ in range(rng.randint(1, 3)):
                counter += 1
                thread = rng.choice(["t1", "t1", "t2"])
                batch.append(_message(counter, minutes[counter], thread, rng))
            both.insert_messages(batch)
            messages |= {m.uuid: m for m in batch}
        elif op < 0.38:
            m = messages[rng.choice(sorted(messages))]
            changed = m.model_copy(
                update={"content": f"rewritten {rng.choice(WORDS)}"}
                if rng.random() < 0.7
                else {"role_name": rng.choice(["Ann", "Cy"]), "processed": True}
            )
            both.rewrite(changed)
            messages[m.uuid] = changed
        elif op < 0.46:
            gone = rng.sample(sorted(messages), rng.randint(1, 2))
            both.delete_messages(gone)
            for uuid in gone:
                del messages[uuid]
        elif op < 0.62:
            counter += 1
            edge = _edge(counter, rng, nodes)
            if rng.random() < 0.2:  # a link written before its edge
                with trigger_store.transaction(), new.transaction():
                    both.link(edge.uuid, rng.sample(sorted(messages), 1))
                    both.insert_edges([edge])
            else:
                both.insert_edges([edge])
            edges[edge.uuid] = edge
        elif op < 0.72 and edges:
            mine = sorted(u for u, e in edges.items() if e.graph_uuid == GRAPH)
            if mine:
                both.link(rng.choice(mine), rng.sample(sorted(messages), rng.randint(1, 3)))
        elif op < 0.9 and edges:
            e = edges[rng.choice(sorted(edges))]
            roll = rng.random()
            if roll < 0.3:
                e = e.model_copy(update={"fact": f"{rng.choice(WORDS)} restated {step}"})
            elif roll < 0.55:
                e = e.model_copy(update={"expired_at": None if e.expired_at else STAMP})
            elif roll < 0.8:
                end = rng.choice(["source_node_uuid", "target_node_uuid"])
                e = e.model_copy(update={end: rng.choice(nodes)})
            elif roll < 0.9 and not new.episodes_of(Edge, e.graph_uuid, [e.uuid])[e.uuid][0]:
                # Moved to another graph. (One linked to episodes is not: the triggers
                # kept its fact in their text; its episodes' graph has no such edge now.)
                e = e.model_copy(update={"graph_uuid": OTHER, "target_node_uuid": "x"})
            else:
                e = e.model_copy(update={"valid_at": STAMP, "attributes": {"k": step}})
            both.update_edge(e)
            edges[e.uuid] = e
        elif edges:
            e = edges.pop(rng.choice(sorted(edges)))
            scope = {"uuid": e.uuid} if rng.random() < 0.7 else {"target_node_uuid": "nope"}
            both.delete_edges(e.graph_uuid, scope)
            if "target_node_uuid" in scope:
                edges[e.uuid] = e
        # After every write, not only at the end: a later write near a stale row would
        # repair it.
        assert stored_columns(new.db.conn) == stored_columns(trigger_store.db.conn), step
        assert stored_columns(new.db.conn) == expected_columns(new.db.conn), step
    new_conn = new.db.conn
    episodes, degrees = stored_columns(new_conn)
    # Nothing vacuous: the run left every kind of text and degree behind.
    for i in range(3):
        assert sum(1 for v in episodes.values() if v[i]) > 10
    assert sum(degrees.values()) > 10
    new_conn.execute("INSERT INTO episodes_fts(episodes_fts, rank) VALUES ('integrity-check', 1)")
    new.close()


def test_a_stale_copy_does_not_write_derived_fields_back(store: Store) -> None:
    rng = random.Random(1)
    first = _message(1, 1, "t1", rng)
    gw.insert_episodes(store, [first])
    gw.insert_nodes(store, [_node("a"), _node("b")])
    stale_node = store.get(Node, "a")
    gw.insert_episodes(store, [_message(2, 2, "t1", rng)])  # first's reply
    edge = _edge(1, rng, ["a"]).model_copy(update={"target_node_uuid": "b", "expired_at": None})
    gw.insert_edges(store, [edge])
    gw.link_facts(store, GRAPH, edge.uuid, [first.uuid])
    # Copies read before: marking the message processed, relabelling the node.
    store.update(first.model_copy(update={"processed": True}))
    assert stale_node is not None
    store.update(stale_node.model_copy(update={"labels": ["Person"]}))
    stored = store.get(Episode, first.uuid)
    assert stored is not None and stored.processed
    assert stored.search_replies is not None and stored.search_facts == edge.fact
    node = store.get(Node, "a")
    assert node is not None and node.labels == ["Person"] and node.degree == 1
