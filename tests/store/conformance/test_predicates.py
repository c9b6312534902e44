"""The ``where`` predicates (graphrecall.domain.predicates), as every backend must evaluate
them: each case gives the records it selects from a fixed corpus, checked through find,
count, matching and list_page alike.

Rules beyond the predicates' own docstrings: ``Column`` ``ne`` holds for NULL (NULL is not
the value); order comparisons and ``eq`` never hold for NULL; ``in ()`` holds for
nothing; a ``JsonPath`` comparison only compares values of one type (numbers with
numbers, text with text) and holds when any array element does; ``Regex`` never matches
NULL.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

import pytest

from graphrecall.domain import predicates as p
from graphrecall.domain.ids import new_id
from graphrecall.domain.models import (
    DocumentSummary,
    Edge,
    Episode,
    Memory,
    Node,
    PageRequest,
    Record,
)
from graphrecall.store import Store
from tests.store.conformance.records import at, edge, episode, memory, node


@dataclass
class Corpus:
    graph: str
    space: str
    names: dict[str, str]  # record uuid -> its name in the cases below


def _corpus(store: Store) -> Corpus:
    g, space = new_id(), new_id()
    names: dict[str, str] = {}

    def named(name: str, record: Record) -> Record:
        names[record.uuid] = name
        return record

    ann = named(
        "ann",
        node(
            g,
            "Ann",
            labels=["Entity", "Person"],
            summary="likes Tea",
            attributes={"age": 31, "tags": ["x", "y"], "city": "Paris", "ok": True},
        ),
    )
    bob = named(
        "bob",
        node(
            g,
            "Bob",
            labels=["Entity", "Person"],
            summary=None,
            attributes={"age": 25.5, "tags": "x", "city": None},
        ),
    )
    acme = named(
        "acme",
        node(g, "ACME", labels=["Entity", "Company"], summary="tea maker", attributes=None),
    )
    paris = named("paris", node(g, "Paris", labels=["Place"], summary="city", attributes={}))
    store.insert([ann, bob, acme, paris])
    e1 = named("works", edge(g, ann, acme, "Ann works at ACME", name="WORKS_AT", t=1))
    e2 = named("lives", edge(g, ann, paris, "Ann lives in Paris", name="LIVES_IN", t=2))
    e3 = named("knows", edge(g, ann, bob, "Ann knows Bob", name="KNOWS", t=3))
    store.insert([e1, e2, e3])
    # Roles for the role leg's look-up (retrieval/engine.py: _role_leg).
    ep1 = named(
        "ep1",
        episode(g, "first", t=1, metadata={"source": "chat", "n": 1}).model_copy(
            update={"role": "user"}
        ),
    )
    ep2 = named(
        "ep2",
        episode(g, "second", t=2, metadata={"source": "mail", "n": 2}).model_copy(
            update={"role": "assistant"}
        ),
    )
    ep3 = named("ep3", episode(g, "third", t=3, metadata=None))
    store.insert([ep1, ep2, ep3])
    store.link_episodes(Node, g, ann.uuid, [ep1.uuid, ep2.uuid])
    store.link_episodes(Node, g, acme.uuid, [ep1.uuid])
    store.link_episodes(Edge, g, e1.uuid, [ep1.uuid])
    store.link_episodes(Edge, g, e2.uuid, [ep2.uuid])
    memories = [
        named("m_root", memory(space, "root", tree="", meta={"kind": "note", "n": 1})),
        named("m_work", memory(space, "work", tree="work", meta={"kind": "task", "n": 2})),
        named(
            "m_deep",
            memory(
                space,
                "deep",
                tree="work.projects",
                meta={"kind": "task", "tags": ["a", "b"], "owner": {"id": 7}},
            ),
        ),
        named("m_workshop", memory(space, "shop", tree="workshop", meta={"kind": "note"})),
        named(
            "m_point",
            memory(space, "p", tree="t", temporal_start=at(10), temporal_end=at(10)),
        ),
        named(
            "m_span",
            memory(space, "s", tree="t", temporal_start=at(10), temporal_end=at(20)),
        ),
        named("m_open", memory(space, "o", tree="t", temporal_start=None, temporal_end=None)),
    ]
    store.insert(memories)
    return Corpus(g, space, names)


@pytest.fixture()
def corpus(store: Store) -> Iterator[Corpus]:
    yield _corpus(store)


NODE_CASES: list[tuple[p.Predicate, set[str]]] = [
    (p.Column("name", "eq", "Ann"), {"ann"}),
    (p.Column("summary", "ne", "city"), {"ann", "bob", "acme"}),  # NULL is not "city"
    (p.Column("summary", "eq", None), set()),
    (p.Column("summary", "is_null"), {"bob"}),
    (p.Column("summary", "is_not_null"), {"ann", "acme", "paris"}),
    (p.Column("name", "gt", "B"), {"bob", "paris"}),  # text order, case-sensitive
    (p.Column("name", "lte", "Ann"), {"ann", "acme"}),
    (p.Column("name", "in", ("Ann", "Paris", "Zed")), {"ann", "paris"}),
    (p.Column("name", "in", ()), set()),
    (p.JsonPath("attributes", "age", "gt", 30), {"ann"}),
    (p.JsonPath("attributes", "age", "lt", 30), {"bob"}),
    (p.JsonPath("attributes", "age", "gte", "1"), set()),  # text never compares to numbers
    (p.JsonPath("attributes", "tags", "eq", "x"), {"ann", "bob"}),  # an array element
    (p.JsonPath("attributes", "tags", "ne", "y"), {"bob", "acme", "paris"}),
    (p.JsonPath("attributes", "tags", "in", ("y", "z")), {"ann"}),
    (p.JsonPath("attributes", "city", "contains", "ari"), {"ann"}),
    (p.JsonPath("attributes", "city", "contains", "ARI"), set()),  # case-sensitive
    (p.JsonPath("attributes", "city", "is_null"), {"bob", "acme", "paris"}),  # null, missing
    (p.JsonPath("attributes", "city", "is_not_null"), {"ann"}),
    (p.JsonPath("attributes", "ok", "eq", True), {"ann"}),
    (p.HasAnyLabel(("Company", "Place")), {"acme", "paris"}),
    (p.HasAnyLabel(("Nothing",)), set()),
    (p.LinkedToEpisodes(("EP1",)), {"ann", "acme"}),
    (p.EpisodeMetadata(p.JsonPath("metadata", "source", "eq", "mail")), {"ann"}),
    (p.Regex("summary", "^[Ll]ikes"), {"ann"}),
    (p.Regex("summary", "TEA", ignore_case=True), {"ann", "acme"}),
    (p.Regex("summary", "TEA"), set()),
    (p.JsonContains("attributes", {"tags": ["y"]}), {"ann"}),
    (p.JsonContains("attributes", {"age": 31}), {"ann"}),
    (p.JsonContains("attributes", {"city": None}), {"bob"}),
    (p.JsonContains("attributes", {}), {"ann", "bob", "paris"}),  # every object, not NULL
    (p.JsonPathMatch("attributes", '$.age > 30 || $.tags == "x"'), {"ann", "bob"}),
    (
        p.And((p.HasAnyLabel(("Person",)), p.Not(p.Column("name", "eq", "Bob")))),
        {"ann"},
    ),
    (p.Or((p.Column("name", "eq", "Bob"), p.HasAnyLabel(("Place",)))), {"bob", "paris"}),
    (p.Not(p.Column("summary", "eq", "city")), {"ann", "acme"}),  # NOT (NULL = x) is NULL
    (p.Nothing(), set()),
]

EDGE_CASES: list[tuple[p.Predicate, set[str]]] = [
    (p.EndpointLabels(("Company",), all_endpoints=False), {"works"}),
    (p.EndpointLabels(("Person",), all_endpoints=True), {"knows"}),
    (p.EndpointLabels(("Person", "Place"), all_endpoints=True), {"lives", "knows"}),
    (p.LinkedToEpisodes(("EP2",)), {"lives"}),
    (p.EpisodeMetadata(p.JsonPath("metadata", "n", "gte", 1)), {"works", "lives"}),
    (p.Column("created_at", "gte", at(2)), {"lives", "knows"}),
]

EPISODE_CASES: list[tuple[p.Predicate, set[str]]] = [
    (p.LinkedToEpisodes(("EP1", "EP3")), {"ep1", "ep3"}),
    (p.EpisodeMetadata(p.JsonPath("metadata", "source", "eq", "chat")), {"ep1"}),
    (p.JsonPath("metadata", "n", "is_null"), {"ep3"}),
    (p.Column("role", "eq", "user"), {"ep1"}),
    (p.Column("role", "ne", "assistant"), {"ep1", "ep3"}),  # ep3 has no role
]

MEMORY_CASES: list[tuple[p.Predicate, set[str]]] = [
    (p.PathUnder("tree", "work"), {"m_work", "m_deep"}),  # not "workshop"
    (p.PathUnder("tree", ""), set()),  # the root holds everything: filled in below
    (p.PathUnder("tree", "work.projects"), {"m_deep"}),
    (p.InRange("temporal_start", "temporal_end", "contains", at(10)), {"m_point", "m_span"}),
    (p.InRange("temporal_start", "temporal_end", "contains", at(20)), set()),  # half-open
    (p.InRange("temporal_start", "temporal_end", "overlaps", at(0), at(10)), set()),
    (
        p.InRange("temporal_start", "temporal_end", "overlaps", at(0), at(11)),
        {"m_point", "m_span"},
    ),
    (
        p.InRange("temporal_start", "temporal_end", "within", at(10), at(20)),
        {"m_point", "m_span"},
    ),
    (p.InRange("temporal_start", "temporal_end", "within", at(10), at(11)), {"m_point"}),
    (p.InRange("temporal_start", "temporal_end", "before", at(20)), {"m_point", "m_span"}),
    (p.InRange("temporal_start", "temporal_end", "before", at(19)), {"m_point"}),
    (p.InRange("temporal_start", "temporal_end", "after", at(9)), {"m_point", "m_span"}),
    (p.InRange("temporal_start", "temporal_end", "after", at(10)), set()),
    (p.JsonContains("meta", {"kind": "task", "owner": {"id": 7}}), {"m_deep"}),
    (p.JsonContains("meta", {"tags": ["b"]}), {"m_deep"}),
    (p.JsonContains("meta", {"tags": "b"}), set()),  # a scalar never matches an array
    (p.JsonPathMatch("meta", '$.kind == "note" && $.n == 1'), {"m_root"}),
    (p.JsonPathMatch("meta", '$.tags[*] starts with "a"'), {"m_deep"}),
    (p.JsonPathMatch("meta", "exists($.owner.id)"), {"m_deep"}),
]


def _resolve(pred: p.Predicate, corpus: Corpus) -> p.Predicate:
    """The cases name episodes EP1..EP3; the corpus knows their uuids."""
    by_name = {name: uuid for uuid, name in corpus.names.items()}
    match pred:
        case p.LinkedToEpisodes(episodes):
            return p.LinkedToEpisodes(tuple(by_name[e.lower()] for e in episodes))
    return pred


def _check(
    store: Store,
    corpus: Corpus,
    kind: type[Record],
    scope_field: str,
    case: tuple[p.Predicate, set[str]],
) -> None:
    pred, names = case
    pred = _resolve(pred, corpus)
    owner = corpus.space if scope_field == "space_uuid" else corpus.graph
    scope = {scope_field: owner}
    everyone = [r.uuid for r in store.find(kind, scope)]
    if pred == p.PathUnder("tree", ""):
        names = {corpus.names[u] for u in everyone}
    expected = sorted(u for u in everyone if corpus.names[u] in names)
    assert [r.uuid for r in store.find(kind, scope, where=pred)] == expected, pred
    assert store.count(kind, scope, pred) == len(expected), pred
    assert store.matching(kind, scope, everyone, pred) == set(expected), pred
    page = store.list_page(kind, scope, PageRequest(page_size=100, order="asc"), where=pred)
    assert [r.uuid for r in page.items] == expected and page.total_size == len(expected), pred


@pytest.mark.parametrize("case", NODE_CASES, ids=repr)
def test_node_predicates(store: Store, corpus: Corpus, case: tuple[p.Predicate, set[str]]) -> None:
    _check(store, corpus, Node, "graph_uuid", case)


@pytest.mark.parametrize("case", EDGE_CASES, ids=repr)
def test_edge_predicates(store: Store, corpus: Corpus, case: tuple[p.Predicate, set[str]]) -> None:
    _check(store, corpus, Edge, "graph_uuid", case)


@pytest.mark.parametrize("case", EPISODE_CASES, ids=repr)
def test_episode_predicates(
    store: Store, corpus: Corpus, case: tuple[p.Predicate, set[str]]
) -> None:
    _check(store, corpus, Episode, "graph_uuid", case)


@pytest.mark.parametrize("case", MEMORY_CASES, ids=repr)
def test_memory_predicates(
    store: Store, corpus: Corpus, case: tuple[p.Predicate, set[str]]
) -> None:
    _check(store, corpus, Memory, "space_uuid", case)


def test_an_unknown_field_is_refused(store: Store) -> None:
    with pytest.raises(ValueError):
        store.find(Node, {"graph_uuid": new_id()}, where=p.Column("no_such_field", "eq", 1))


def test_document_summaries_by_their_episodes_metadata(store: Store) -> None:
    """A document summary passes an episode-metadata filter when an episode of its
    document (in its graph: document ids are the caller's, not unique) passes it."""
    g, other = new_id(), new_id()

    def summary(graph: str, document_id: str) -> DocumentSummary:
        return DocumentSummary(
            uuid=new_id(), graph_uuid=graph, document_id=document_id, summary="s", created_at=at(1)
        )

    a, b, c = summary(g, "a.pdf"), summary(g, "b.pdf"), summary(other, "b.pdf")
    store.insert(
        [
            episode(g, "1", document_id="a.pdf", metadata={"page": 1}),
            episode(g, "2", document_id="a.pdf", metadata={"page": 2}),
            episode(g, "3", document_id="b.pdf", metadata={"page": 3}),
            episode(other, "4", document_id="b.pdf", metadata={"page": 2}),
            a,
            b,
            c,
        ]
    )
    pred = p.EpisodeMetadata(p.JsonPath("metadata", "page", "eq", 2))
    assert store.find(DocumentSummary, {"graph_uuid": g}, where=pred) == [a]
    assert store.find(DocumentSummary, {"graph_uuid": other}, where=pred) == [c]
    three = p.EpisodeMetadata(p.JsonPath("metadata", "page", "gte", 3))
    assert store.count(DocumentSummary, {"graph_uuid": g}, three) == 1
