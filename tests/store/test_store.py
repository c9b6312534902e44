"""Conformance tests for the Store interface, run against every backend."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest

from graphrecall.domain import clock
from graphrecall.domain.errors import BadRequest
from graphrecall.domain.ids import new_id
from graphrecall.domain.models import Edge, Episode, Node, PageRequest, Task
from graphrecall.ingest.graph_writes import insert_edges, insert_nodes
from graphrecall.store import Store, open_store

BACKENDS = ["sqlite"]


@pytest.fixture(params=BACKENDS)
def store(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Store]:
    s = open_store(tmp_path / "conformance.db")
    yield s
    s.close()


def node(graph: str, name: str) -> Node:
    stamp = clock.now()
    return Node(
        uuid=new_id(),
        graph_uuid=graph,
        name=name,
        labels=["Entity"],
        created_at=stamp,
        updated_at=stamp,
    )


def edge(graph: str, a: Node, b: Node, expired: bool = False) -> Edge:
    stamp = clock.now()
    return Edge(
        uuid=new_id(),
        graph_uuid=graph,
        name="REL",
        fact=f"{a.name}-{b.name}",
        source_node_uuid=a.uuid,
        target_node_uuid=b.uuid,
        created_at=stamp,
        updated_at=stamp,
        expired_at=stamp if expired else None,
    )


def test_insert_get_update_delete(store: Store) -> None:
    g = new_id()
    n = node(g, "Alice")
    store.insert([n])
    assert store.get(Node, n.uuid) == n
    assert store.get(Node, n.uuid, {"graph_uuid": new_id()}) is None
    store.update(n.model_copy(update={"summary": "hi", "attributes": {"a": [1, 2]}}))
    got = store.get(Node, n.uuid)
    assert got is not None and got.summary == "hi" and got.attributes == {"a": [1, 2]}
    assert store.delete(Node, {"uuid": n.uuid}) == 1
    assert store.get(Node, n.uuid) is None


def test_transaction_rolls_back_everything(store: Store) -> None:
    g = new_id()
    with pytest.raises(RuntimeError), store.transaction():
        store.insert([node(g, "a")])
        with store.transaction():  # nested joins the outer one
            store.insert([node(g, "b")])
        raise RuntimeError("boom")
    assert store.count(Node, {"graph_uuid": g}) == 0


def test_keyset_pages_are_complete_and_stable(store: Store) -> None:
    g = new_id()
    nodes = [node(g, f"n{i}") for i in range(23)]
    store.insert(nodes)
    for order in ("asc", "desc"):
        page = PageRequest(page_size=5, order=order, order_by="created_at")
        seen: list[str] = []
        while True:
            result = store.list_page(Node, {"graph_uuid": g}, page)
            assert result.total_size == 23
            seen += [n.uuid for n in result.items]
            if result.next_cursor is None:
                break
            # Rows added mid-iteration do not disturb what is already ordered before them.
            page = page.model_copy(update={"cursor": result.next_cursor})
        expected = [n.uuid for n in nodes]
        assert seen == (expected if order == "asc" else expected[::-1])


def test_bad_cursor(store: Store) -> None:
    with pytest.raises(BadRequest):
        store.list_page(Node, {}, PageRequest(cursor="garbage!"))


def test_search_and_scope_lists(store: Store) -> None:
    g = new_id()
    store.insert([node(g, "Alice"), node(g, "Bob"), node(g, "alicia")])
    page = store.list_page(
        Node, {"graph_uuid": g}, PageRequest(), search="ALI", search_fields=("name",)
    )
    assert sorted(n.name for n in page.items) == ["Alice", "alicia"]
    assert store.count(Node, {"graph_uuid": g, "name": ["Bob", "Zed"]}) == 1
    assert store.count(Node, {"graph_uuid": g, "name": []}) == 0
    assert [n.name for n in store.nodes_named(g, "alice")] == ["Alice"]


def test_degrees_ignore_expired_edges(store: Store) -> None:
    g = new_id()
    a, b, c = node(g, "a"), node(g, "b"), node(g, "c")
    insert_nodes(store, [a, b, c])
    insert_edges(store, [edge(g, a, b), edge(g, c, a), edge(g, a, c, expired=True)])
    assert store.node_degrees(g, [a.uuid, b.uuid, c.uuid]) == {a.uuid: 2, b.uuid: 1, c.uuid: 1}
    page = store.list_page(Node, {"graph_uuid": g}, PageRequest(order_by="degree"))
    assert page.items[0].uuid == a.uuid


def test_provenance_links(store: Store) -> None:
    g = new_id()
    n = node(g, "a")
    store.insert([n])
    episodes = [new_id() for _ in range(5)]
    store.link_episodes(Node, g, n.uuid, episodes)
    store.link_episodes(Node, g, n.uuid, episodes[:2])  # idempotent
    found, truncated = store.episodes_of(Node, [n.uuid])[n.uuid]
    assert found == sorted(episodes, reverse=True) and truncated is False
    found, truncated = store.episodes_of(Node, [n.uuid], limit=3)[n.uuid]
    assert found == sorted(episodes, reverse=True)[:3] and truncated is True
    assert store.episodes_of(Node, [n.uuid], limit=5)[n.uuid] == (
        found + sorted(episodes, reverse=True)[3:],
        False,
    )
    # More uuids than a page: the batched path, same answers.
    many = store.episodes_of(Node, [n.uuid, *(new_id() for _ in range(150))], limit=3)
    assert many[n.uuid] == (found, True) and len(many) == 151
    assert store.linked_to_episodes(Node, [episodes[0]]) == [n.uuid]
    m = node(g, "b")
    store.insert([m])
    store.link_episodes(Node, g, m.uuid, episodes[1:2])
    by_episode = store.linked_by_episode(Node, [episodes[0], episodes[1], new_id()])
    assert by_episode == {episodes[0]: [n.uuid], episodes[1]: sorted([n.uuid, m.uuid])}
    assert store.linked_by_episode(Node, []) == {}


def test_embeddings_round_trip_and_missing(store: Store) -> None:
    g = new_id()
    a, b = node(g, "a"), node(g, "b")
    store.insert([a, b])
    assert sorted(store.missing_embeddings(Node, g)) == sorted([a.uuid, b.uuid])
    vec = np.arange(4, dtype=np.float32)
    store.set_embeddings(Node, g, [(a.uuid, vec)])
    assert store.missing_embeddings(Node, g) == [b.uuid]
    np.testing.assert_array_equal(store.get_embeddings(Node, [a.uuid])[a.uuid], vec)
    store.delete(Node, {"uuid": a.uuid})
    assert store.get_embeddings(Node, [a.uuid]) == {}


def test_task_queue_claims_oldest_and_requeues(store: Store) -> None:
    stamp = clock.now()
    tasks = [
        Task(
            uuid=new_id(),
            project_uuid="p",
            type="graph.add",
            created_at=clock.now(),
            updated_at=stamp,
        )
        for _ in range(2)
    ]
    store.insert(tasks)
    claimed = store.claim_task()
    assert claimed is not None and claimed.uuid == tasks[0].uuid
    assert claimed.status == "processing"
    assert store.requeue_unfinished() == 1
    again = store.claim_task()
    assert again is not None and again.uuid == tasks[0].uuid


def test_episode_delete_removes_its_links(store: Store) -> None:
    g = new_id()
    stamp = clock.now()
    ep = Episode(uuid=new_id(), graph_uuid=g, content="x", reference_time=stamp, created_at=stamp)
    n = node(g, "a")
    store.insert([ep, n])
    store.link_episodes(Node, g, n.uuid, [ep.uuid])
    store.delete(Episode, {"uuid": ep.uuid})
    assert store.episodes_of(Node, [n.uuid])[n.uuid] == ([], False)


def test_schema_version_is_recorded(tmp_path: Path) -> None:
    import sqlite3

    from graphrecall.store.sqlite.migrations import MIGRATIONS

    open_store(tmp_path / "v.db").close()
    conn = sqlite3.connect(tmp_path / "v.db")
    assert conn.execute("PRAGMA user_version").fetchone()[0] == len(MIGRATIONS)
    assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"


def test_search_inside_a_transaction_does_not_deadlock(store: Store) -> None:
    """The lexical leg runs on a helper thread, except inside a transaction of the calling
    thread (the helper would wait for the transaction that waits for it)."""
    from graphrecall.retrieval import engine
    from graphrecall.retrieval.engine import SearchOptions

    g = new_id()
    store.insert([edge(g, node(g, "alice"), node(g, "bob"))])
    outside = engine.search(
        store, None, None, engine.SCOPES["edges"], g, SearchOptions(query="alice bob")
    )
    with store.transaction():
        assert store.in_transaction()
        inside = engine.search(
            store, None, None, engine.SCOPES["edges"], g, SearchOptions(query="alice bob")
        )
    assert not store.in_transaction()
    assert [h.uuid for h in inside.hits] == [h.uuid for h in outside.hits] and inside.hits


def test_find_sorts_every_match_with_or_without_a_limit(store: Store) -> None:
    g = new_id()
    a, b, c = node(g, "a"), node(g, "b"), node(g, "c")
    store.insert([a, b, c])
    edges = [edge(g, a, b), edge(g, b, c), edge(g, a, c, expired=True)]
    store.insert(edges)
    by_uuid = sorted(e.uuid for e in edges)
    assert [e.uuid for e in store.find(Edge, {"graph_uuid": g})] == by_uuid
    assert [e.uuid for e in store.find(Edge, {"graph_uuid": g}, descending=True)] == by_uuid[::-1]
    assert [e.uuid for e in store.find(Edge, {"graph_uuid": g}, limit=2)] == by_uuid[:2]
    # NULLs first ascending, as SQLite orders them, whether sorted in SQL or not.
    unlimited = store.find(Edge, {"graph_uuid": g}, order_by="expired_at")
    limited = store.find(Edge, {"graph_uuid": g}, order_by="expired_at", limit=3)
    assert [e.uuid for e in unlimited] == [e.uuid for e in limited]
    assert unlimited[-1].expired_at is not None


def test_listing_by_degree_agrees_with_node_degrees(store: Store) -> None:
    g = new_id()
    a, b, c = node(g, "a"), node(g, "b"), node(g, "c")
    insert_nodes(store, [a, b, c])
    insert_edges(store, [edge(g, a, b), edge(g, c, c), edge(g, b, c, expired=True)])
    page = store.list_page(Node, {"graph_uuid": g}, PageRequest(order_by="degree", order="desc"))
    degrees = store.node_degrees(g, [n.uuid for n in page.items])
    assert [degrees[n.uuid] for n in page.items] == sorted(degrees.values(), reverse=True)
    assert degrees[c.uuid] == 2  # a self-loop touches its node at both ends


def test_an_update_leaves_derived_fields_unless_asked(store: Store) -> None:
    g = new_id()
    a = node(g, "a").model_copy(update={"degree": 3})
    store.insert([a])
    store.update(a.model_copy(update={"degree": 0, "summary": "new"}))  # a stale copy
    stored = store.get(Node, a.uuid)
    assert stored is not None and (stored.degree, stored.summary) == (3, "new")
    store.update(a.model_copy(update={"degree": 5, "name": "ignored"}), fields=("degree",))
    stored = store.get(Node, a.uuid)
    assert stored is not None and (stored.degree, stored.name, stored.summary) == (5, "a", "new")
    with pytest.raises(ValueError, match="no field 'nope'"):
        store.update(a, fields=("nope",))
