"""Lifecycle and transactions, search cursors, settings, API keys, the task queue and
maintenance."""

from __future__ import annotations

import threading
import time

import pytest

from graphrecall.domain import clock, scopes
from graphrecall.domain.ids import new_id
from graphrecall.domain.models import (
    BACKGROUND,
    LIVE,
    TRACKING,
    ApiKey,
    Edge,
    Node,
    Project,
    Task,
)
from graphrecall.retrieval import engine
from graphrecall.store import Store, open_store
from tests.store.conformance.records import at, edge, node, unit


def test_committed_writes_outlive_the_store(store_url: str) -> None:
    g = new_id()
    first = open_store(store_url)
    n = node(g, "kept")
    first.insert([n])
    first.set_embeddings(Node, g, [(n.uuid, unit([1, 2]))])
    first.link_episodes(Node, g, n.uuid, ["e1"])
    first.close()
    again = open_store(store_url)
    try:
        assert again.get(Node, n.uuid) == n
        assert again.get_embeddings(Node, g, [n.uuid]).keys() == {n.uuid}
        assert again.episodes_of(Node, g, [n.uuid]) == {n.uuid: (["e1"], False)}
    finally:
        again.close()


def test_a_failed_transaction_leaves_nothing(store: Store) -> None:
    g = new_id()
    a, b = node(g, "a"), node(g, "b")
    kept = edge(g, a, b, "kept")
    store.insert([a, b, kept])
    store.link_episodes(Edge, g, kept.uuid, ["e1"])
    store.set_embeddings(Edge, g, [(kept.uuid, unit([1, 0]))])
    with pytest.raises(RuntimeError), store.transaction():
        store.insert([node(g, "c")])
        store.update(a.model_copy(update={"summary": "changed"}))
        store.delete(Edge, {"graph_uuid": g, "uuid": kept.uuid})
        store.link_episodes(Node, g, a.uuid, ["e2"])
        store.set_embeddings(Node, g, [(a.uuid, unit([0, 1]))])
        store.delete_embeddings(Edge, g, [kept.uuid])
        assert store.count(Node, {"graph_uuid": g}) == 3  # seen inside
        raise RuntimeError("boom")
    assert store.find(Node, {"graph_uuid": g}) == sorted([a, b], key=lambda n: n.uuid)
    assert store.find(Edge, {"graph_uuid": g}) == [kept]
    assert store.episodes_of(Edge, g, [kept.uuid]) == {kept.uuid: (["e1"], False)}
    assert store.episodes_of(Node, g, [a.uuid]) == {a.uuid: ([], False)}
    assert store.get_embeddings(Node, g, [a.uuid]) == {}
    assert store.get_embeddings(Edge, g, [kept.uuid]).keys() == {kept.uuid}
    assert store.text_search(Node, {"graph_uuid": g}, ["changed"]) == []


def test_nesting_joins_the_outer_transaction(store: Store) -> None:
    g = new_id()
    with pytest.raises(RuntimeError), store.transaction():
        store.insert([node(g, "a")])
        with store.transaction():
            store.insert([node(g, "b")])
        raise RuntimeError("the outer one fails")
    assert store.count(Node, {"graph_uuid": g}) == 0
    # An inner failure caught inside the outer block undoes nothing by itself: the
    # outer transaction commits everything (no savepoints).
    with store.transaction():
        store.insert([node(g, "c")])
        try:
            with store.transaction():
                store.insert([node(g, "d")])
                raise RuntimeError("caught")
        except RuntimeError:
            pass
    assert sorted(n.name for n in store.find(Node, {"graph_uuid": g})) == ["c", "d"]


def test_in_transaction_is_true_only_on_the_thread_inside(store: Store) -> None:
    assert not store.in_transaction()
    elsewhere: list[bool] = []
    with store.transaction():
        assert store.in_transaction()
        with store.transaction():
            assert store.in_transaction()
        assert store.in_transaction()
        thread = threading.Thread(target=lambda: elsewhere.append(store.in_transaction()))
        thread.start()
        thread.join()
    assert elsewhere == [False]
    assert not store.in_transaction()


def test_search_inside_a_transaction_does_not_deadlock(store: Store) -> None:
    """The lexical leg runs on a helper thread, except inside a transaction of the calling
    thread (the helper would wait for the transaction that waits for it)."""
    g = new_id()
    alice, bob = node(g, "alice"), node(g, "bob")
    store.insert([alice, bob, edge(g, alice, bob, "alice knows bob")])
    opts = engine.SearchOptions(query="alice bob")
    outside = engine.search(store, None, None, scopes.SCOPES["edges"], g, opts)
    with store.transaction():
        inside = engine.search(store, None, None, scopes.SCOPES["edges"], g, opts)
    assert [h.uuid for h in inside.hits] == [h.uuid for h in outside.hits] and inside.hits


def test_cursors_load_until_they_expire(store: Store) -> None:
    store.save_cursor("tok", "project", "fingerprint", '{"r": [1, 2]}', ttl_seconds=300)
    assert store.load_cursor("tok") == ("project", "fingerprint", '{"r": [1, 2]}')
    store.save_cursor("old", "project", "f", "[]", ttl_seconds=-1)
    assert store.load_cursor("old") is None
    assert store.load_cursor("never-saved") is None


def test_a_setting_keeps_its_first_value(store: Store) -> None:
    assert store.setting("secret", "first") == "first"
    assert store.setting("secret", "second") == "first"
    assert store.setting("other", "") == ""


def test_put_setting_replaces_a_value_or_adds_one(store: Store) -> None:
    assert store.setting("model", "a") == "a"
    store.put_setting("model", "b")
    assert store.setting("model", "c") == "b"
    store.put_setting("new", "x")
    assert store.setting("new", "y") == "x"


def test_api_keys_are_found_by_hash_unless_revoked(store: Store) -> None:
    project = Project(uuid=new_id(), name="p", created_at=at(0))
    store.insert([project])  # a key's project must exist
    live = ApiKey(
        uuid=new_id(), project_uuid=project.uuid, prefix="gr_a", key_hash="h1", created_at=at(1)
    )
    revoked = ApiKey(
        uuid=new_id(),
        project_uuid=project.uuid,
        prefix="gr_b",
        key_hash="h2",
        created_at=at(1),
        revoked_at=at(2),
    )
    store.insert([live, revoked])
    assert store.find_api_key("h1") == live
    assert store.find_api_key("h2") is None
    assert store.find_api_key("h3") is None
    store.update(live.model_copy(update={"revoked_at": at(3)}))
    assert store.find_api_key("h1") is None


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
    """Tasks are claimed in (created_at, uuid) order, one run per graph at a time, each
    under a lease its owner renews."""
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
    stored = store.get(Task, task.uuid, {"project_uuid": "p"})
    assert stored is not None and stored.status == "succeeded"
    assert not store.finish_task(done, "alive")  # finished once


def test_requeue_expired_returns_dead_workers_tasks(store: Store) -> None:
    _queue(store, 1)
    _claim(store, "dead", lease=0.0)
    time.sleep(0.01)
    assert store.requeue_expired() == 1
    assert [t.status for t in store.find(Task, {})] == ["pending"]


def test_maintenance_never_changes_what_a_search_returns(store: Store) -> None:
    g = new_id()
    a, b = node(g, "a"), node(g, "b")
    # Many writes (several index segments where that applies), enough rows for the
    # SQLite backend to merge them.
    for batch in range(12):
        store.insert([edge(g, a, b, f"batch {batch} fact {i} about tea") for i in range(100)])
    before = store.text_search(Edge, {"graph_uuid": g}, ["tea", "batch"], limit=50)
    steps = 0
    while store.maintenance.compact_text_indexes():
        steps += 1
        assert steps < 1000
    store.maintenance.refresh_text_indexes()
    assert store.text_search(Edge, {"graph_uuid": g}, ["tea", "batch"], limit=50) == before
    for status in (
        store.maintenance.vector_index_status(),
        store.maintenance.text_index_status(),
        store.maintenance.filter_column_status(),
    ):
        assert all(isinstance(v, int) and v >= 0 for v in status.values())


def test_live_and_background_tasks_are_claimed_apart_and_tracking_ones_never(
    store: Store,
) -> None:
    """Priorities: a claim takes live tasks (0), or background ones (1) when asked, each in
    its own order; a tracking task (-1) is never claimed, requeued, nor makes its graph
    busy; a graph with a task in progress of either priority is busy for both."""
    graph = new_id()
    stamp = clock.now()

    def task(priority: int, status: str = "pending") -> Task:
        return Task(
            uuid=new_id(),
            project_uuid="p",
            graph_uuid=graph,
            type="graph.add",
            priority=priority,
            status=status,  # type: ignore[arg-type]
            payload={"episodes": [new_id()]},
            created_at=clock.now(),
            updated_at=stamp,
        )

    tracker = task(TRACKING, "processing")
    batch = [task(BACKGROUND), task(BACKGROUND)]
    live = task(LIVE)
    store.insert([tracker, *batch, live])
    assert store.requeue_expired() == 0  # the tracker stays as its work wrote it
    # The live task is taken, though the batch's are older, and alone.
    assert [t.uuid for t in _claim(store, "a")] == [live.uuid]
    assert _claim_priority(store, background=True) == []  # the graph is busy
    held = store.find(Task, {"status": "processing"})
    assert {t.uuid for t in held} == {tracker.uuid, live.uuid}
    assert store.finish_task(live.model_copy(update={"status": "succeeded"}), "a")
    assert _claim(store, "a") == []  # no live work left; background work is not taken
    run = _claim_priority(store, background=True)
    assert [t.uuid for t in run] == [t.uuid for t in batch]
    assert all(t.priority == BACKGROUND for t in run)
    stored = store.get(Task, tracker.uuid, {"project_uuid": "p"})
    assert stored is not None and stored.status == "processing" and stored.priority == TRACKING


def _claim_priority(store: Store, *, background: bool) -> list[Task]:
    return store.claim_run(
        "b",
        lease_seconds=60.0,
        batchable=frozenset({"graph.add"}),
        max_tasks=16,
        max_episodes=256,
        background=background,
    )


def test_warming_a_graph_reads_its_copies_and_changes_no_search(store: Store) -> None:
    g, other = new_id(), new_id()
    a, b, c = node(g, "a"), node(g, "b"), node(other, "c")
    facts = [edge(g, a, b, f"fact {i} about tea") for i in range(3)]
    store.insert([a, b, c, *facts])
    store.set_embeddings(Node, g, [(a.uuid, unit([1, 0])), (b.uuid, unit([0, 1]))])
    store.set_embeddings(Node, other, [(c.uuid, unit([1, 1]))])
    store.set_embeddings(Edge, g, [(e.uuid, unit([1, i + 1])) for i, e in enumerate(facts)])
    scope = {"graph_uuid": g}
    before = (
        store.text_search(Edge, scope, ["tea"], limit=10),
        store.vector_search(Node, g, unit([1, 0]), scope=scope),
    )
    warmed = store.maintenance.warm("graph_uuid", g)
    assert all(isinstance(v, int) and v >= 0 for v in warmed.values())
    if "vector_rows" in warmed:  # a backend that reads the graph's vectors into the process
        assert warmed["vector_rows"] == 5  # this graph's only
        # A backend with in-process filter columns (SQLite's) reads those too.
        assert warmed.get("filter_column_rows", 5) == 5
        hits = store.maintenance.cache_status()["vector_matrices"]["hits"]
        store.vector_search(Node, g, unit([1, 0]), scope=scope)
        assert store.maintenance.cache_status()["vector_matrices"]["hits"] == hits + 1
    assert store.maintenance.warm("graph_uuid", new_id()).get("vector_rows", 0) == 0
    assert before == (
        store.text_search(Edge, scope, ["tea"], limit=10),
        store.vector_search(Node, g, unit([1, 0]), scope=scope),
    )
