"""Filters select the same records on PostgreSQL as on SQLite (compiled to SQL by
``store/postgres/predicates.py``), regular expressions and JSON edge cases included; the
documented differences are tested as differences."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from graphrecall.domain import predicates as p
from graphrecall.domain.errors import BadRequest
from graphrecall.domain.models import Edge, Episode, Memory, Node, Record
from graphrecall.retrieval.memory_filters import grep_filter, tree_filter
from graphrecall.store import Store, open_store
from tests.store.postgres import corpus as corpora

Pair = tuple[Store, Store, corpora.Corpus]


@pytest.fixture()
def pair(tmp_path: Path, pg_url: str, open_pg: Callable[[str], Store]) -> Iterator[Pair]:
    corpus = corpora.build(seed=11)
    odd = Memory(
        uuid="01990000-0000-7000-8000-0000000003aa",
        space_uuid=corpus.space,
        content="line one\nline two: Zoë's café, 42 rock-n-roll\n",
        meta={
            "n": 1.5,
            "flag": True,
            "one": 1,
            "s": "10",
            "nested": {"a": [1, {"b": "c"}]},
            "list": ["x", 2, None, True],
            "empty": {},
            "null": None,
            'q"k': "quoted",
        },
        tree="work.projects.alpha",
        version_hash="odd",
        created_at="2026-01-01T00:00:00.000000Z",
    )
    corpus.memories.append(odd)
    corpus.vectors[odd.uuid] = corpus.vectors[corpus.memories[0].uuid]
    sqlite = open_store(tmp_path / "predicates.db")
    pg = open_pg(pg_url)
    for store in (sqlite, pg):
        corpora.write(store, corpus)
    yield sqlite, pg, corpus
    sqlite.close()


def same(pair: Pair, kind: type[Record], scope: dict[str, str], pred: p.Predicate) -> int:
    sqlite, pg, _ = pair
    want = [r.uuid for r in sqlite.find(kind, scope, where=pred)]
    got = [r.uuid for r in pg.find(kind, scope, where=pred)]
    assert got == want, pred
    assert pg.count(kind, scope, pred) == len(want)
    return len(want)


MEMORY_FILTERS: list[p.Predicate] = [
    p.JsonPath("meta", "kind", "eq", "note"),
    p.JsonPath("meta", "kind", "ne", "note"),
    p.JsonPath("meta", "n", "gt", 30),
    p.JsonPath("meta", "n", "lte", 1.5),
    p.JsonPath("meta", "n", "in", (1, 2, 3, 1.5, "4")),
    p.JsonPath("meta", "tags", "eq", "a"),  # any element of an array
    p.JsonPath("meta", "tags", "in", ("1", "2")),
    p.JsonPath("meta", "kind", "contains", "ot"),
    p.JsonPath("meta", "flag", "eq", True),
    p.JsonPath("meta", "one", "eq", True),  # SQLite: true is the integer 1
    p.JsonPath("meta", "s", "gt", 9),  # text is not a number
    p.JsonPath("meta", "s", "gt", "1"),
    p.JsonPath("meta", "null", "is_null"),
    p.JsonPath("meta", "missing", "is_null"),
    p.JsonPath("meta", "nested", "is_not_null"),
    p.JsonPath("meta", "nested", "eq", "c"),  # an object's values, one level
    p.JsonPath("meta", "list", "eq", 2),
    p.JsonContains("meta", {"kind": "fact"}),
    p.JsonContains("meta", {"tags": ["a"]}),
    p.JsonContains("meta", {"nested": {"a": [{"b": "c"}]}}),
    p.JsonContains("meta", {"n": 1.5, "flag": True}),
    p.JsonContains("meta", {"one": True}),  # a boolean is not the number 1
    p.JsonContains("meta", {}),
    p.JsonContains("meta", {"null": None}),
    p.JsonContains("meta", "x"),  # a bare scalar is contained in no object
    p.JsonPathMatch("meta", '$.kind == "note"'),
    p.JsonPathMatch("meta", "$.n > 10 && $.n < 20"),
    p.JsonPathMatch("meta", '$.tags[*] == "2"'),
    p.JsonPathMatch("meta", 'exists($.nested.a[*].b) || $.kind starts with "fa"'),
    p.JsonPathMatch("meta", "!($.n >= 3)"),
    p.JsonPathMatch("meta", '$.s == 10 || $."q\\"k" == "quoted"'),
    p.JsonPathMatch("meta", "$.flag"),
    p.JsonPathMatch("meta", '$.kind like_regex "^n.t"'),
    p.Regex("content", r"\bcafe\b"),
    p.Regex("content", r"caf[eé]", ignore_case=True),
    p.Regex("content", r"^line two"),  # ^ is the string's start only
    p.Regex("content", r"one.line"),  # "." does not match a newline
    p.Regex("content", r"\d{2}\s"),
    p.Regex("content", r"(?P<w>roll)"),
    p.Regex("content", r"[^a-z ]"),
    p.Regex("content", r"ZOË", ignore_case=True),
    p.Regex("name", r"."),
    grep_filter(r"\mcaf"),
    grep_filter(r"[[:digit:]]+ rock"),
    grep_filter(r"line\y"),
    tree_filter("work.*", ""),
    tree_filter("work.projects", ""),
    tree_filter("*.projects.*", ""),
    tree_filter("work & !home", ""),
    p.PathUnder("tree", "work"),
    p.PathUnder("tree", ""),
    p.InRange("temporal_start", "temporal_end", "contains", corpora.at(100)),
    p.InRange("temporal_start", "temporal_end", "overlaps", corpora.at(95), corpora.at(200)),
    p.InRange("temporal_start", "temporal_end", "within", corpora.at(0), corpora.at(300)),
    p.InRange("temporal_start", "temporal_end", "before", corpora.at(250)),
    p.InRange("temporal_start", "temporal_end", "after", corpora.at(250)),
    p.Not(p.Column("temporal_start", "is_null")),
    p.Or((p.Column("name", "is_not_null"), p.Column("version", "gte", 1))),
    p.And((p.Column("tree", "ne", "work"), p.Not(p.JsonPath("meta", "n", "lt", 20)))),
    p.Column("tree", "in", ("work", "home.family")),
    p.Column("tree", "in", ()),
    p.Nothing(),
]


def test_memory_filters_select_as_on_sqlite(pair: Pair) -> None:
    scope = {"space_uuid": pair[2].space}
    matched = [same(pair, Memory, scope, pred) for pred in MEMORY_FILTERS]
    assert sum(1 for n in matched if n) > len(MEMORY_FILTERS) // 2  # not all empty


def test_graph_filters_select_as_on_sqlite(pair: Pair) -> None:
    corpus = pair[2]
    scope = {"graph_uuid": corpus.graph}
    episodes = tuple(e for _, e in corpus.links[:5])
    edge_filters: list[p.Predicate] = [
        p.EndpointLabels(("Person",), all_endpoints=False),
        p.EndpointLabels(("Person", "Place"), all_endpoints=True),
        p.LinkedToEpisodes(episodes),
        p.EpisodeMetadata(p.JsonPath("metadata", "tag", "eq", "café")),
        p.EpisodeMetadata(p.JsonContains("metadata", {"n": 2})),
        p.JsonPath("attributes", "score", "gt", 0.5),
        p.JsonPath("attributes", "tags", "eq", "x"),
        p.Column("valid_at", "gt", corpora.at(50)),
        p.Column("valid_at", "ne", corpora.at(51)),
        p.Column("expired_at", "is_null"),
        p.Column("name", "in", ("LIKES", "KNOWS")),
    ]
    assert all(same(pair, Edge, scope, pred) for pred in edge_filters[:6])
    for pred in edge_filters[6:]:
        same(pair, Edge, scope, pred)
    same(pair, Node, scope, p.LinkedToEpisodes(episodes))  # none: only edges are linked
    for pred in (
        p.HasAnyLabel(("Person",)),
        p.JsonPath("attributes", "city", "eq", "Oslo"),
        p.Regex("summary", r"^\w+ \w+"),
        p.Column("summary", "is_null"),
    ):
        assert same(pair, Node, scope, pred)
    for pred in (
        p.JsonPath("metadata", "n", "in", (0, 3)),
        p.LinkedToEpisodes(episodes),
        p.Column("role", "eq", "user"),
        p.Column("thread_uuid", "is_null"),
    ):
        assert same(pair, Episode, scope, pred)


def test_matching_and_count_by_agree(pair: Pair) -> None:
    sqlite, pg, corpus = pair
    scope = {"space_uuid": corpus.space}
    uuids = [m.uuid for m in corpus.memories]
    for pred in MEMORY_FILTERS[:20]:
        assert pg.matching(Memory, scope, uuids, pred) == sqlite.matching(
            Memory, scope, uuids, pred
        )
        assert pg.count_by(Memory, "tree", scope, pred) == sqlite.count_by(
            Memory, "tree", scope, pred
        )


@pytest.mark.parametrize(
    "pattern", [r"(a)(?P=x)", r"(?(1)a|b)", r"a*+", r"(?>a)", r"(?i)abc", r"(?s:a.b)"]
)
def test_python_only_regex_syntax_is_a_bad_request_on_postgres(pair: Pair, pattern: str) -> None:
    _, pg, corpus = pair
    with pytest.raises(BadRequest):
        pg.find(Memory, {"space_uuid": corpus.space}, where=p.Regex("content", pattern))


def test_dollar_matches_only_at_the_very_end_on_both(pair: Pair) -> None:
    """RE2 (SQLite) and ARE (PostgreSQL) alike: ``$`` is not satisfied before a final
    newline (Python's ``re`` would be)."""
    sqlite, pg, corpus = pair
    scope = {"space_uuid": corpus.space}
    pred = p.Regex("content", r"rock-n-roll$")
    assert sqlite.find(Memory, scope, where=pred) == []
    assert pg.find(Memory, scope, where=pred) == []


def test_a_key_with_a_quote_is_a_documented_difference(pair: Pair) -> None:
    sqlite, pg, corpus = pair
    scope = {"space_uuid": corpus.space}
    pred = p.JsonPath("meta", 'q"k', "eq", "quoted")
    assert sqlite.find(Memory, scope, where=pred) == []
    assert [m.uuid for m in pg.find(Memory, scope, where=pred)] == [
        "01990000-0000-7000-8000-0000000003aa"
    ]
