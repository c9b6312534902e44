"""Embeddings and the two retrieval legs: text_search (BM25) and vector_search (cosine)."""

from __future__ import annotations

from contextlib import nullcontext

import numpy as np
import pytest

from graphrecall.domain import predicates as p
from graphrecall.domain.ids import new_id
from graphrecall.domain.models import Edge, Episode, Memory, Node, Observation, Record
from graphrecall.store import Store, open_store
from graphrecall.store.base import Bm25, Vector
from tests.store.conformance.records import (
    edge,
    episode,
    memory,
    node,
    observation,
    unit,
    uuids,
)


def facts(store: Store, graph: str, texts: list[str], **fields: object) -> list[Edge]:
    a, b = node(graph, "a"), node(graph, "b")
    records = [edge(graph, a, b, text, **fields) for text in texts]
    store.insert(records)
    return records


# -- embeddings ------------------------------------------------------------------------


def test_embeddings_round_trip_replace_and_missing(store: Store) -> None:
    g = new_id()
    a, b, c = node(g, "a"), node(g, "b"), node(g, "c")
    store.insert([a, b, c])
    assert sorted(store.missing_embeddings(Node, g)) == sorted([a.uuid, b.uuid, c.uuid])
    va = np.array([0.1, -2.5, 3.0e-7, 1.0e6], dtype=np.float32)
    store.set_embeddings(Node, g, [(a.uuid, va), (b.uuid, va * 2)])
    assert store.missing_embeddings(Node, g) == [c.uuid]
    got = store.get_embeddings(Node, g, [a.uuid, b.uuid, c.uuid, new_id()])
    assert got.keys() == {a.uuid, b.uuid}
    assert got[a.uuid].dtype == np.float32
    np.testing.assert_array_equal(got[a.uuid], va)
    np.testing.assert_array_equal(got[b.uuid], va * 2)
    store.set_embeddings(Node, g, [(a.uuid, va * 3)])  # replaces
    np.testing.assert_array_equal(store.get_embeddings(Node, g, [a.uuid])[a.uuid], va * 3)
    store.delete_embeddings(Node, g, [a.uuid])
    assert store.get_embeddings(Node, g, [a.uuid, b.uuid]).keys() == {b.uuid}
    assert sorted(store.missing_embeddings(Node, g)) == sorted([a.uuid, c.uuid])
    assert store.get_embeddings(Node, g, []) == {}
    store.delete_embeddings(Node, g, [])
    assert store.missing_embeddings(Node, new_id()) == []
    assert store.get_embeddings(Edge, g, [b.uuid]) == {}  # kinds apart


def test_embeddings_are_kept_per_owner(store: Store) -> None:
    g, other = new_id(), new_id()
    a = node(g, "a")
    store.insert([a])
    vector = unit([1, 2, 3])
    store.set_embeddings(Node, g, [(a.uuid, vector)])
    assert store.get_embeddings(Node, other, [a.uuid]) == {}
    store.delete_embeddings(Node, other, [a.uuid])  # not the owner's: nothing happens
    assert store.get_embeddings(Node, g, [a.uuid]).keys() == {a.uuid}
    assert store.missing_embeddings(Node, g) == []
    assert [u for u, _ in store.vector_search(Node, g, vector, scope={"graph_uuid": g})] == [a.uuid]
    # A vector stored under another owner is not the graph's: its record still needs one.
    b = node(g, "b")
    store.insert([b])
    store.set_embeddings(Node, other, [(b.uuid, vector)])
    assert store.missing_embeddings(Node, g) == [b.uuid]
    assert store.get_embeddings(Node, g, [b.uuid]) == {}
    store.set_embeddings(Node, g, [(b.uuid, vector)])
    assert store.missing_embeddings(Node, g) == []


def test_embeddings_read_back_after_a_search_follow_every_write(store: Store) -> None:
    """A backend may answer from the owner's matrix the vector leg has just loaded: what
    it returns still follows every write, and changing it changes nothing stored."""
    g = new_id()
    a, b = node(g, "a"), node(g, "b")
    store.insert([a, b])
    va, vb = unit([1, 0, 0]), unit([0, 1, 0])
    store.set_embeddings(Node, g, [(a.uuid, va), (b.uuid, vb)])
    scope = {"graph_uuid": g}
    assert [u for u, _ in store.vector_search(Node, g, va, scope=scope)] == [a.uuid, b.uuid]
    got = store.get_embeddings(Node, g, [b.uuid, a.uuid, new_id()])
    assert got.keys() == {a.uuid, b.uuid} and got[a.uuid].dtype == np.float32
    np.testing.assert_array_equal(got[a.uuid], va)
    np.testing.assert_array_equal(got[b.uuid], vb)
    if got[a.uuid].flags.writeable:
        got[a.uuid][:] = 0.0  # the caller's copy
    np.testing.assert_array_equal(store.get_embeddings(Node, g, [a.uuid])[a.uuid], va)
    assert store.vector_search(Node, g, va, scope=scope)[0][0] == a.uuid
    vc = unit([0, 0, 1])
    store.set_embeddings(Node, g, [(a.uuid, vc)])
    np.testing.assert_array_equal(store.get_embeddings(Node, g, [a.uuid])[a.uuid], vc)
    with store.transaction():
        store.set_embeddings(Node, g, [(a.uuid, va)])
        # The transaction's own write, before it commits.
        np.testing.assert_array_equal(store.get_embeddings(Node, g, [a.uuid])[a.uuid], va)
    store.vector_search(Node, g, va, scope=scope)
    store.delete_embeddings(Node, g, [b.uuid])
    assert store.get_embeddings(Node, g, [a.uuid, b.uuid]).keys() == {a.uuid}


def test_memories_are_owned_by_their_space(store: Store) -> None:
    space = new_id()
    m, n = memory(space, "one"), memory(space, "two")
    store.insert([m, n, memory(new_id(), "elsewhere")])
    assert sorted(store.missing_embeddings(Memory, space)) == sorted([m.uuid, n.uuid])
    vector = unit([3, 4])
    store.set_embeddings(Memory, space, [(m.uuid, vector)])
    assert store.missing_embeddings(Memory, space) == [n.uuid]
    assert store.get_embeddings(Memory, space, [m.uuid]).keys() == {m.uuid}
    hits = store.vector_search(Memory, space, vector, scope={"space_uuid": space})
    assert [u for u, _ in hits] == [m.uuid]
    store.delete_embeddings(Memory, space, [m.uuid])
    assert store.vector_search(Memory, space, vector, scope={"space_uuid": space}) == []


# -- vector search -----------------------------------------------------------------------


def reference(
    vectors: dict[str, Vector], query: Vector, allowed: set[str], limit: int
) -> list[tuple[str, float]]:
    """Exact cosine ranking in numpy, ties by uuid."""
    scored = [(u, float(np.dot(v, query))) for u, v in vectors.items() if u in allowed]
    return sorted(scored, key=lambda h: (-h[1], h[0]))[:limit]


def same_hits(found: list[tuple[str, float]], expected: list[tuple[str, float]]) -> None:
    assert [u for u, _ in found] == [u for u, _ in expected]
    assert [s for _, s in found] == pytest.approx([s for _, s in expected], abs=1e-5)


def embedded_facts(store: Store, g: str, count: int, seed: int) -> tuple[dict[str, Vector], Vector]:
    """``count`` facts of graph ``g`` with random unit vectors, and a random query."""
    records = facts(store, g, [f"fact {i}" for i in range(count)])
    rng = np.random.default_rng(seed)
    vectors = {e.uuid: unit(rng.normal(size=16).tolist()) for e in records}
    store.set_embeddings(Edge, g, list(vectors.items()))
    return vectors, unit(rng.normal(size=16).tolist())


def test_vector_search_is_exact_cosine_best_first(store: Store) -> None:
    g = new_id()
    vectors, query = embedded_facts(store, g, 60, seed=7)
    everyone = set(vectors)
    for limit in (1, 5, 60, 100):
        found = store.vector_search(Edge, g, query, scope={"graph_uuid": g}, limit=limit)
        same_hits(found, reference(vectors, query, everyone, limit))
    assert store.vector_search(Edge, new_id(), query, scope={"graph_uuid": g}) == []


def test_reading_vectors_ahead_changes_no_answer(store: Store) -> None:
    g = new_id()
    vectors, query = embedded_facts(store, g, 40, seed=8)
    store.prefetch_vectors(Edge, g)  # an owner never searched: read ahead where kept
    found = store.vector_search(Edge, g, query, scope={"graph_uuid": g}, limit=10)
    same_hits(found, reference(vectors, query, set(vectors), 10))
    later = facts(store, g, ["a later fact"])[0]  # written after the read ahead
    vectors[later.uuid] = query
    store.set_embeddings(Edge, g, [(later.uuid, query)])
    store.prefetch_vectors(Edge, g)  # in memory already: caught up by the search
    again = store.vector_search(Edge, g, query, scope={"graph_uuid": g}, limit=10)
    same_hits(again, reference(vectors, query, set(vectors), 10))
    assert again[0][0] == later.uuid
    store.prefetch_vectors(Edge, new_id())  # an owner with no vectors: nothing to read


def test_vector_search_filters_while_choosing_candidates(store: Store) -> None:
    g = new_id()
    near = facts(store, g, [f"near {i}" for i in range(20)], name="NEAR")
    far = facts(store, g, [f"far {i}" for i in range(5)], name="FAR", expired=True)
    query = unit([1, 0, 0, 0])
    vectors: dict[str, Vector] = {}
    for i, e in enumerate(near):  # the nearest rows, all filtered out below
        vectors[e.uuid] = unit([1, 0.01 * (i + 1), 0, 0])
    for i, e in enumerate(far):
        vectors[e.uuid] = unit([0.1 * (i + 1), 1, 0, 0])
    store.set_embeddings(Edge, g, list(vectors.items()))
    allowed = {e.uuid for e in far}
    by_scope = store.vector_search(Edge, g, query, scope={"graph_uuid": g, "name": "FAR"}, limit=3)
    same_hits(by_scope, reference(vectors, query, allowed, 3))
    where = p.Column("expired_at", "is_not_null")
    by_where = store.vector_search(Edge, g, query, scope={"graph_uuid": g}, where=where, limit=3)
    same_hits(by_where, reference(vectors, query, allowed, 3))
    picked = {near[3].uuid, far[0].uuid}
    by_uuid = store.vector_search(
        Edge, g, query, scope={"graph_uuid": g, "uuid": sorted(picked)}, limit=10
    )
    same_hits(by_uuid, reference(vectors, query, picked, 10))
    nothing = store.vector_search(Edge, g, query, scope={"graph_uuid": g}, where=p.Nothing())
    assert nothing == []


def test_vector_search_breaks_ties_by_uuid(store: Store) -> None:
    g = new_id()
    records = facts(store, g, [f"same {i}" for i in range(30)])
    same, better = unit([1, 1, 0]), unit([1, 0.9, 0])
    vectors = {e.uuid: same for e in records}
    vectors[records[17].uuid] = better
    # Written in an order unlike uuid order, in two batches.
    items = sorted(vectors.items(), key=lambda kv: kv[0][::-1])
    store.set_embeddings(Edge, g, items[:11])
    store.set_embeddings(Edge, g, items[11:])
    query = unit([1, 1, 0])
    for limit in (1, 4, 13, 30):
        found = store.vector_search(Edge, g, query, scope={"graph_uuid": g}, limit=limit)
        same_hits(found, reference(vectors, query, set(vectors), limit))
        where = p.Column("uuid", "ne", records[0].uuid)
        found = store.vector_search(
            Edge, g, query, scope={"graph_uuid": g}, where=where, limit=limit
        )
        allowed = set(vectors) - {records[0].uuid}
        same_hits(found, reference(vectors, query, allowed, limit))


def test_vector_search_follows_writes_and_deletes(store: Store) -> None:
    g = new_id()
    a, b = facts(store, g, ["a", "b"])
    query = unit([1, 0])
    store.set_embeddings(Edge, g, [(a.uuid, unit([1, 0.1])), (b.uuid, unit([1, 0.5]))])
    assert [u for u, _ in store.vector_search(Edge, g, query, scope={"graph_uuid": g})] == [
        a.uuid,
        b.uuid,
    ]
    store.set_embeddings(Edge, g, [(b.uuid, unit([1, 0]))])  # replaced: now the nearest
    assert [u for u, _ in store.vector_search(Edge, g, query, scope={"graph_uuid": g})] == [
        b.uuid,
        a.uuid,
    ]
    store.delete_embeddings(Edge, g, [b.uuid])
    assert [u for u, _ in store.vector_search(Edge, g, query, scope={"graph_uuid": g})] == [a.uuid]
    with pytest.raises(RuntimeError), store.transaction():
        store.set_embeddings(Edge, g, [(b.uuid, unit([1, 0]))])
        raise RuntimeError("roll back")
    assert [u for u, _ in store.vector_search(Edge, g, query, scope={"graph_uuid": g})] == [a.uuid]


# -- text search -------------------------------------------------------------------------


def test_text_search_matches_whole_stemmed_terms_only(store: Store) -> None:
    g = new_id()
    texts = {
        "tea": "Alice likes tea",
        "teas": "Bob liked the TEAS",
        "team": "the team plays",
        "steam": "steam engine",
        "tearoom": "a tearoom downtown",
        "accent": "Thé in a café",
        "other": "nothing relevant",
    }
    records = dict(zip(texts, facts(store, g, list(texts.values())), strict=True))

    def hits(*terms: str) -> set[str]:
        found = store.text_search(Edge, {"graph_uuid": g}, list(terms))
        assert all(score > 0 for _, score in found)
        return {name for name, r in records.items() if r.uuid in {u for u, _ in found}}

    assert hits("tea") == {"tea", "teas"}  # stemmed, case folded; no prefix or substring
    assert hits("Teas") == {"tea", "teas"}
    assert hits("liking") == {"tea", "teas"}  # like / liked / likes / liking
    assert hits("cafe") == {"accent"}  # diacritics removed
    assert hits("tea", "steam") == {"tea", "teas", "steam"}  # any term
    assert hits("zebra") == set()
    assert store.text_search(Edge, {"graph_uuid": g}, []) == []
    assert store.text_search(Edge, {"graph_uuid": new_id()}, ["tea"]) == []


def test_text_search_ranks_by_bm25_ties_by_uuid(store: Store) -> None:
    g = new_id()
    twins = facts(store, g, ["green tea with lemon"] * 6)
    twice = facts(store, g, ["tea tea with lemon"])[0]
    short = facts(store, g, ["tea"])[0]
    facts(store, g, [f"unrelated fact number {i}" for i in range(10)])
    found = store.text_search(Edge, {"graph_uuid": g}, ["tea"], limit=100)
    order = [u for u, _ in found]
    scores = dict(found)
    assert order[:2] == [short.uuid, twice.uuid]  # shorter record, more repeats
    assert order[2:] == sorted(e.uuid for e in twins)  # equal scores: by uuid
    assert len({scores[e.uuid] for e in twins}) == 1
    assert scores[short.uuid] > scores[twice.uuid] > scores[twins[0].uuid]
    assert found == sorted(found, key=lambda h: (-h[1], h[0]))
    for limit in (1, 3, 5):
        assert store.text_search(Edge, {"graph_uuid": g}, ["tea"], limit=limit) == found[:limit]
    # The rarer term weighs more.
    lemon_only = facts(store, g, ["lemon"])[0]
    rare = facts(store, g, ["bergamot"])[0]
    both = store.text_search(Edge, {"graph_uuid": g}, ["lemon", "bergamot"])
    assert dict(both)[rare.uuid] > dict(both)[lemon_only.uuid]


def test_text_search_filters_before_the_limit(store: Store) -> None:
    g = new_id()
    best = facts(store, g, ["tea"] * 4, name="BEST")
    worse = facts(store, g, ["tea and something else entirely"] * 3, name="WORSE")
    facts(store, new_id(), ["tea"])  # another graph
    scope = {"graph_uuid": g}
    found = store.text_search(Edge, {**scope, "name": "WORSE"}, ["tea"], limit=2)
    assert [u for u, _ in found] == sorted(e.uuid for e in worse)[:2]
    where = p.Column("name", "eq", "WORSE")
    assert store.text_search(Edge, scope, ["tea"], where=where, limit=2) == found
    picked = [best[0].uuid, worse[0].uuid]
    found = store.text_search(Edge, {**scope, "uuid": picked}, ["tea"])
    assert [u for u, _ in found] == picked
    assert store.text_search(Edge, scope, ["tea"], where=p.Nothing()) == []


def test_text_search_with_other_bm25_constants(store: Store) -> None:
    g = new_id()
    long_twice = facts(store, g, ["tea " * 2 + "with a long tail of words " * 4])[0]
    short_once = facts(store, g, ["tea alone"])[0]
    facts(store, g, [f"unrelated {i}" for i in range(5)])
    standard = store.text_search(Edge, {"graph_uuid": g}, ["tea"])
    assert [u for u, _ in standard] == [short_once.uuid, long_twice.uuid]
    # b = 0: length no longer counts, so two occurrences beat one.
    flat = store.text_search(Edge, {"graph_uuid": g}, ["tea"], bm25=Bm25(k1=1.2, b=0.0))
    assert [u for u, _ in flat] == [long_twice.uuid, short_once.uuid]
    assert flat == sorted(flat, key=lambda h: (-h[1], h[0]))


@pytest.mark.parametrize(
    ("kind", "make"),
    [
        (Episode, lambda g, text: episode(g, text)),
        (Node, lambda g, text: node(g, "someone", summary=text)),
        (Observation, lambda g, text: observation(g, "obs", text)),
    ],
)
def test_text_search_over_each_graph_kind(store: Store, kind: type[Record], make: object) -> None:
    g = new_id()
    assert callable(make)
    hit, miss = make(g, "the harbour at dawn"), make(g, "a mountain at dusk")
    store.insert([hit, miss, make(new_id(), "harbour")])
    found = store.text_search(kind, {"graph_uuid": g}, ["harbours"])
    assert [u for u, _ in found] == [hit.uuid]


def test_text_search_over_memories(store: Store) -> None:
    space = new_id()
    hit, miss = memory(space, "the harbour at dawn"), memory(space, "a mountain")
    store.insert([hit, miss, memory(new_id(), "harbour")])
    found = store.text_search(Memory, {"space_uuid": space}, ["harbour"])
    assert [u for u, _ in found] == [hit.uuid]


def test_a_filter_naming_a_few_records_ranks_them_the_same(store: Store) -> None:
    """A filter that names a few records (episode links, uuids) may be served by another
    plan than a broad one; the results must be the same records, scores and order."""
    g = new_id()
    records = facts(store, g, [f"tea number {i} " + "word " * (i % 4) for i in range(12)])
    episodes = [new_id() for _ in range(3)]
    for i, record in enumerate(records):
        store.link_episodes(Edge, g, record.uuid, [episodes[i % 3]])
    linked = {r.uuid for i, r in enumerate(records) if i % 3 == 0}
    by_link = p.LinkedToEpisodes((episodes[0],))
    broad = p.Or((by_link, p.Nothing()))  # the same rows, not recognisably few
    scope = {"graph_uuid": g}
    few = store.text_search(Edge, scope, ["tea", "word"], where=by_link, limit=3)
    assert few == store.text_search(Edge, scope, ["tea", "word"], where=broad, limit=3)
    assert {u for u, _ in few} <= linked and len(few) == 3
    by_uuid = p.Column("uuid", "in", tuple(sorted(linked)))
    assert few == store.text_search(Edge, scope, ["tea", "word"], where=by_uuid, limit=3)
    rng = np.random.default_rng(3)
    store.set_embeddings(Edge, g, [(r.uuid, unit(rng.normal(size=8).tolist())) for r in records])
    query = unit(rng.normal(size=8).tolist())
    near = store.vector_search(Edge, g, query, scope=scope, where=by_link, limit=3)
    assert near == store.vector_search(Edge, g, query, scope=scope, where=broad, limit=3)
    assert near == store.vector_search(Edge, g, query, scope=scope, where=by_uuid, limit=3)
    assert {u for u, _ in near} <= linked and len(near) == 3


def test_a_memory_id_is_unique_per_space_only(store: Store) -> None:
    """Two spaces hold a memory of the same id (issue 25: a global id was an existence
    oracle); each space reads, searches, updates, embeds and deletes only its own."""
    a, b = new_id(), new_id()
    shared = new_id()
    mine = memory(a, "harbour lights of space a", uuid=shared)
    theirs = memory(b, "harbour fog of space b", uuid=shared)
    store.insert([mine, theirs])
    with pytest.raises(Exception), store.transaction():  # noqa: B017 - the backend's error
        store.insert([memory(a, "again", uuid=shared)])
    assert store.get(Memory, shared, {"space_uuid": a}) == mine
    assert store.get(Memory, shared, {"space_uuid": b}) == theirs
    store.update(mine.model_copy(update={"content": "harbour lights rewritten", "version": 2}))
    assert store.get(Memory, shared, {"space_uuid": b}) == theirs
    found = store.text_search(Memory, {"space_uuid": b}, ["harbour"])
    assert [u for u, _ in found] == [shared]
    assert store.text_search(Memory, {"space_uuid": b}, ["rewritten"]) == []
    vector_a, vector_b = unit([1.0, 0.0, 0.0]), unit([0.0, 1.0, 0.0])
    store.set_embeddings(Memory, a, [(shared, vector_a)])
    store.set_embeddings(Memory, b, [(shared, vector_b)])
    assert np.allclose(store.get_embeddings(Memory, a, [shared])[shared], vector_a)
    assert np.allclose(store.get_embeddings(Memory, b, [shared])[shared], vector_b)
    assert store.delete(Memory, {"space_uuid": a, "uuid": shared}) == 1
    assert store.get(Memory, shared, {"space_uuid": a}) is None
    assert store.get(Memory, shared, {"space_uuid": b}) == theirs
    assert store.get_embeddings(Memory, b, [shared]).keys() == {shared}
    assert store.missing_embeddings(Memory, a) == []


# -- bulk loads ----------------------------------------------------------------------------


def test_a_bulk_load_searches_as_rows_inserted_one_by_one(store_url: str) -> None:
    """``maintenance.bulk_load`` (benchmark builds) may suspend per-row index upkeep; the
    rows it loads must rank as the same rows loaded the ordinary way, lexically and by
    vector, and so must rows added after it."""
    texts = ["Ada drinks green tea", "Bo drinks coffee daily", "tea with Ada in Lisbon"]
    vectors = [unit([1, 0, 0, 0]), unit([0, 1, 0, 0]), unit([1, 1, 0, 0])]
    answers = []
    for bulk in (False, True):
        # A second, empty store beside the fixture's: its file, or its schema + "1".
        url = store_url.replace(".db", "-bulk.db") if bulk else store_url
        url = url + "1" if bulk and url.startswith("postgresql") else url
        store = open_store(url)
        try:
            g = new_id()
            a, b = node(g, "a"), node(g, "b")
            records = [edge(g, a, b, text) for text in texts]
            with store.maintenance.bulk_load() if bulk else nullcontext():
                store.insert([a, b, *records])
                store.set_embeddings(Edge, g, list(zip(uuids(records), vectors, strict=True)))
            later = edge(g, a, b, "Ada brews tea at dawn")
            store.insert([later])
            store.set_embeddings(Edge, g, [(later.uuid, unit([1, 0, 1, 0]))])
            order = {u: i for i, u in enumerate(uuids([*records, later]))}
            lexical = store.text_search(Edge, {"graph_uuid": g}, ["ada", "tea"])
            nearest = store.vector_search(Edge, g, unit([1, 0.2, 0, 0]), scope={"graph_uuid": g})
            answers.append(
                (
                    [(order[u], round(s, 6)) for u, s in lexical],
                    [(order[u], round(s, 6)) for u, s in nearest],
                )
            )
        finally:
            store.close()
    assert answers[0] == answers[1]
    assert len(answers[0][0]) == 3 and len(answers[0][1]) == 4
