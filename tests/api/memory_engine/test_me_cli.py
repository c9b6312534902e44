"""The real ``me`` 0.8.0 client against graphrecall: every command a user runs on
memories, through its own JSON-RPC calls. Each test works under its own tree."""

from __future__ import annotations

import json
import re
from typing import Any

import pytest

from tests.api.memory_engine.conftest import Me, RpcCall, wait_embedded

HEX32 = re.compile(r"^[0-9a-f]{32}$")
UUID7 = re.compile(r"^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$")


def create(me: Me, content: str, tree: str, *extra: str) -> dict[str, Any]:
    out: dict[str, Any] = me.json("create", content, "--tree", tree, *extra)
    return out


def contents(found: dict[str, Any]) -> list[str]:
    return [r["content"] for r in found["results"]]


def test_create_get_and_get_by_path(me: Me) -> None:
    made = create(
        me,
        "Use ltree for hierarchical path queries.",
        "/cli/basics/research",
        "--name",
        "ltree-note",
        "--meta",
        '{"source": "docs", "tags": ["db"]}',
        "--temporal",
        "2025-04-15T00:00:00Z,2025-05-01T00:00:00+02:00",
    )
    assert UUID7.match(made["id"])
    assert made["tree"] == "/cli/basics/research"
    assert made["name"] == "ltree-note"
    assert made["meta"] == {"source": "docs", "tags": ["db"]}
    assert made["temporal"] == {
        "start": "2025-04-15T00:00:00.000Z",
        "end": "2025-04-30T22:00:00.000Z",
    }
    assert made["version"] == 1 and HEX32.match(made["versionHash"])
    assert made["createdBy"] is None and made["updatedAt"] is None

    by_id = me.json("get", made["id"])
    by_path = me.json("get", "/cli/basics/research/ltree-note")
    assert by_id == by_path
    assert by_id["content"] == made["content"] and by_id["versionHash"] == made["versionHash"]
    # The human output renders the same memory.
    assert "Use ltree for hierarchical path queries." in me.ok("get", made["id"])
    # A dotted tree and the home shortcut are accepted on the way in.
    point = create(me, "A point in time.", "cli.basics.points", "--temporal", "2025-01-01T00:00Z")
    assert point["tree"] == "/cli/basics/points"
    assert point["temporal"]["start"] == point["temporal"]["end"]
    mine = create(me, "Only mine.", "~/cli-notes")
    assert mine["tree"] == "~/cli-notes"
    assert "not found" in me.fails("get", "/cli/basics/research/missing").lower()


def test_create_conflicts_and_upserts(me: Me) -> None:
    first = create(me, "v1", "/cli/upsert", "--name", "doc")
    assert "already exists" in me.fails("create", "v2", "--tree", "/cli/upsert", "--name", "doc")
    kept = me.json("create", "v2", "--tree", "/cli/upsert", "--name", "doc", "--ignore")
    assert kept["id"] == first["id"] and kept["content"] == "v1"
    replaced = me.json("create", "v2", "--tree", "/cli/upsert", "--name", "doc", "--replace")
    assert replaced["id"] == first["id"] and replaced["content"] == "v2"
    assert replaced["version"] == 2 and replaced["versionHash"] != first["versionHash"]


@pytest.fixture(scope="module")
def corpus(me: Me, rpc: RpcCall) -> dict[str, dict[str, Any]]:
    """A small searchable corpus under /cli/search, embedded."""
    items = {
        "auth": (
            "JWT signing keys rotate every 30 days; the auth service reads them from Vault.",
            "/cli/search/share/auth",
            {"type": "decision", "team": "platform"},
            "2025-03-01T00:00:00Z,2025-04-01T00:00:00Z",
        ),
        "db": (
            "Postgres ltree indexes make hierarchical path queries fast.",
            "/cli/search/share/db",
            {"type": "note", "tags": ["postgres", "perf"]},
            "2025-05-10T00:00:00Z",
        ),
        "draft": (
            "Draft: maybe rotate database credentials weekly as well.",
            "/cli/search/share/draft/db",
            {"type": "idea"},
            None,
        ),
        "cooking": (
            "My grandmother's lasagna recipe needs three kinds of cheese.",
            "/cli/search/personal/food",
            {"type": "note"},
            "2024-12-24T18:00:00Z",
        ),
        "deep": (
            "The API gateway retries idempotent requests twice.",
            "/cli/search/share/api/v2/gateway",
            {"type": "note", "team": "platform"},
            None,
        ),
    }
    made = {}
    for key, (content, tree, meta, temporal) in items.items():
        args = ["--meta", json.dumps(meta)]
        if temporal:
            args += ["--temporal", temporal]
        made[key] = create(me, content, tree, *args)
    wait_embedded(rpc)
    return made


def test_search_modes_rank_and_score_in_0_1(me: Me, corpus: dict[str, Any]) -> None:
    tree = ["--tree", "/cli/search"]
    semantic = me.json("search", "--semantic", "how are signing keys rotated", *tree)
    assert semantic["results"][0]["id"] == corpus["auth"]["id"]
    assert all(r["hasEmbedding"] for r in semantic["results"])
    fulltext = me.json("search", "--fulltext", "lasagna cheese", *tree)
    assert contents(fulltext) == [corpus["cooking"]["content"]]  # only genuine term matches
    assert fulltext["results"][0]["score"] == 1.0
    hybrid = me.json("search", "rotate signing keys", *tree)  # positional: hybrid
    assert hybrid["results"][0]["id"] == corpus["auth"]["id"]
    for found in (semantic, fulltext, hybrid):
        scores = [r["score"] for r in found["results"]]
        assert all(0.0 <= s <= 1.0 for s in scores)
        assert scores == sorted(scores, reverse=True)
        assert found["limit"] == 10 and found["total"] >= len(found["results"])
    # The best hybrid hit is first in both legs: the maximum fused score.
    assert hybrid["results"][0]["score"] == 1.0
    # Filter-only browsing: newest first by default, --order-by asc reverses.
    newest = me.json("search", *tree)
    oldest = me.json("search", *tree, "--order-by", "asc")
    assert [r["id"] for r in newest["results"]] == [r["id"] for r in oldest["results"]][::-1]
    assert newest["total"] == 5 and {r["score"] for r in newest["results"]} == {1.0}


def test_search_knobs(me: Me, corpus: dict[str, Any]) -> None:
    tree = ["--tree", "/cli/search"]
    strict = me.json(
        "search", "--semantic", "signing keys rotation", "--semantic-threshold", "0.99", *tree
    )
    assert strict["results"] == []
    loose = me.json(
        "search", "--semantic", "signing keys rotation", "--semantic-threshold", "0.2", *tree
    )
    assert loose["results"] and all(r["score"] >= 0.2 for r in loose["results"])
    one = me.json("search", "rotate", "--limit", "1", "--candidate-limit", "5", *tree)
    assert len(one["results"]) == 1 and one["limit"] == 1
    # With the fulltext leg weighted to zero the ranking is the semantic one.
    only_semantic = me.json(
        "search", "rotate keys", "--weight-fulltext", "0", "--weight-semantic", "1", *tree
    )
    plain = me.json("search", "--semantic", "rotate keys", *tree)
    assert [r["id"] for r in only_semantic["results"]] == [r["id"] for r in plain["results"]]
    assert "limit" in me.fails("search", "x", "--limit", "1001")


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        (["--tree", "/cli/search/share"], {"auth", "db", "draft", "deep"}),
        (["--tree", "/cli/search/share/*"], {"auth", "db", "draft", "deep"}),
        (["--tree", "/cli/search/share/*{1}"], {"auth", "db"}),
        (["--tree", "/cli/search/share/*{2,3}"], {"draft", "deep"}),
        (["--tree", "/cli/search/*/!draft/*"], {"auth", "db", "cooking", "deep"}),
        (["--tree", "/cli/search/share|personal/*{1}"], {"auth", "db", "cooking"}),
        (["--tree", "*/api/*"], {"deep"}),
        (["--tree", "search & api & v2"], {"deep"}),
        (["--tree", "/cli/search", "--meta", '{"type": "note"}'], {"db", "cooking", "deep"}),
        (["--tree", "/cli/search", "--meta", '{"tags": ["perf"]}'], {"db"}),
        (["--temporal-contains", "2025-03-15T00:00:00Z"], {"auth"}),
        (["--temporal-overlaps", "2025-03-31T00:00:00Z,2025-05-11T00:00:00Z"], {"auth", "db"}),
        (["--temporal-within", "2025-01-01T00:00:00Z,2025-06-01T00:00:00Z"], {"auth", "db"}),
        (["--temporal-before", "2025-01-01T00:00:00Z"], {"cooking"}),
        (["--temporal-after", "2025-04-01T00:00:00Z"], {"db"}),
        (["--tree", "/cli/search", "--grep", "rotat.*(days|weekly)"], {"auth", "draft"}),
        (["--fulltext", "rotate", "--tree", "/cli/search", "--grep", "DATABASE"], {"draft"}),
        (
            [
                "--semantic",
                "cheese",
                "--meta",
                '{"type": "note"}',
                "--tree",
                "/cli/search/personal",
            ],
            {"cooking"},
        ),
    ],
)
def test_search_filters(
    me: Me, corpus: dict[str, Any], args: list[str], expected: set[str]
) -> None:
    if "--tree" not in args:  # keep to this test's memories
        args = [*args, "--tree", "/cli/search"]
    found = me.json("search", *args, "--limit", "100")
    ids = {r["id"] for r in found["results"]}
    names = {k for k, v in corpus.items() if v["id"] in ids}
    assert names == expected
    assert ids <= {v["id"] for v in corpus.values()}


def test_search_rejects_bad_filters(me: Me, corpus: dict[str, Any]) -> None:
    assert "grep cannot be used alone" in me.fails("search", "--grep", "keys")
    assert "invalid regular expression" in me.fails("search", "--tree", "/cli", "--grep", "(")
    assert "invalid tree pattern" in me.fails("search", "--tree", "/cli/*{3,1}")
    assert "semanticThreshold" in me.fails("search", "x", "--semantic-threshold", "1.5")


def test_update_with_current_and_stale_hash(me: Me) -> None:
    made = create(me, "The deploy window is Tuesday.", "/cli/update", "--name", "deploy")
    updated = me.json(
        "update",
        made["id"],
        "--version-hash",
        made["versionHash"],
        "--content",
        "The deploy window is Thursday.",
        "--meta",
        '{"owner": "ops"}',
    )
    assert updated["version"] == 2 and updated["versionHash"] != made["versionHash"]
    assert updated["content"] == "The deploy window is Thursday."
    assert updated["meta"] == {"owner": "ops"} and updated["updatedAt"]
    # The old hash is now stale: CONFLICT, nothing changes.
    out = me.fails("update", made["id"], "--version-hash", made["versionHash"], "--content", "x")
    assert "stale" in out
    assert me.json("get", made["id"])["content"] == "The deploy window is Thursday."
    # By path (the client resolves it first), renaming and clearing the name.
    renamed = me.json(
        "update", "/cli/update/deploy", "--version-hash", updated["versionHash"], "--name", "window"
    )
    assert renamed["name"] == "window" and renamed["version"] == 3
    cleared = me.json(
        "update", renamed["id"], "--version-hash", renamed["versionHash"], "--name", ""
    )
    assert cleared["name"] is None


def test_tree_move_copy_count_delete(me: Me) -> None:
    for i, tree in enumerate(["/cli/ops/a", "/cli/ops/a/x", "/cli/ops/a/x", "/cli/ops/b"]):
        create(me, f"note {i}", tree, "--name", f"n{i}")
    nodes = me.json("tree", "/cli/ops")["nodes"]
    assert nodes == [
        {"path": "/cli/ops/a", "count": 3},
        {"path": "/cli/ops/a/x", "count": 2},
        {"path": "/cli/ops/b", "count": 1},
    ]
    assert me.json("tree", "/cli/ops", "--levels", "1")["nodes"] == [
        {"path": "/cli/ops/a", "count": 3},
        {"path": "/cli/ops/b", "count": 1},
    ]
    assert "cli" in me.ok("tree")  # the human tree view renders
    assert me.json("count", "/cli/ops")["count"] == 4
    assert me.json("count", "/cli/ops/*{2}", "--max-count", "1")["count"] == 1

    assert me.json("mv", "/cli/ops/a", "/cli/ops/c", "-y")["count"] == 3
    moved = me.json("get", "/cli/ops/c/x/n1")
    assert moved["version"] == 2 and moved["tree"] == "/cli/ops/c/x"
    assert "not found" in me.fails("get", "/cli/ops/a/x/n1").lower()

    assert me.json("cp", "/cli/ops/c", "/cli/ops/d", "--dry-run")["count"] == 3
    assert me.json("count", "/cli/ops/d")["count"] == 0
    assert me.json("cp", "/cli/ops/c", "/cli/ops/d", "-y")["count"] == 3
    copy = me.json("get", "/cli/ops/d/x/n1")
    assert copy["id"] != moved["id"] and copy["content"] == moved["content"]
    assert copy["version"] == 1
    # Copying again would put a second n1 into /cli/ops/d/x.
    assert "already exists" in me.fails("cp", "/cli/ops/c", "/cli/ops/d", "-y")
    assert me.json("count", "/cli/ops/d")["count"] == 3  # nothing half-written

    assert me.json("deltree", "/cli/ops/c", "--dry-run")["count"] == 3
    assert me.json("deltree", "/cli/ops/c", "-y")["count"] == 3
    assert me.json("count", "/cli/ops")["count"] == 4  # b + the three copies
    assert me.json("delete", copy["id"]) == {"deleted": True}
    assert me.json("rm", "/cli/ops/b/n3") == {"deleted": True}
    assert me.json("count", "/cli/ops")["count"] == 2
    assert "not found" in me.fails("delete", copy["id"]).lower()


def test_status_and_version(me: Me) -> None:
    status = me.json("status")
    assert set(status["embedding"]) == {
        "pending",
        "inFlight",
        "waiting",
        "failed",
        "oldestPendingAt",
    }
    assert "compatible" in me.ok("version").lower()
