"""Hyperedges through the SDK: add, get, list (filters, pages), update (cascading to every
member, and from one member's edge.update), members added and removed, delete; searched
as facts; cloned; the error contract."""

from __future__ import annotations

import pytest
from zep_cloud import EdgeNodeRef, HyperedgeInput, Zep
from zep_cloud.errors import BadRequestError, NotFoundError

from tests.api.zep_v4.test_errors import raw
from tests.conftest import wait_for_task
from tests.inprocess import InProcess

KEYS_CREATE = ("keys", "create", "--project", "hyper-other")
FACT = "Alice introduced Bob to Carol at the robotics conference in Lisbon."


def _member(name: str, source: str, target: str) -> HyperedgeInput:
    return HyperedgeInput(
        name=name, source_node=EdgeNodeRef(name=source), target_node=EdgeNodeRef(name=target)
    )


def _introduction(zep: Zep, graph_uuid: str) -> str:
    added = zep.graph.hyperedge.add(
        graph_uuid,
        fact=FACT,
        edges=[
            _member("INTRODUCED", "Alice", "Bob"),
            _member("INTRODUCED", "Alice", "Carol"),
            _member("MET", "Bob", "Carol"),
        ],
        valid_at="2024-05-02T09:00:00Z",
        attributes={"venue": "conference"},
        metadata={"source": "notes"},
    )
    assert added.task is not None and added.hyperedge is not None
    assert wait_for_task(zep, added.task.uuid_) == "succeeded"
    task = zep.task.get(added.task.uuid_)
    assert task.type == "graph.hyperedge.add"
    assert task.result is not None and task.result.hyperedge_uuid == added.hyperedge.uuid_
    return str(added.hyperedge.uuid_)


def test_a_hyperedge_is_one_fact_on_member_edges(zep: Zep) -> None:
    graph = zep.graph.create(name="hyper")
    added = zep.graph.hyperedge.add(
        graph.uuid_,
        fact=FACT,
        edges=[_member("INTRODUCED", "Alice", "Bob"), _member("INTRODUCED", "Alice", "Carol")],
        metadata={"source": "notes"},
    )
    assert added.hyperedge is not None and added.hyperedge.fact == FACT
    assert added.hyperedge.metadata == {"source": "notes"}
    assert [e.name for e in added.hyperedge.edges or []] == ["INTRODUCED", "INTRODUCED"]
    first = (added.hyperedge.edges or [])[0]
    assert first.source_node is not None and first.source_node.name == "Alice"
    assert added.task is not None
    assert wait_for_task(zep, added.task.uuid_) == "succeeded"

    got = zep.graph.hyperedge.get(graph.uuid_, added.hyperedge.uuid_)
    assert got.fact == FACT and got.graph_uuid == graph.uuid_ and got.created_at
    members = got.edges or []
    assert [m.uuid_ for m in members] == sorted(m.uuid_ or "" for m in members)
    assert {m.uuid_ for m in members} == {e.uuid_ for e in added.hyperedge.edges or []}
    nodes = {n.uuid_: n.name for n in zep.graph.node.list(graph.uuid_)}
    spanned = {nodes[m.source_node_uuid or ""] for m in members}
    spanned |= {nodes[m.target_node_uuid or ""] for m in members}
    assert spanned == {"Alice", "Bob", "Carol"}
    # Each member is an ordinary edge carrying the shared fact and the hyperedge's uuid.
    for member in members:
        edge = zep.graph.edge.get(graph.uuid_, member.uuid_ or "")
        assert edge.fact == FACT and edge.hyperedge_uuid == got.uuid_


def test_hyperedges_are_searched_like_facts(zep: Zep) -> None:
    graph = zep.graph.create(name="hyper-search")
    hyperedge = _introduction(zep, graph.uuid_)
    zep.graph.edge.add(
        graph.uuid_,
        edges=[
            {
                "fact": "Dora grows tomatoes on her balcony.",
                "fact_name": "GROWS",
                "source_node": {"name": "Dora"},
                "target_node": {"name": "tomatoes"},
            }
        ],
    )
    hits = zep.graph.search_edges(graph.uuid_, query="Who introduced Bob to Carol?").items or []
    assert hits and hits[0].hyperedge_uuid == hyperedge and hits[0].fact == FACT
    context = zep.graph.get_context(graph.uuid_, query="robotics conference in Lisbon")
    assert (context.context or "").count(FACT) == 1  # one fact, whatever its members


def test_list_filters_and_pages(zep: Zep) -> None:
    graph = zep.graph.create(name="hyper-list")
    first = _introduction(zep, graph.uuid_)
    second = zep.graph.hyperedge.add(
        graph.uuid_,
        fact="Erin, Frank and Gus founded a bakery together.",
        edges=[_member("FOUNDED_WITH", "Erin", "Frank"), _member("FOUNDED_WITH", "Erin", "Gus")],
    )
    assert second.hyperedge is not None and second.task is not None
    wait_for_task(zep, second.task.uuid_)
    everything = [h.uuid_ for h in zep.graph.hyperedge.list(graph.uuid_, page_size=1)]
    assert everything == [second.hyperedge.uuid_, first]  # newest first, one a page
    page = zep.graph.hyperedge.list(graph.uuid_, order_by="created_at", order="asc").items
    assert [h.uuid_ for h in page or []] == [first, second.hyperedge.uuid_]

    gus = next(n for n in zep.graph.node.list(graph.uuid_) if n.name == "Gus")
    by_node = zep.graph.hyperedge.list(graph.uuid_, filters={"node_uuids": [gus.uuid_]})
    assert [h.uuid_ for h in by_node] == [second.hyperedge.uuid_]
    member = (second.hyperedge.edges or [])[0].uuid_
    both = {"node_uuids": [gus.uuid_], "edge_uuids": [member]}
    assert [h.uuid_ for h in zep.graph.hyperedge.list(graph.uuid_, filters=both)] == [
        second.hyperedge.uuid_
    ]
    neither = {
        "node_uuids": [gus.uuid_],
        "edge_uuids": [zep.graph.hyperedge.get(graph.uuid_, first).edges[0].uuid_],
    }  # type: ignore[index]
    assert list(zep.graph.hyperedge.list(graph.uuid_, filters=neither)) == []
    with pytest.raises(BadRequestError) as info:
        zep.graph.hyperedge.list(graph.uuid_, filters={"labels": ["x"]})  # type: ignore[typeddict-unknown-key]
    assert info.value.body.error.code == "unsupported_filter"
    assert info.value.body.error.param == "filters.labels"
    with pytest.raises(BadRequestError) as info:
        zep.graph.hyperedge.list(graph.uuid_, filters={"node_uuids": ["nope"]})
    assert info.value.body.error.param == "filters.node_uuids[0]"


def test_update_rewrites_every_member(zep: Zep) -> None:
    graph = zep.graph.create(name="hyper-update")
    hyperedge = _introduction(zep, graph.uuid_)
    changed = "Alice introduced Bob to Carol at a workshop in Porto."
    updated = zep.graph.hyperedge.update(graph.uuid_, hyperedge, fact=changed)
    assert updated.fact == changed
    members = zep.graph.hyperedge.get(graph.uuid_, hyperedge).edges or []
    assert {zep.graph.edge.get(graph.uuid_, m.uuid_ or "").fact for m in members} == {changed}
    hits = zep.graph.search_edges(graph.uuid_, query="workshop in Porto").items or []
    assert hits and hits[0].fact == changed
    # Changing one member's fact through graph.edge.update changes them all.
    again = "Alice introduced Bob to Carol over dinner."
    zep.graph.edge.update(graph.uuid_, members[1].uuid_ or "", fact=again)
    assert zep.graph.hyperedge.get(graph.uuid_, hyperedge).fact == again
    assert {zep.graph.edge.get(graph.uuid_, m.uuid_ or "").fact for m in members} == {again}


def test_members_are_added_and_removed(zep: Zep) -> None:
    graph = zep.graph.create(name="hyper-members")
    hyperedge = _introduction(zep, graph.uuid_)
    added = zep.graph.hyperedge.create_edge(
        graph.uuid_,
        hyperedge,
        name="MET",
        source_node=EdgeNodeRef(name="Dave"),
        target_node=EdgeNodeRef(name="Carol"),
    )
    assert added.edge is not None and added.edge.fact == FACT and added.task is not None
    assert (added.edge.valid_at or "").startswith("2024-05-02T09:00:00")
    assert wait_for_task(zep, added.task.uuid_) == "succeeded"
    members = zep.graph.hyperedge.get(graph.uuid_, hyperedge).edges or []
    assert len(members) == 4 and added.edge.uuid_ in {m.uuid_ for m in members}
    new_member = zep.graph.edge.get(graph.uuid_, added.edge.uuid_ or "")
    assert new_member.attributes == {"venue": "conference"}
    assert new_member.hyperedge_uuid == hyperedge

    for member in members[:-1]:
        result = zep.graph.hyperedge.delete_edge(graph.uuid_, hyperedge, member.uuid_ or "")
        assert result.task is not None and result.task.status == "succeeded"
        with pytest.raises(NotFoundError):
            zep.graph.edge.get(graph.uuid_, member.uuid_ or "")
    assert len(zep.graph.hyperedge.get(graph.uuid_, hyperedge).edges or []) == 1
    with pytest.raises(NotFoundError) as info:  # no longer a member
        zep.graph.hyperedge.delete_edge(graph.uuid_, hyperedge, members[0].uuid_ or "")
    assert info.value.body.error.param == "edge_uuid"
    # Removing the last member removes the hyperedge.
    zep.graph.edge.delete(graph.uuid_, members[-1].uuid_ or "")
    with pytest.raises(NotFoundError):
        zep.graph.hyperedge.get(graph.uuid_, hyperedge)
    assert list(zep.graph.hyperedge.list(graph.uuid_)) == []


def test_delete_removes_every_member(zep: Zep) -> None:
    graph = zep.graph.create(name="hyper-delete")
    hyperedge = _introduction(zep, graph.uuid_)
    members = zep.graph.hyperedge.get(graph.uuid_, hyperedge).edges or []
    result = zep.graph.hyperedge.delete(graph.uuid_, hyperedge)
    assert result.task is not None and result.task.status == "succeeded"
    with pytest.raises(NotFoundError):
        zep.graph.hyperedge.get(graph.uuid_, hyperedge)
    for member in members:
        with pytest.raises(NotFoundError):
            zep.graph.edge.get(graph.uuid_, member.uuid_ or "")
    assert [n.name for n in zep.graph.node.list(graph.uuid_)]  # the nodes stay


def test_a_clone_has_its_own_hyperedges(zep: Zep) -> None:
    graph = zep.graph.create(name="hyper-clone")
    hyperedge = _introduction(zep, graph.uuid_)
    cloned = zep.graph.clone(graph.uuid_, request={})
    assert cloned.task is not None and cloned.graph is not None
    assert wait_for_task(zep, cloned.task.uuid_) == "succeeded"
    copies = list(zep.graph.hyperedge.list(cloned.graph.uuid_))
    assert len(copies) == 1 and copies[0].uuid_ != hyperedge and copies[0].fact == FACT
    assert len(copies[0].edges or []) == 3
    original = {m.uuid_ for m in zep.graph.hyperedge.get(graph.uuid_, hyperedge).edges or []}
    assert not original & {m.uuid_ for m in copies[0].edges or []}


def test_hyperedge_errors(server: InProcess, zep: Zep) -> None:
    graph = zep.graph.create(name="hyper-errors")
    with pytest.raises(BadRequestError) as info:  # two nodes are an edge, not a hyperedge
        zep.graph.hyperedge.add(
            graph.uuid_,
            fact="Ann and Ben are siblings.",
            edges=[_member("SIBLING_OF", "Ann", "Ben"), _member("SIBLING_OF", "Ben", "Ann")],
        )
    assert info.value.body.error.param == "edges"
    assert list(zep.graph.node.list(graph.uuid_)) == []  # nothing half-written
    with pytest.raises(NotFoundError) as missing:  # an endpoint by uuid must exist
        zep.graph.hyperedge.add(
            graph.uuid_,
            fact="x",
            edges=[
                _member("A", "Ann", "Ben"),
                HyperedgeInput(
                    name="B",
                    source_node=EdgeNodeRef(uuid_="00000000-0000-7000-8000-000000000000"),
                    target_node=EdgeNodeRef(name="Cy"),
                ),
            ],
        )
    assert missing.value.body.error.param == "edges[1].source_node.uuid"
    assert list(zep.graph.node.list(graph.uuid_)) == []
    answer = raw(server, "POST", f"/graphs/{graph.uuid_}/hyperedges", json={"fact": "x"})
    assert answer.status_code == 400 and answer.json()["error"]["param"] == "edges"
    with pytest.raises(BadRequestError) as info:
        zep.graph.hyperedge.get(graph.uuid_, "not-a-uuid")
    assert info.value.body.error.param == "hyperedge_uuid"

    hyperedge = _introduction(zep, graph.uuid_)
    key = server.cli(*KEYS_CREATE)
    other = server.client(api_key=key)
    with pytest.raises(NotFoundError):
        other.graph.hyperedge.get(graph.uuid_, hyperedge)
    with pytest.raises(NotFoundError):
        other.graph.hyperedge.delete(graph.uuid_, hyperedge)
    with pytest.raises(NotFoundError):
        other.graph.hyperedge.update(graph.uuid_, hyperedge, fact="stolen")
    theirs = other.graph.create(name="theirs")
    with pytest.raises(NotFoundError):  # another graph's hyperedge
        other.graph.hyperedge.get(theirs.uuid_, hyperedge)
    assert zep.graph.hyperedge.get(graph.uuid_, hyperedge).fact == FACT
    assert zep.project.update(hyperedges_enabled=True).hyperedges_enabled is True
