"""Conformance tests for the Store interface, run against every backend."""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest

from graphrecall.domain import clock
from graphrecall.domain.errors import BadRequest
from graphrecall.domain.ids import new_id
from graphrecall.domain.models import Edge, Episode, Node, PageRequest, Task
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
    store.insert([a, b, c, edge(g, a, b), edge(g, c, a), edge(g, a, c, expired=True)])
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


def _queue(store: Store, count: int, graph: str | None = None) -> list[Task]:
    stamp = clock.now()
    tasks = [
        Task(
            uuid=new_id(),
            project_uuid="p",
            graph_uuid=graph or new_id(),
            type="graph.add",
            payload={"episodes": [new_id()]},
            created_at=clock.now(),
            updated_at=stamp,
        )
        for _ in range(count)
    ]
    store.insert(tasks)
    return tasks


def _claim(store: Store, owner: str, lease: float = 60.0, max_tasks: int = 16) -> list[Task]:
    return store.claim_run(
        owner,
        lease_seconds=lease,
        batchable=frozenset({"graph.add"}),
        max_tasks=max_tasks,
        max_episodes=256,
    )


def test_task_queue_claims_oldest_under_a_lease(store: Store) -> None:
    tasks = _queue(store, 2)
    (claimed,) = _claim(store, "a")
    assert claimed.uuid == tasks[0].uuid and claimed.status == "processing"
    (other,) = _claim(store, "b")
    assert other.uuid == tasks[1].uuid
    assert _claim(store, "c") == []
    # Live leases are left alone: a restarting worker does not take a running one's tasks.
    assert store.requeue_expired() == 0
    assert store.renew_leases("a", [claimed.uuid, other.uuid], 60.0) == [claimed.uuid]


def test_a_graph_run_is_claimed_whole_and_in_order(store: Store) -> None:
    graph = new_id()
    tasks = _queue(store, 3, graph)
    run = _claim(store, "a", max_tasks=2)
    assert [t.uuid for t in run] == [t.uuid for t in tasks[:2]]
    assert _claim(store, "b") == []  # the graph's next task waits for this run


def test_an_expired_lease_is_taken_over_and_only_its_holder_finishes(store: Store) -> None:
    (task,) = _queue(store, 1)
    (held,) = _claim(store, "dead", lease=0.0)
    time.sleep(0.01)
    (taken,) = _claim(store, "alive")
    assert taken.uuid == task.uuid
    assert store.renew_leases("dead", [task.uuid], 60.0) == []
    done = taken.model_copy(update={"status": "succeeded", "completed_at": clock.now()})
    assert not store.finish_task(held.model_copy(update={"status": "failed"}), "dead")
    assert store.finish_task(done, "alive")
    stored = store.get(Task, task.uuid)
    assert stored is not None and stored.status == "succeeded"
    assert not store.finish_task(done, "alive")  # finished once


def test_requeue_expired_returns_dead_workers_tasks(store: Store) -> None:
    _queue(store, 1)
    _claim(store, "dead", lease=0.0)
    time.sleep(0.01)
    assert store.requeue_expired() == 1
    assert [t.status for t in store.find(Task, {})] == ["pending"]


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
    store.insert([a, b, c])
    store.insert([edge(g, a, b), edge(g, c, c), edge(g, b, c, expired=True)])
    page = store.list_page(Node, {"graph_uuid": g}, PageRequest(order_by="degree", order="desc"))
    degrees = store.node_degrees(g, [n.uuid for n in page.items])
    assert [degrees[n.uuid] for n in page.items] == sorted(degrees.values(), reverse=True)
    assert degrees[c.uuid] == 2  # a self-loop touches its node at both ends
