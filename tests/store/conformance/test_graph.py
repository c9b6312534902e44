"""The graph: nodes by name, live edges (adjacency, graph_adjacency, degrees), provenance
links, and what a delete takes with it."""

from __future__ import annotations

from collections import Counter

import numpy as np
import pytest

from graphrecall.domain.ids import new_id
from graphrecall.domain.models import Edge, Episode, Node, Observation, PageRequest
from graphrecall.graph_model.graph_writes import insert_edges, insert_nodes
from graphrecall.store import Store
from graphrecall.store.adjacency import Adjacency
from tests.store.conformance.records import at, edge, episode, node, unit, walk


def ends(adjacency: Adjacency) -> Counter[tuple[str, str]]:
    """Each (node, neighbour) pair the arrays list, with repeats."""
    out: Counter[tuple[str, str]] = Counter()
    for row, uuid in enumerate(adjacency.nodes):
        for other in adjacency.neighbours(np.array([row], dtype=np.int64)).tolist():
            out[(uuid, adjacency.nodes[int(other)])] += 1
    return out


def both_ways(*pairs: tuple[Node, Node]) -> Counter[tuple[str, str]]:
    out: Counter[tuple[str, str]] = Counter()
    for a, b in pairs:
        out[(a.uuid, b.uuid)] += 1
        out[(b.uuid, a.uuid)] += 1
    return out


def test_nodes_named_ignores_case_oldest_first(store: Store) -> None:
    g = new_id()
    late = node(g, "ALICE", t=5)
    early = node(g, "alice", t=1)
    tie = [node(g, "Alice", t=3) for _ in range(2)]
    store.insert([late, early, *tie, node(g, "Alicia"), node(g, "alice "), node(new_id(), "Alice")])
    expected = [early, *sorted(tie, key=lambda n: n.uuid), late]
    assert store.nodes_named(g, "aLiCe") == expected
    assert store.nodes_named(g, "bob") == []
    assert store.nodes_named(new_id(), "alice") == []


def test_adjacency_lists_live_edges_touching_the_nodes(store: Store) -> None:
    g = new_id()
    a, b, c, d = (node(g, x) for x in "abcd")
    ab, ca, cd = edge(g, a, b), edge(g, c, a), edge(g, c, d)
    expired = edge(g, a, d, expired=True)
    invalid = edge(g, b, d, invalid_at=at(9))  # invalid but not expired: still live
    elsewhere = edge(new_id(), a, b)
    store.insert([a, b, c, d, ab, ca, cd, expired, invalid, elsewhere])

    def found(*nodes: Node) -> set[tuple[str, str, str]]:
        result = store.adjacency(g, [n.uuid for n in nodes])
        assert len(result) == len(set(result))  # each edge once
        return set(result)

    def triple(e: Edge) -> tuple[str, str, str]:
        return (e.uuid, e.source_node_uuid, e.target_node_uuid)

    assert found(a) == {triple(ab), triple(ca)}
    assert found(a, c) == {triple(ab), triple(ca), triple(cd)}
    assert found(d) == {triple(cd), triple(invalid)}
    assert store.adjacency(g, []) == []
    assert store.adjacency(new_id(), [a.uuid]) == []
    many = [a.uuid, *(new_id() for _ in range(1200))]  # past any batch size
    assert set(store.adjacency(g, many)) == {triple(ab), triple(ca)}


def test_graph_adjacency_follows_every_edge_write(store: Store) -> None:
    g = new_id()
    a, b, c, d = (node(g, x) for x in "abcd")
    chain = [edge(g, a, b), edge(g, b, c), edge(g, c, d)]
    store.insert([a, b, c, d, *chain, edge(g, a, c, expired=True), edge(new_id(), a, d)])
    assert ends(store.graph_adjacency(g)) == both_ways((a, b), (b, c), (c, d))
    shortcut = edge(g, a, d)
    store.insert([shortcut])  # a new edge
    assert ends(store.graph_adjacency(g)) == both_ways((a, b), (b, c), (c, d), (a, d))
    store.update(shortcut.model_copy(update={"expired_at": at(50)}))  # expired
    assert ends(store.graph_adjacency(g)) == both_ways((a, b), (b, c), (c, d))
    store.delete(Edge, {"graph_uuid": g, "uuid": chain[1].uuid})  # deleted
    assert ends(store.graph_adjacency(g)) == both_ways((a, b), (c, d))
    with pytest.raises(RuntimeError), store.transaction():
        store.insert([edge(g, b, d)])
        assert ends(store.graph_adjacency(g)) == both_ways((a, b), (c, d), (b, d))  # seen inside
        raise RuntimeError("roll back")
    assert ends(store.graph_adjacency(g)) == both_ways((a, b), (c, d))  # and undone
    store.insert([edge(g, c, c)])  # a self-loop: listed under its node twice
    assert ends(store.graph_adjacency(g)) == both_ways((a, b), (c, d), (c, c))
    assert ends(store.graph_adjacency(new_id())) == Counter()


def test_degrees_count_live_edges_at_both_ends(store: Store) -> None:
    """A node's degree is written by the writers of edges (graph_model/graph_writes.py) as an
    ordinary column; the store reads it back and sorts by it."""
    g = new_id()
    a, b, c = node(g, "a"), node(g, "b"), node(g, "c")
    insert_nodes(store, [a, b, c])
    insert_edges(store, [edge(g, a, b), edge(g, c, a), edge(g, a, c, expired=True)])
    insert_edges(store, [edge(g, c, c), edge(new_id(), a, b)])
    stranger = node(new_id(), "stranger")
    insert_nodes(store, [stranger])
    unknown = new_id()
    assert store.node_degrees(g, [a.uuid, b.uuid, c.uuid, stranger.uuid, unknown]) == {
        a.uuid: 2,
        b.uuid: 1,
        c.uuid: 3,  # one edge and a self-loop
        stranger.uuid: 0,
        unknown: 0,
    }
    assert store.node_degrees(g, []) == {}


def test_newest_edges_per_end_live_and_newest_first(store: Store) -> None:
    """Up to the limit from each end (so up to twice it in all), live edges only, a
    self-loop once, newest first with ties by uuid descending; other graphs' edges and
    unknown nodes give nothing."""
    g = new_id()
    a, b, c = node(g, "a"), node(g, "b"), node(g, "c")
    insert_nodes(store, [a, b, c])
    out = [edge(g, a, b, f"out {i}", t=i) for i in range(4)]
    into = [edge(g, c, a, f"in {i}", t=10 + i) for i in range(3)]
    tie = [edge(g, a, c, f"tie {i}", t=20) for i in range(2)]
    loop = edge(g, a, a, "loop", t=30)
    insert_edges(store, [*out, *into, *tie, loop, edge(g, a, b, "gone", t=40, expired=True)])
    insert_edges(store, [edge(new_id(), a, b, "elsewhere", t=50)])
    unknown = new_id()
    got = store.newest_edges(g, {a.uuid: 3, b.uuid: 2, unknown: 5})
    ties = sorted(tie, key=lambda e: e.uuid, reverse=True)
    # As source: loop, the two ties (uuid descending); as target: loop, in 2, in 1.
    assert [e.uuid for e in got[a.uuid]] == [
        loop.uuid,
        ties[0].uuid,
        ties[1].uuid,
        into[2].uuid,
        into[1].uuid,
    ]
    assert got[a.uuid][0] == loop
    assert [e.fact for e in got[b.uuid]] == ["out 3", "out 2"]
    assert got[unknown] == []
    assert store.newest_edges(g, {}) == {}
    newest_first = sorted([*into, *tie], key=lambda e: (e.created_at, e.uuid), reverse=True)
    assert store.newest_edges(g, {c.uuid: 10})[c.uuid] == newest_first


def test_exchanges_give_the_messages_around_each_in_its_thread(store: Store) -> None:
    """Before: the last message strictly earlier in the same thread (ties: the greatest
    uuid); after: the first strictly later (ties: the least uuid); None at a thread's ends
    and for an episode without a thread; another graph's or an unknown uuid is left out;
    the order is the one asked for, each once."""
    g = new_id()
    first = episode(g, "hello", t=0, thread_uuid="t1")
    ask = episode(g, "what is their name?", t=1, thread_uuid="t1", source="message")
    same_time = episode(g, "a message of the same instant", t=1, thread_uuid="t1")
    tie = sorted(
        (episode(g, f"reply {i}", t=3, thread_uuid="t1") for i in range(2)), key=lambda e: e.uuid
    )
    last = episode(g, "later", t=5, thread_uuid="t1")
    elsewhere = episode(g, "another thread, between", t=2, thread_uuid="t2")
    text = episode(g, "a text episode", t=0)
    store.insert([first, ask, same_time, *tie, last, elsewhere, text])
    other = episode(new_id(), "their name?", t=1, thread_uuid="t1")
    store.insert([other])
    asked = [last, ask, other, same_time, tie[0], tie[1], first, text, elsewhere, ask]
    got = store.exchanges(g, [a.uuid for a in asked] + [new_id()])

    def uuid(e: Episode | None) -> str | None:
        return e.uuid if e else None

    assert [(x.message.uuid, uuid(x.before), uuid(x.after)) for x in got] == [
        (last.uuid, tie[1].uuid, None),
        (ask.uuid, first.uuid, tie[0].uuid),
        (same_time.uuid, first.uuid, tie[0].uuid),
        (tie[0].uuid, max(ask.uuid, same_time.uuid), last.uuid),
        (tie[1].uuid, max(ask.uuid, same_time.uuid), last.uuid),
        (first.uuid, None, min(ask.uuid, same_time.uuid)),
        (text.uuid, None, None),
        (elsewhere.uuid, None, None),
    ]
    assert got[1] == (ask, first, tie[0])
    assert store.exchanges(g, []) == []
    assert store.exchanges(other.graph_uuid, [ask.uuid]) == []


@pytest.mark.parametrize("order", ["asc", "desc"])
def test_listing_by_degree_agrees_with_node_degrees(store: Store, order: str) -> None:
    g = new_id()
    nodes = [node(g, f"n{i}") for i in range(7)]
    insert_nodes(store, nodes)
    pairs = [(0, 1), (0, 2), (0, 3), (1, 2), (4, 4), (5, 6)]
    insert_edges(store, [edge(g, nodes[i], nodes[j]) for i, j in pairs])
    insert_edges(store, [edge(g, nodes[6], nodes[1], expired=True)])
    page = PageRequest(page_size=3, order_by="degree", order=order)  # type: ignore[arg-type]
    seen = walk(store, Node, {"graph_uuid": g}, page)
    degrees = store.node_degrees(g, [n.uuid for n in nodes])
    expected = sorted(nodes, key=lambda n: (degrees[n.uuid], n.uuid), reverse=order == "desc")
    assert [n.uuid for n in seen] == [n.uuid for n in expected]
    assert [n.degree for n in seen] == [degrees[n.uuid] for n in expected]


def test_provenance_links(store: Store) -> None:
    g = new_id()
    n, m = node(g, "a"), node(g, "b")
    store.insert([n, m])
    episodes = [new_id() for _ in range(5)]
    newest_first = sorted(episodes, reverse=True)
    store.link_episodes(Node, g, n.uuid, episodes)
    store.link_episodes(Node, g, n.uuid, episodes[:2])  # idempotent
    store.link_episodes(Node, g, m.uuid, episodes[1:2])
    assert store.episodes_of(Node, g, [n.uuid]) == {n.uuid: (newest_first, False)}
    assert store.episodes_of(Node, g, [n.uuid], limit=3) == {n.uuid: (newest_first[:3], True)}
    assert store.episodes_of(Node, g, [n.uuid], limit=5) == {n.uuid: (newest_first, False)}
    # More uuids than a page: the same answers; a record without links has none.
    unlinked = [new_id() for _ in range(150)]
    many = store.episodes_of(Node, g, [n.uuid, m.uuid, *unlinked], limit=3)
    assert many == {
        n.uuid: (newest_first[:3], True),
        m.uuid: ([episodes[1]], False),
        **{u: ([], False) for u in unlinked},
    }
    assert store.episodes_of(Node, g, []) == {}
    assert store.episodes_of(Edge, g, [n.uuid]) == {n.uuid: ([], False)}  # kinds apart
    assert store.linked_to_episodes(Node, g, [episodes[0]]) == [n.uuid]
    assert sorted(store.linked_to_episodes(Node, g, episodes[:2])) == sorted([n.uuid, m.uuid])
    assert store.linked_to_episodes(Node, g, []) == []
    assert store.linked_to_episodes(Edge, g, episodes) == []
    by_episode = store.linked_by_episode(Node, g, [episodes[0], episodes[1], new_id()])
    assert {e: sorted(u) for e, u in by_episode.items()} == {
        episodes[0]: [n.uuid],
        episodes[1]: sorted([n.uuid, m.uuid]),
    }
    assert store.linked_by_episode(Node, g, []) == {}


def test_provenance_is_read_per_graph(store: Store) -> None:
    g, other = new_id(), new_id()
    n = node(g, "a")
    store.insert([n])
    episodes = [new_id() for _ in range(3)]
    store.link_episodes(Node, g, n.uuid, episodes)
    store.link_episodes(Observation, other, n.uuid, episodes[:1])  # another kind, graph
    assert store.episodes_of(Node, other, [n.uuid]) == {n.uuid: ([], False)}
    assert store.episodes_of(Node, other, [n.uuid], limit=1) == {n.uuid: ([], False)}
    assert store.linked_to_episodes(Node, other, episodes) == []
    assert store.linked_by_episode(Node, other, episodes) == {}
    assert store.linked_to_episodes(Observation, other, episodes) == [n.uuid]
    assert store.linked_to_episodes(Observation, g, episodes) == []


def test_delete_takes_the_records_links_and_vectors(store: Store) -> None:
    g = new_id()
    a, b = node(g, "a"), node(g, "b")
    e = edge(g, a, b)
    ep, kept = episode(g, "hello"), episode(g, "kept")
    store.insert([a, b, e, ep, kept])
    store.link_episodes(Node, g, a.uuid, [ep.uuid, kept.uuid])
    store.link_episodes(Node, g, b.uuid, [ep.uuid])
    store.link_episodes(Edge, g, e.uuid, [ep.uuid, kept.uuid])
    vector = unit([1, 0, 0])
    store.set_embeddings(Node, g, [(a.uuid, vector), (b.uuid, vector)])
    store.set_embeddings(Edge, g, [(e.uuid, vector)])

    # A node: its vector and its own links go, the rest stay.
    assert store.delete(Node, {"graph_uuid": g, "uuid": a.uuid}) == 1
    assert store.get_embeddings(Node, g, [a.uuid, b.uuid]).keys() == {b.uuid}
    assert store.episodes_of(Node, g, [a.uuid, b.uuid]) == {
        a.uuid: ([], False),
        b.uuid: ([ep.uuid], False),
    }
    assert store.linked_to_episodes(Node, g, [kept.uuid]) == []
    assert [u for u, _ in store.vector_search(Node, g, vector, scope={"graph_uuid": g})] == [b.uuid]
    # An episode: every link that cites it goes, whatever its kind.
    assert store.delete(Episode, {"graph_uuid": g, "uuid": ep.uuid}) == 1
    assert store.episodes_of(Node, g, [b.uuid]) == {b.uuid: ([], False)}
    assert store.episodes_of(Edge, g, [e.uuid]) == {e.uuid: ([kept.uuid], False)}
    assert store.linked_by_episode(Edge, g, [ep.uuid, kept.uuid]) == {kept.uuid: [e.uuid]}
    # An edge: its vector and links.
    assert store.delete(Edge, {"graph_uuid": g}) == 1
    assert store.get_embeddings(Edge, g, [e.uuid]) == {}
    assert store.linked_to_episodes(Edge, g, [kept.uuid]) == []
