"""Records: insert, get, update, find, count, count_by, matching, delete."""

from __future__ import annotations

import pytest

from graphrecall.domain import predicates as p
from graphrecall.domain.ids import new_id
from graphrecall.domain.models import (
    ApiKey,
    Batch,
    BatchItem,
    ContextTemplate,
    DebugLogging,
    DocumentSummary,
    Edge,
    Episode,
    EpisodeDebugLog,
    Graph,
    Hyperedge,
    IngestionTrace,
    Memory,
    MemoryEvent,
    Node,
    Observation,
    Ontology,
    Project,
    Record,
    Space,
    SummaryInstructions,
    Task,
    Thread,
    ThreadSummary,
    User,
    UserGroup,
    UserGroupMember,
    WebhookDelivery,
    WebhookEndpoint,
)
from graphrecall.store import Store
from tests.store.conformance.records import at, edge, episode, node, uuids

TEXT = "naïve café — 東京 \"quoted\" 'single' \\ back%slash_ 😀"


def one_of_each_kind() -> list[Record]:
    """A record of every kind the store keeps, every optional field set."""
    project, graph, user, thread, space = (new_id() for _ in range(5))
    meta = {"k": [1, 2.5, None, True, "s"], "nested": {"a": {"b": TEXT}}}
    node_uuid, episode_uuid = new_id(), new_id()
    return [
        Project(uuid=project, name=TEXT, default_time_zone="Europe/Paris", created_at=at(1)),
        ApiKey(
            uuid=new_id(),
            project_uuid=project,
            name="key",
            prefix="gr_abc",
            key_hash="hash",
            created_at=at(1),
            revoked_at=at(2),
        ),
        User(
            uuid=user,
            project_uuid=project,
            graph_uuid=graph,
            node_uuid=node_uuid,
            user_id="u-1",
            email="a@b.c",
            first_name="Ann",
            last_name=TEXT,
            metadata=meta,
            time_zone="UTC",
            disable_default_ontology=True,
            created_at=at(1),
            updated_at=at(2),
        ),
        Graph(
            uuid=graph,
            project_uuid=project,
            type="user",
            graph_id="g-1",
            name="G",
            description=TEXT,
            time_zone="UTC",
            user_uuid=user,
            created_at=at(1),
            updated_at=at(2),
        ),
        Thread(
            uuid=thread,
            project_uuid=project,
            graph_uuid=graph,
            user_uuid=user,
            thread_id="t-1",
            created_at=at(1),
            updated_at=at(2),
        ),
        Episode(
            uuid=episode_uuid,
            graph_uuid=graph,
            content=TEXT,
            source="message",
            source_description="chat",
            role="user",
            role_name="Ann",
            metadata=meta,
            reference_time=at(3),
            created_at=at(3),
            document_id="doc",
            thread_uuid=thread,
            processed=True,
        ),
        Node(
            uuid=node_uuid,
            graph_uuid=graph,
            name="Ann",
            labels=["Entity", "Person"],
            summary=TEXT,
            attributes=meta,
            metadata={"m": 1},
            created_at=at(1),
            updated_at=at(2),
        ),
        Edge(
            uuid=new_id(),
            graph_uuid=graph,
            name="LIKES",
            fact=TEXT,
            source_node_uuid=node_uuid,
            target_node_uuid=node_uuid,
            attributes=meta,
            metadata={"m": [1]},
            created_at=at(1),
            updated_at=at(2),
            valid_at=at(3),
            invalid_at=at(4),
            expired_at=at(5),
            hyperedge_uuid=(hyperedge := new_id()),
        ),
        Hyperedge(uuid=hyperedge, graph_uuid=graph, created_at=at(1)),
        Observation(
            uuid=new_id(),
            graph_uuid=graph,
            name="obs",
            labels=["x"],
            summary=TEXT,
            attributes=meta,
            created_at=at(1),
            updated_at=at(2),
        ),
        ThreadSummary(
            uuid=new_id(),
            graph_uuid=graph,
            thread_uuid=thread,
            summary=TEXT,
            created_at=at(1),
            last_summarized_at=at(2),
            last_summarized_episode_valid_at=at(3),
        ),
        Task(
            uuid=new_id(),
            project_uuid=project,
            graph_uuid=graph,
            type="graph.add",
            priority=1,
            status="partial",
            stage="extract",
            payload=meta,
            result={"ok": 1},
            error={"message": TEXT},
            created_at=at(1),
            started_at=at(2),
            updated_at=at(3),
            completed_at=at(4),
        ),
        Space(uuid=space, project_uuid=project, slug="abcdefghijkl", name=TEXT, created_at=at(1)),
        Memory(
            uuid=new_id(),
            space_uuid=space,
            content=TEXT,
            meta=meta,
            tree="a.b",
            name="n",
            temporal_start=at(1),
            temporal_end=at(2),
            version=3,
            version_hash="vh",
            created_at=at(1),
            updated_at=at(2),
        ),
        MemoryEvent(
            uuid=new_id(),
            space_uuid=space,
            memory_uuid=new_id(),
            at=at(2),
            operation="update",
            operation_id=new_id(),
            cause="api",
            actor={"key": "k"},
            content=TEXT,
            meta=meta,
            tree="a",
            name="n",
            temporal_start=at(1),
            temporal_end=at(1),
            version=2,
            version_hash="vh",
        ),
        Ontology(
            uuid=graph,
            project_uuid=project,
            owner_type="graph",
            data={"entity_types": meta},
            updated_at=at(1),
        ),
        ContextTemplate(
            uuid=new_id(),
            project_uuid=project,
            name="tpl",
            template=TEXT,
            created_at=at(1),
            updated_at=at(2),
        ),
        Batch(
            uuid=(batch := new_id()),
            project_uuid=project,
            status="partial",
            metadata=meta,
            ignore_roles=["assistant", "tool"],
            strict_ontology=True,
            item_count=7,
            task_uuid=new_id(),
            created_at=at(1),
            updated_at=at(2),
        ),
        SummaryInstructions(
            uuid=user,
            project_uuid=project,
            owner_type="user",
            data={"instructions": [{"name": "diet", "text": TEXT}]},
            updated_at=at(1),
        ),
        UserGroup(
            uuid=(group := new_id()),
            project_uuid=project,
            name=TEXT,
            description=TEXT,
            version=3,
            created_at=at(1),
            updated_at=at(2),
        ),
        UserGroupMember(
            uuid=new_id(), project_uuid=project, group_uuid=group, user_uuid=user, created_at=at(1)
        ),
        WebhookEndpoint(
            uuid=project,
            project_uuid=project,
            url="https://example.test/hooks?a=1",
            secret="whsec_" + TEXT,
            events=["episode.processed", TEXT],
            created_at=at(1),
            updated_at=at(2),
        ),
        WebhookDelivery(
            uuid=new_id(),
            project_uuid=project,
            event_name="episode.processed",
            payload={"episode_uuid": TEXT, "meta": meta},
            status="failed",
            attempts=8,
            next_attempt_at=at(3),
            last_error=TEXT,
            created_at=at(1),
            delivered_at=at(4),
        ),
        BatchItem(
            uuid=new_id(),
            project_uuid=project,
            batch_uuid=batch,
            sequence_index=6,
            type="thread_message",
            graph_uuid=graph,
            user_uuid=user,
            thread_uuid=thread,
            episode_uuid=new_id(),
            task_uuid=new_id(),
            data={"content": TEXT, "role": "user", "metadata": meta},
            created_at=at(1),
        ),
        DebugLogging(uuid=project, project_uuid=project, enabled_until=at(2), updated_at=at(1)),
        EpisodeDebugLog(
            uuid=episode_uuid,
            graph_uuid=graph,
            status="error",
            entries=[{"level": "info", "logged_at": at(1), "message": TEXT}],
            error_message=TEXT,
            started_at=at(1),
            completed_at=at(2),
        ),
        IngestionTrace(
            uuid=new_id(),
            graph_uuid=graph,
            episode_uuid=episode_uuid,
            step="resolve_edges",
            seq=2,
            status="failed",
            input={"extracted_edges": [meta]},
            output={"edges": []},
            error_message=TEXT,
            created_at=at(1),
        ),
        DocumentSummary(
            uuid=new_id(),
            graph_uuid=graph,
            document_id=TEXT,
            summary=TEXT,
            created_at=at(1),
            last_summarized_at=at(2),
            last_summarized_episode_valid_at=at(3),
        ),
    ]


def test_every_kind_reads_back_as_written(store: Store) -> None:
    records = one_of_each_kind()
    store.insert(records)
    for record in records:
        assert store.get(type(record), record.uuid) == record, type(record).__name__
        assert store.find(type(record), {"uuid": record.uuid}) == [record]


def test_update_replaces_every_field_and_none_clears(store: Store) -> None:
    records = one_of_each_kind()
    store.insert(records)
    for record in records:
        cleared = {
            name: None
            for name, field in type(record).model_fields.items()
            if not field.is_required() and field.default is None
        }
        changed = record.model_copy(update=cleared)
        store.update(changed)
        assert store.get(type(record), record.uuid) == changed, type(record).__name__


def test_get_is_scoped(store: Store) -> None:
    g = new_id()
    n = node(g, "Alice")
    store.insert([n])
    assert store.get(Node, n.uuid, {"graph_uuid": g}) == n
    assert store.get(Node, n.uuid, {"graph_uuid": new_id()}) is None
    assert store.get(Node, new_id(), {"graph_uuid": g}) is None
    assert store.get(Edge, n.uuid) is None  # another kind


def test_insert_is_all_or_nothing(store: Store) -> None:
    g = new_id()
    first = node(g, "a")
    store.insert([first])
    fresh = node(g, "b")
    with pytest.raises(Exception):  # noqa: B017 - each backend raises its own error
        store.insert([fresh, first.model_copy(update={"name": "dup"})])
    assert store.find(Node, {"graph_uuid": g}) == [first]


def test_scope_values(store: Store) -> None:
    g = new_id()
    a = episode(g, "a", t=1, thread_uuid="t1", processed=True)
    b = episode(g, "b", t=2, thread_uuid=None)
    c = episode(g, "c", t=3, thread_uuid="t2")
    other = episode(new_id(), "d", t=4, thread_uuid="t1", processed=True)
    store.insert([a, b, c, other])
    assert store.find(Episode, {"graph_uuid": g}) == sorted([a, b, c], key=lambda r: r.uuid)
    assert store.find(Episode, {"graph_uuid": g, "thread_uuid": "t1"}) == [a]
    assert store.find(Episode, {"graph_uuid": g, "thread_uuid": None}) == [b]
    assert store.find(Episode, {"graph_uuid": g, "thread_uuid": ["t1", "t2"]}) == sorted(
        [a, c], key=lambda r: r.uuid
    )
    assert store.find(Episode, {"graph_uuid": g, "thread_uuid": ("t2",)}) == [c]
    assert store.find(Episode, {"graph_uuid": g, "thread_uuid": []}) == []
    assert store.find(Episode, {"graph_uuid": g, "processed": True}) == [a]
    assert store.find(Episode, {"graph_uuid": [g], "processed": False, "uuid": b.uuid}) == [b]
    with pytest.raises(ValueError):
        store.find(Episode, {"graph_uuid": g, "no_such_field": 1})


def test_find_orders_nulls_first_and_ties_by_uuid(store: Store) -> None:
    g = new_id()
    a, b = node(g, "a"), node(g, "b")
    # Two edges share each valid_at (ties), one has none (NULL).
    edges = [
        edge(g, a, b, valid_at=at(5)),
        edge(g, a, b, valid_at=None),
        edge(g, a, b, valid_at=at(5)),
        edge(g, a, b, valid_at=at(3)),
        edge(g, a, b, valid_at=at(3)),
    ]
    store.insert([a, b, *edges])
    ascending = sorted(edges, key=lambda e: (e.valid_at is not None, e.valid_at or "", e.uuid))
    scope = {"graph_uuid": g}
    assert store.find(Edge, scope, order_by="valid_at") == ascending
    assert store.find(Edge, scope, order_by="valid_at", descending=True) == ascending[::-1]
    for limit in (1, 2, 3, 5, 10):
        assert store.find(Edge, scope, order_by="valid_at", limit=limit) == ascending[:limit]
        assert (
            store.find(Edge, scope, order_by="valid_at", descending=True, limit=limit)
            == ascending[::-1][:limit]
        )
    assert store.find(Edge, scope) == sorted(edges, key=lambda e: e.uuid)
    assert store.find(Edge, scope, limit=0) == []
    with pytest.raises(ValueError):
        store.find(Edge, scope, order_by="no_such_field")


def test_timestamps_order_as_time(store: Store) -> None:
    g = new_id()
    stamps = [at(59, 999_999), at(60), at(0, 1), at(3600), at(0)]
    nodes = [node(g, f"n{i}").model_copy(update={"created_at": s}) for i, s in enumerate(stamps)]
    store.insert(nodes)
    found = store.find(Node, {"graph_uuid": g}, order_by="created_at")
    assert [n.created_at for n in found] == sorted(stamps)
    assert found == sorted(nodes, key=lambda n: n.created_at)


def test_count_and_where(store: Store) -> None:
    g = new_id()
    a, b = node(g, "a"), node(g, "b")
    edges = [
        edge(g, a, b, name="LIKES", t=1),
        edge(g, a, b, name="LIKES", t=2, expired=True),
        edge(g, b, a, name="KNOWS", t=3),
    ]
    store.insert([a, b, *edges, edge(new_id(), a, b, name="LIKES")])
    scope = {"graph_uuid": g}
    assert store.count(Edge, scope) == 3
    assert store.count(Edge, {**scope, "name": "LIKES"}) == 2
    live = p.Column("expired_at", "is_null")
    assert store.count(Edge, scope, live) == 2
    assert store.count(Edge, scope, p.And((live, p.Column("name", "eq", "LIKES")))) == 1
    assert store.count(Edge, scope, p.Nothing()) == 0
    assert store.find(Edge, scope, where=live) == sorted([edges[0], edges[2]], key=lambda e: e.uuid)
    assert store.find(Edge, scope, where=p.Column("created_at", "gte", at(2)), limit=1) == [
        min(edges[1:], key=lambda e: e.uuid)
    ]


def test_count_by_counts_each_value_null_included(store: Store) -> None:
    g = new_id()
    store.insert(
        [
            episode(g, "a", thread_uuid="t1", processed=True),
            episode(g, "b", thread_uuid="t1"),
            episode(g, "c", thread_uuid=None),
            episode(g, "d", thread_uuid="t2"),
            episode(new_id(), "e", thread_uuid="t1"),
        ]
    )
    scope = {"graph_uuid": g}
    assert store.count_by(Episode, "thread_uuid", scope) == {"t1": 2, None: 1, "t2": 1}
    where = p.Column("content", "in", ("a", "c"))
    assert store.count_by(Episode, "thread_uuid", scope, where) == {"t1": 1, None: 1}
    assert store.count_by(Episode, "thread_uuid", {**scope, "thread_uuid": []}) == {}
    with pytest.raises(ValueError):
        store.count_by(Episode, "no_such_field", scope)


def test_matching_checks_only_the_given_uuids_in_scope(store: Store) -> None:
    g, other = new_id(), new_id()
    a, b, c = node(g, "a", summary="x"), node(g, "b", summary="y"), node(g, "c", summary="x")
    elsewhere = node(other, "d", summary="x")
    store.insert([a, b, c, elsewhere])
    where = p.Column("summary", "eq", "x")
    scope = {"graph_uuid": g}
    assert store.matching(Node, scope, [a.uuid, b.uuid], where) == {a.uuid}
    assert store.matching(Node, scope, [a.uuid, c.uuid, elsewhere.uuid, new_id()], where) == {
        a.uuid,
        c.uuid,
    }
    assert store.matching(Node, scope, [], where) == set()
    many = [a.uuid, *(new_id() for _ in range(1200)), c.uuid]  # past any batch size
    assert store.matching(Node, scope, many, where) == {a.uuid, c.uuid}


def test_delete_is_scoped_and_counts(store: Store) -> None:
    g, other = new_id(), new_id()
    mine = [node(g, "a"), node(g, "b"), node(g, "c")]
    theirs = node(other, "a")
    store.insert([*mine, theirs])
    assert store.delete(Node, {"graph_uuid": g, "uuid": [mine[0].uuid, theirs.uuid]}) == 1
    assert store.get(Node, theirs.uuid) == theirs
    assert store.delete(Node, {"graph_uuid": g, "uuid": []}) == 0
    assert store.delete(Node, {"graph_uuid": g, "name": "zzz"}) == 0
    assert store.delete(Node, {"graph_uuid": g}) == 2
    assert store.find(Node, {"graph_uuid": g}) == []
    assert uuids(store.find(Node, {"graph_uuid": other})) == [theirs.uuid]


def test_delete_many(store: Store) -> None:
    g = new_id()
    nodes = [node(g, f"n{i}") for i in range(1203)]  # past any batch size
    store.insert(nodes)
    assert store.delete(Node, {"graph_uuid": g}) == 1203
    assert store.count(Node, {"graph_uuid": g}) == 0


def test_an_update_leaves_derived_fields_unless_asked(store: Store) -> None:
    """What a record is searched or sorted by (``Record.derived_fields``) is written by its
    own writers: an ordinary update of a stale copy never writes it back."""
    g = new_id()
    a = node(g, "a").model_copy(update={"degree": 3})
    store.insert([a])
    store.update(a.model_copy(update={"degree": 0, "summary": "new"}))  # a stale copy
    stored = store.get(Node, a.uuid, {"graph_uuid": g})
    assert stored is not None and (stored.degree, stored.summary) == (3, "new")
    store.update(a.model_copy(update={"degree": 5, "name": "ignored"}), fields=("degree",))
    stored = store.get(Node, a.uuid, {"graph_uuid": g})
    assert stored is not None and (stored.degree, stored.name, stored.summary) == (5, "a", "new")
    with pytest.raises(ValueError, match="no field 'nope'"):
        store.update(a, fields=("nope",))


def test_update_many_writes_only_the_fields_named(store: Store) -> None:
    g = new_id()
    nodes = [node(g, name) for name in ("Alice", "Bob", "Carol")]
    store.insert(nodes)
    moved = [
        n.model_copy(update={"degree": i + 3, "name": f"Renamed {i}"}) for i, n in enumerate(nodes)
    ]
    store.update_many(moved[:2], fields=("degree",))
    got = {n.uuid: n for n in store.find(Node, {"graph_uuid": g})}
    assert [got[n.uuid].degree for n in nodes] == [3, 4, nodes[2].degree]
    assert [got[n.uuid].name for n in nodes] == ["Alice", "Bob", "Carol"]  # not named
    store.update_many(moved, fields=("name", "degree"))  # a lexical field: re-indexed
    found = store.text_search(Node, {"graph_uuid": g}, ["renamed"])
    assert {u for u, _ in found} == {n.uuid for n in nodes}
    assert {n.name for n in store.find(Node, {"graph_uuid": g})} == {
        f"Renamed {i}" for i in range(3)
    }
    store.update_many([], fields=("degree",))
