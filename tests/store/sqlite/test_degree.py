"""A node's degree, a column kept by the writers of edges and nodes (graph_model/graph_writes.py;
by triggers until migration 16): it must always equal the live (unexpired) edges of the
node's graph touching it, each end counted, whatever the edges go through, and listing by
degree must read it in order, page after page."""

from __future__ import annotations

import random
import sqlite3
from collections.abc import Iterator
from pathlib import Path

import pytest
from zep_cloud import EdgeInput, EdgeNodeRef, NodeInput, Zep

from graphrecall.domain.models import Edge, Node, PageRequest
from graphrecall.graph_model.graph_writes import (
    delete_edges,
    insert_edges,
    insert_nodes,
    update_edge,
)
from graphrecall.store import open_store
from graphrecall.store.sqlite.migrations import MIGRATIONS, migrate
from graphrecall.store.sqlite.store import SQLiteStore
from tests.conftest import wait_for_task

GRAPH = "g-1"
OTHER = "g-2"
STAMP = "2026-01-01T00:00:00.000000Z"


@pytest.fixture()
def store(tmp_path: Path) -> Iterator[SQLiteStore]:
    s = SQLiteStore(tmp_path / "degree.db")
    yield s
    s.close()


def _node(uuid: str, graph: str = GRAPH) -> Node:
    return Node(
        uuid=uuid,
        graph_uuid=graph,
        name=uuid,
        labels=["Entity"],
        created_at=STAMP,
        updated_at=STAMP,
    )


def _edge(
    uuid: str, source: str, target: str, *, expired: bool = False, graph: str = GRAPH
) -> Edge:
    return Edge(
        uuid=uuid,
        graph_uuid=graph,
        name="REL",
        fact=f"{source} - {target}",
        source_node_uuid=source,
        target_node_uuid=target,
        created_at=STAMP,
        updated_at=STAMP,
        expired_at=STAMP if expired else None,
    )


def _counted(conn: sqlite3.Connection) -> dict[str, int]:
    """Every node's degree counted from the edges, the definition the column keeps."""
    rows = conn.execute(
        "SELECT n.uuid, (SELECT COUNT(*) FROM edges e WHERE e.graph_uuid = n.graph_uuid"
        " AND e.source_node_uuid = n.uuid AND e.expired_at IS NULL)"
        " + (SELECT COUNT(*) FROM edges e WHERE e.graph_uuid = n.graph_uuid"
        " AND e.target_node_uuid = n.uuid AND e.expired_at IS NULL) FROM nodes n"
    ).fetchall()
    return {uuid: int(n) for uuid, n in rows}


def _column(conn: sqlite3.Connection) -> dict[str, int]:
    return {uuid: int(d) for uuid, d in conn.execute("SELECT uuid, degree FROM nodes")}


def _check(store: SQLiteStore) -> None:
    conn = store.db.conn
    assert _column(conn) == _counted(conn)
    for graph in (GRAPH, OTHER):
        uuids = [u for (u,) in conn.execute("SELECT uuid FROM nodes WHERE graph_uuid = ?", [graph])]
        counted = _counted(conn)
        assert store.node_degrees(graph, uuids) == {u: counted[u] for u in uuids}


def test_each_edge_change_moves_the_degree_of_its_ends(store: SQLiteStore) -> None:
    def change(edge: Edge, **fields: object) -> Edge:
        changed = edge.model_copy(update=fields)
        update_edge(store, changed)
        return changed

    def degrees(graph: str, *uuids: str) -> list[int]:
        found = store.node_degrees(graph, uuids)
        return [found[u] for u in uuids]

    insert_nodes(store, [_node(f"n{i}") for i in range(4)] + [_node("x", OTHER)])
    e1 = _edge("e1", "n0", "n1")
    e2 = _edge("e2", "n0", "n2", expired=True)
    insert_edges(store, [e1, e2])
    assert degrees(GRAPH, "n0", "n1", "n2") == [1, 1, 0]
    e2 = change(e2, expired_at=None)  # brought back
    assert degrees(GRAPH, "n0", "n1", "n2") == [2, 1, 1]
    e1 = change(e1, expired_at=STAMP)  # expired
    assert degrees(GRAPH, "n0", "n1", "n2") == [1, 0, 1]
    e1 = change(e1, fact="changed", expired_at="2026-02-01T00:00:00.000000Z")  # still expired
    assert degrees(GRAPH, "n0", "n1", "n2") == [1, 0, 1]
    e2 = change(e2, target_node_uuid="n3")  # re-pointed
    assert degrees(GRAPH, "n0", "n2", "n3") == [1, 0, 1]
    e2 = change(e2, source_node_uuid="n3", target_node_uuid="n3")  # a self-loop counts 2
    assert degrees(GRAPH, "n0", "n3") == [0, 2]
    e2 = change(e2, graph_uuid=OTHER, target_node_uuid="x")  # moved to another graph
    assert degrees(GRAPH, "n3") == [0] and degrees(OTHER, "x") == [1]
    e2 = change(e2, expired_at=STAMP)
    assert degrees(OTHER, "x") == [0]
    e2 = change(e2, expired_at=None)
    assert degrees(OTHER, "x") == [1]
    _check(store)
    delete_edges(store, OTHER, {"uuid": "e2"})
    delete_edges(store, GRAPH, {"uuid": "e1"})  # an expired edge: nothing to take back
    assert degrees(OTHER, "x") == [0] and degrees(GRAPH, "n0", "n1") == [0, 0]
    _check(store)


def test_self_loop_counts_both_ends(store: SQLiteStore) -> None:
    insert_nodes(store, [_node("a"), _node("b")])
    insert_edges(store, [_edge("loop", "a", "a"), _edge("ab", "a", "b")])
    assert store.node_degrees(GRAPH, ["a", "b"]) == {"a": 3, "b": 1}
    delete_edges(store, GRAPH, {"uuid": "loop"})
    assert store.node_degrees(GRAPH, ["a", "b"]) == {"a": 1, "b": 1}


def test_node_inserted_after_its_edges_counts_them(store: SQLiteStore) -> None:
    insert_edges(store, [_edge("e1", "late", "late"), _edge("e2", "early", "late")])
    insert_edges(store, [_edge("e3", "late", "early", expired=True)])
    insert_edges(store, [_edge("e4", "late", "early", graph=OTHER)])  # another graph's
    insert_nodes(store, [_node("early"), _node("late"), _node("lone")])
    assert store.node_degrees(GRAPH, ["early", "late", "lone"]) == {
        "early": 1,
        "late": 3,
        "lone": 0,
    }


def test_updating_a_node_keeps_its_degree(store: SQLiteStore) -> None:
    a, b = _node("a"), _node("b")
    insert_nodes(store, [a, b])
    insert_edges(store, [_edge("e1", "a", "b"), _edge("e2", "b", "a")])
    # A copy read before the edges were written does not write its stale degree back.
    store.update(a.model_copy(update={"summary": "rewritten", "name": "A"}))
    assert store.node_degrees(GRAPH, ["a"]) == {"a": 2}
    stored = store.get(Node, "a")
    assert stored is not None and stored.degree == 2 and stored.name == "A"
    _check(store)


def test_random_changes_agree_with_counting(store: SQLiteStore) -> None:
    rng = random.Random(11)
    nodes = [f"n{i}" for i in range(12)]
    insert_nodes(store, [_node(n) for n in nodes[:8]])  # the rest arrive after edges name them
    edges: dict[str, Edge] = {}
    for step in range(400):
        op = rng.random()
        if step == 150:
            insert_nodes(store, [_node(n) for n in nodes[8:]])
        if op < 0.4 or not edges:
            e = _edge(f"e{step}", rng.choice(nodes), rng.choice(nodes), expired=rng.random() < 0.2)
            insert_edges(store, [e])
            edges[e.uuid] = e
            continue
        e = edges[rng.choice(sorted(edges))]
        if op < 0.6:
            e = e.model_copy(update={"expired_at": None if e.expired_at else STAMP})
        elif op < 0.8:
            end = rng.choice(["source_node_uuid", "target_node_uuid"])
            e = e.model_copy(update={end: rng.choice(nodes)})
        elif op < 0.85:
            e = e.model_copy(update={"fact": f"restated {step}"})
        else:
            delete_edges(store, GRAPH, {"uuid": e.uuid})
            del edges[e.uuid]
            continue
        update_edge(store, e)
        edges[e.uuid] = e
    _check(store)
    degrees = store.node_degrees(GRAPH, nodes)
    assert any(d > 3 for d in degrees.values()) and 0 < len(edges) < 400


@pytest.mark.parametrize("order", ["asc", "desc"])
def test_listing_by_degree_pages_through_every_node_in_order(
    store: SQLiteStore, order: str
) -> None:
    rng = random.Random(5)
    nodes = [f"n{i:02d}" for i in range(30)]
    insert_nodes(store, [_node(n) for n in nodes] + [_node("other", OTHER)])
    hubs = nodes[:6]
    insert_edges(
        store,
        [_edge(f"e{i}", rng.choice(hubs), rng.choice(nodes)) for i in range(60)]
        + [_edge("loop", "n29", "n29")],
    )
    seen: list[Node] = []
    cursor = None
    while True:
        request = PageRequest(page_size=7, order_by="degree", order=order, cursor=cursor)
        page = store.list_page(Node, {"graph_uuid": GRAPH}, request)
        assert page.total_size == 30
        seen += page.items
        cursor = page.next_cursor
        if cursor is None:
            break
    degrees = store.node_degrees(GRAPH, nodes)
    keys = [(degrees[n.uuid], n.uuid) for n in seen]
    assert keys == sorted(keys, reverse=order == "desc")
    assert len(seen) == len({n.uuid for n in seen}) == 30
    assert degrees["n29"] >= 2


def test_listing_by_degree_reads_the_index(store: SQLiteStore) -> None:
    conn = store.db.conn
    for op, direction in (("<", "DESC"), (">", "ASC")):
        plan = " ".join(
            str(row[3])
            for row in conn.execute(
                "EXPLAIN QUERY PLAN SELECT t.*, t.degree AS _sort FROM nodes t"
                f" WHERE t.graph_uuid = ? AND (t.degree, t.uuid) {op} (?, ?)"
                f" ORDER BY t.degree {direction}, t.uuid {direction} LIMIT 11",
                [GRAPH, 1, "x"],
            )
        )
        assert "nodes_degree" in plan and "TEMP B-TREE" not in plan


def test_degree_through_the_api(zep: Zep) -> None:
    graph = zep.graph.create(name="degrees")
    added = zep.graph.node.add(graph.uuid_, nodes=[NodeInput(name=f"p{i}") for i in range(5)])
    wait_for_task(zep, added.task.uuid_)
    pairs = [("p0", "p1"), ("p0", "p2"), ("p0", "p3"), ("p0", "p0"), ("p1", "p2")]
    edges = zep.graph.edge.add(
        graph.uuid_,
        edges=[
            EdgeInput(
                fact=f"{a} knows {b}",
                fact_name="KNOWS",
                source_node=EdgeNodeRef(name=a),
                target_node=EdgeNodeRef(name=b),
            )
            for a, b in pairs
        ],
    )
    wait_for_task(zep, edges.task.uuid_)
    zep.graph.edge.delete(graph.uuid_, edges.edges[2].uuid_)  # p0 - p3
    pager = zep.graph.node.list(graph.uuid_, page_size=2, order_by="degree", order="desc")
    listed = [(n.name, n.degree) for p in pager.iter_pages() for n in (p.items or [])]
    assert listed[0] == ("p0", 4)  # the self-loop counts twice
    assert sorted(listed[1:3]) == [("p1", 2), ("p2", 2)]
    assert sorted(listed[3:]) == [("p3", 0), ("p4", 0)]


def test_migration_counts_the_degrees_of_existing_nodes(tmp_path: Path) -> None:
    path = tmp_path / "old.sqlite"
    conn = sqlite3.connect(path, isolation_level=None)
    assert migrate(conn, 10) == conn.execute("PRAGMA user_version").fetchone()[0] == 10
    for uuid, graph in (("a", GRAPH), ("b", GRAPH), ("c", GRAPH), ("a2", OTHER)):
        conn.execute(
            "INSERT INTO nodes (uuid, graph_uuid, name, labels, created_at, updated_at)"
            " VALUES (?,?,?,?,?,?)",
            [uuid, graph, uuid, '["Entity"]', STAMP, STAMP],
        )
    for uuid, graph, source, target, expired in (
        ("e1", GRAPH, "a", "b", None),
        ("e2", GRAPH, "a", "a", None),
        ("e3", GRAPH, "b", "c", STAMP),
        ("e4", OTHER, "a", "b", None),  # another graph: counts for none of them
        ("e5", OTHER, "a2", "a2", None),
    ):
        conn.execute(
            "INSERT INTO edges (uuid, graph_uuid, name, fact, source_node_uuid,"
            " target_node_uuid, created_at, updated_at, expired_at) VALUES (?,?,?,?,?,?,?,?,?)",
            [uuid, graph, "REL", uuid, source, target, STAMP, STAMP, expired],
        )
    assert migrate(conn) == len(MIGRATIONS)
    assert _column(conn) == _counted(conn) == {"a": 3, "b": 1, "c": 0, "a2": 2}
    conn.close()
    s = open_store(path)
    try:
        update_edge(s, _edge("e3", "b", "c"))  # brought back
        assert s.node_degrees(GRAPH, ["a", "b", "c"]) == {"a": 3, "b": 2, "c": 1}
        page = s.list_page(Node, {"graph_uuid": GRAPH}, PageRequest(order_by="degree"))
        assert [n.uuid for n in page.items] == ["a", "b", "c"]
    finally:
        s.close()
