"""The Memory Engine filter language, compiled and run by the SQLite store.

The tree cases are the verified PostgreSQL ltree table of reference/memory-engine.md §3.3,
except the two documented behaviours we deliberately honour (see docs/memory-engine.md):
``*/!draft/*`` excludes every path holding a ``draft`` label and ``api | auth`` is a
label search.
"""

from __future__ import annotations

import pytest

from graphrecall.domain import clock
from graphrecall.domain import predicates as p
from graphrecall.domain.errors import BadRequest
from graphrecall.domain.ids import new_id
from graphrecall.domain.models import Memory
from graphrecall.retrieval.memory_filters import (
    TemporalFilter,
    grep_filter,
    meta_filter,
    temporal_filter,
    tree_filter,
)
from graphrecall.store import Store

SPACE = new_id()
HOME = "home.abc"
PATHS = [
    "",
    "work",
    "work-x",  # a sibling whose name starts like "work"
    "work.projects",
    "work.projects.api",
    "work.projects.api.auth",
    "work.archived",
    "work.archived.x",
    "work.draft",
    "work.draft.y",
    "personal",
    "personal.reading",
    "share.api.v2",
    "share.v2",
    "share.draft.api",
    "api",
    "auth",
    "draft",
    "home.abc.notes",
]


def memory(tree: str = "", content: str = "x", **fields: object) -> Memory:
    return Memory(
        uuid=new_id(),
        space_uuid=SPACE,
        content=content,
        tree=tree,
        version_hash="0" * 32,
        created_at=clock.now(),
        **fields,  # type: ignore[arg-type]
    )


def matching(store: Store, where: p.Predicate | None) -> list[str]:
    found = store.find(Memory, {"space_uuid": SPACE}, where=where)
    return sorted(m.tree for m in found)


@pytest.fixture()
def trees(store: Store) -> Store:
    store.insert([memory(path) for path in PATHS])
    return store


@pytest.mark.parametrize(
    ("pattern", "expected"),
    [
        ("/work/projects", ["work.projects", "work.projects.api", "work.projects.api.auth"]),
        ("work.projects", ["work.projects", "work.projects.api", "work.projects.api.auth"]),
        ("/work", [x for x in PATHS if x == "work" or x.startswith("work.")]),
        ("work-x", ["work-x"]),
        ("/work/projects/*", ["work.projects", "work.projects.api", "work.projects.api.auth"]),
        ("/work/*{1}", ["work.archived", "work.draft", "work.projects"]),
        ("/work/*{2}", ["work.archived.x", "work.draft.y", "work.projects.api"]),
        (
            "/work/*{2,4}",
            ["work.archived.x", "work.draft.y", "work.projects.api", "work.projects.api.auth"],
        ),
        ("work.archived/*{0}", ["work.archived"]),
        (
            "*/api/*",
            [
                "api",
                "share.api.v2",
                "share.draft.api",
                "work.projects.api",
                "work.projects.api.auth",
            ],
        ),
        (
            "/work|personal/*",
            [
                "personal",
                "personal.reading",
                *[x for x in PATHS if x == "work" or x.startswith("work.")],
            ],
        ),
        (
            "/work/!archived/*{0,}",
            [
                "work.draft",
                "work.draft.y",
                "work.projects",
                "work.projects.api",
                "work.projects.api.auth",
            ],
        ),
        ("api & v2", ["share.api.v2"]),
        ("api & !draft", ["api", "share.api.v2", "work.projects.api", "work.projects.api.auth"]),
        ("api|auth", ["api", "auth"]),
        ("work.proj*", ["work.projects"]),
        ("*.API@", ["api", "share.draft.api", "work.projects.api"]),
        ("~", ["home.abc.notes"]),
        ("~/notes", ["home.abc.notes"]),
    ],
)
def test_tree_filters_follow_ltree(trees: Store, pattern: str, expected: list[str]) -> None:
    assert matching(trees, tree_filter(pattern, HOME)) == sorted(expected)


def test_negation_between_stars_excludes_the_label_everywhere(trees: Store) -> None:
    """The docs: ``*/!draft/*`` is "paths that do NOT contain draft" (upstream's code
    keeps any path with one non-draft label, e.g. ``work.draft``)."""
    got = matching(trees, tree_filter("*/!draft/*", HOME))
    assert not [t for t in got if "draft" in t.split(".")]
    assert "work.projects.api" in got and "personal" in got
    assert "" not in got  # the root has no label to match


def test_spaced_alternatives_are_a_label_search(trees: Store) -> None:
    """The docs' ``api | auth`` (upstream: an lquery syntax error)."""
    got = matching(trees, tree_filter("api | auth", HOME))
    assert got == sorted(
        [
            "api",
            "auth",
            "share.api.v2",
            "share.draft.api",
            "work.projects.api",
            "work.projects.api.auth",
        ]
    )
    assert matching(trees, tree_filter("(api | v2) & share", HOME)) == [
        "share.api.v2",
        "share.draft.api",
        "share.v2",
    ]


@pytest.mark.parametrize("raw", ["", "/", "  "])
def test_empty_tree_filter_is_no_filter(raw: str) -> None:
    assert tree_filter(raw, HOME) is None


@pytest.mark.parametrize("raw", ["work.{2}", "a&&b", "a & (b", "work/*{3,1}", "a b", "**", "a.$"])
def test_bad_tree_patterns_name_the_field(raw: str) -> None:
    with pytest.raises(BadRequest) as info:
        tree_filter(raw, HOME)
    assert info.value.param == "tree"


def test_meta_is_json_containment(store: Store) -> None:
    store.insert(
        [
            memory("a", meta={"type": "decision", "tags": ["a", "b"], "n": 1}),
            memory("b", meta={"type": ["decision", "note"]}),
            memory("c", meta={"nested": {"x": 1, "y": 2}, "flag": True}),
            memory("d", meta={"n": 1.0, "flag": 1, "gone": None}),
        ]
    )
    assert matching(store, meta_filter({"gone": None})) == ["d"]  # null, not missing
    assert matching(store, meta_filter({"type": "decision"})) == ["a"]
    assert matching(store, meta_filter({"tags": ["b"]})) == ["a"]
    assert matching(store, meta_filter({"tags": "b"})) == []
    assert matching(store, meta_filter({"type": ["note"]})) == ["b"]
    assert matching(store, meta_filter({"nested": {"y": 2}})) == ["c"]
    assert matching(store, meta_filter({"flag": True})) == ["c"]  # 1 is not true
    assert matching(store, meta_filter({"n": 1})) == ["a", "d"]  # 1 == 1.0
    assert meta_filter({}) is None


T = "2025-01-{:02d}T00:00:00.000000Z".format


def test_temporal_ranges_and_points(store: Store) -> None:
    store.insert(
        [
            memory("point5", temporal_start=T(5), temporal_end=T(5)),
            memory("range5_10", temporal_start=T(5), temporal_end=T(10)),
            memory("range10_20", temporal_start=T(10), temporal_end=T(20)),
            memory("none"),
        ]
    )

    def where(**kw: object) -> list[str]:
        return matching(store, temporal_filter(TemporalFilter(**kw)))  # type: ignore[arg-type]

    assert where(contains=T(5)) == ["point5", "range5_10"]
    assert where(contains=T(10)) == ["range10_20"]  # [5,10) excludes 10
    assert where(overlaps=(T(1), T(5))) == []  # the window [1,5) ends before 5
    assert where(overlaps=(T(5), T(6))) == ["point5", "range5_10"]
    assert where(overlaps=(T(9), T(11))) == ["range10_20", "range5_10"]
    assert where(within=(T(5), T(10))) == ["point5", "range5_10"]
    assert where(within=(T(1), T(5))) == []  # a point at the window's end is outside
    assert where(before=T(10)) == ["point5", "range5_10"]
    assert where(before=T(5)) == []
    assert where(after=T(5)) == ["range10_20"]
    assert where(after=T(4), before=T(10)) == ["point5", "range5_10"]  # ANDed
    assert where(overlaps=(T(7), T(7))) == []  # an empty window
    with pytest.raises(BadRequest) as info:
        temporal_filter(TemporalFilter(within=(T(9), T(1))))
    assert info.value.param == "temporal.within.start"


def test_grep_is_a_case_insensitive_posix_regex(store: Store) -> None:
    store.insert(
        [
            memory("a", content="Rotate the JWT keys monthly"),
            memory("b", content="jwt2 is unrelated"),
            memory("c", content="Nothing here 42"),
        ]
    )
    assert matching(store, grep_filter("jwt keys")) == ["a"]
    assert matching(store, grep_filter(r"\mjwt\M")) == ["a"]  # ARE word boundaries
    assert matching(store, grep_filter("[[:digit:]]+$")) == ["c"]
    assert matching(store, grep_filter("^(rotate|nothing)")) == ["a", "c"]


@pytest.mark.parametrize("pattern", ["(", "[a-", "*x", "a{2,1}"])
def test_invalid_regex_is_a_validation_error(pattern: str) -> None:
    with pytest.raises(BadRequest) as info:
        grep_filter(pattern)
    assert info.value.param == "grep"
