"""``memory.deleteOrphansInTree`` over JSON-RPC: an importer deletes the named rows it
stamped under a root that are no longer in its keep-list, and nothing else."""

from __future__ import annotations

from typing import Any

import pytest

from tests.api.memory_engine.conftest import RpcCall, app_error, result

DOCS = {"source": "docs"}


def _seed(rpc: RpcCall, root: str) -> None:
    rows: list[dict[str, Any]] = [
        {"content": "kept", "tree": f"{root}/a", "name": "kept", "meta": DOCS},
        {"content": "gone", "tree": f"{root}/a", "name": "gone", "meta": {**DOCS, "v": 2}},
        {"content": "deep", "tree": f"{root}/a/b", "name": "deep", "meta": DOCS},
        {"content": "at root", "tree": root, "name": "top", "meta": DOCS},
        {"content": "unnamed", "tree": f"{root}/a", "meta": DOCS},
        {"content": "other owner", "tree": f"{root}/a", "name": "mine", "meta": {"source": "me"}},
        {"content": "no meta", "tree": f"{root}/a", "name": "bare"},
        {"content": "outside", "tree": f"{root}x", "name": "out", "meta": DOCS},
        {"content": "sibling", "tree": "/orphans-elsewhere", "name": "s", "meta": DOCS},
    ]
    result(rpc("memory.batchCreate", {"memories": rows}))


def _names(rpc: RpcCall, tree: str) -> set[str]:
    found = result(rpc("memory.search", {"tree": tree, "limit": 1000}))["results"]
    return {f"{m['tree']}/{m['name']}" if m["name"] else f"{m['tree']}/-" for m in found}


def test_dry_run_then_delete_the_named_orphans(rpc: RpcCall) -> None:
    root = "/orph/run"
    _seed(rpc, root)
    before = _names(rpc, "orph.*")
    params = {
        "root": root,
        "metaContains": DOCS,
        "keep": [{"tree": f"{root}/a", "name": "kept"}, {"tree": "orph.run.a.b", "name": "x"}],
    }
    expected = [f"{root}/top", f"{root}/a/gone", f"{root}/a/b/deep"]

    dry = result(rpc("memory.deleteOrphansInTree", {**params, "dryRun": True}))
    assert dry == {"count": 3, "paths": expected}
    assert _names(rpc, "orph.*") == before  # nothing deleted

    done = result(rpc("memory.deleteOrphansInTree", params))
    assert done == {"count": 3, "paths": expected}
    assert _names(rpc, "orph.*") == before - set(expected)
    left = _names(rpc, "orph.*")
    for survivor in (f"{root}/a/kept", f"{root}/a/-", f"{root}/a/mine", f"{root}/a/bare"):
        assert survivor in left
    assert f"{root}x/out" in left
    assert "/orphans-elsewhere/s" in _names(rpc, "orphans-elsewhere")

    # The deletes are in the audit log, as one operation.
    events = result(rpc("memory.history", {"tree": root, "operation": "delete"}))["events"]
    assert sorted(f"{e['tree']}/{e['name']}" for e in events) == sorted(expected)
    assert len({e["operationId"] for e in events}) == 1
    assert {e["cause"] for e in events} == {"delete_orphans"}

    again = result(rpc("memory.deleteOrphansInTree", params))
    assert again == {"count": 0, "paths": []}


def test_keep_everything_and_home_paths(rpc: RpcCall) -> None:
    result(
        rpc(
            "memory.batchCreate",
            {
                "memories": [
                    {"content": "1", "tree": "~/imp", "name": "one", "meta": DOCS},
                    {"content": "2", "tree": "~/imp/sub", "name": "two", "meta": DOCS},
                ]
            },
        )
    )
    params: dict[str, Any] = {
        "root": "~/imp",
        "metaContains": DOCS,
        "keep": [{"tree": "~/imp", "name": "one"}],
        "dryRun": True,
    }
    try:
        assert result(rpc("memory.deleteOrphansInTree", params)) == {
            "count": 1,
            "paths": ["~/imp/sub/two"],
        }
        params["keep"].append({"tree": "~/imp/sub", "name": "two"})
        assert result(rpc("memory.deleteOrphansInTree", params)) == {"count": 0, "paths": []}
    finally:  # the session's server is shared; other tests count what is under ~
        result(rpc("memory.deleteTree", {"tree": "~/imp"}))


def test_root_slash_is_the_whole_space_but_still_scoped_by_meta(rpc: RpcCall) -> None:
    stamp = {"source": "whole-space-importer"}
    result(rpc("memory.create", {"content": "w", "tree": "/ws", "name": "w", "meta": stamp}))
    dry = {"root": "/", "metaContains": stamp, "keep": [], "dryRun": True}
    assert result(rpc("memory.deleteOrphansInTree", dry)) == {"count": 1, "paths": ["/ws/w"]}


GOOD: dict[str, Any] = {"root": "/orph/bad", "metaContains": DOCS, "keep": []}


@pytest.mark.parametrize(
    ("params", "field"),
    [
        ({"metaContains": DOCS, "keep": []}, "root"),
        ({**GOOD, "root": ""}, "root"),
        ({**GOOD, "root": "/a b"}, "root"),
        ({"root": "/orph/bad", "keep": []}, "metaContains"),
        ({**GOOD, "metaContains": {}}, "metaContains"),
        ({**GOOD, "metaContains": [1]}, "metaContains"),
        ({"root": "/orph/bad", "metaContains": DOCS}, "keep"),
        ({**GOOD, "keep": "x"}, "keep"),
        ({**GOOD, "keep": [{"tree": "/a"}]}, "keep.0.name"),
        ({**GOOD, "keep": [{"tree": "/a", "name": "-bad"}]}, "keep.0.name"),
        ({**GOOD, "keep": [{"name": "n"}]}, "keep.0.tree"),
        ({**GOOD, "keep": [{"tree": "", "name": "n"}]}, "keep.0.tree"),
        ({**GOOD, "keep": [{"tree": "/a", "name": "n"}, "x"]}, "keep.1"),
        ({**GOOD, "keep": [{"tree": "a", "name": "n"}] * 25_001}, "keep"),
        ({**GOOD, "dryRun": "maybe"}, "dryRun"),
    ],
)
def test_invalid_params_name_the_field(rpc: RpcCall, params: dict[str, Any], field: str) -> None:
    error = rpc("memory.deleteOrphansInTree", params)["error"]
    assert error["code"] == -32602, error
    assert error["message"].startswith("Invalid params: ")
    assert error["data"]["param"] == field


def test_bad_paths_are_validation_errors_and_delete_nothing(rpc: RpcCall) -> None:
    result(rpc("memory.create", {"content": "v", "tree": "/orph/val", "name": "v", "meta": DOCS}))
    for params, field in [
        ({"root": "/orph/~/x", "metaContains": DOCS, "keep": []}, "root"),
        (
            {"root": "/orph/val", "metaContains": DOCS, "keep": [{"tree": "/a/~", "name": "n"}]},
            "keep.0.tree",
        ),
    ]:
        code, _, param = app_error(rpc("memory.deleteOrphansInTree", params))
        assert (code, param) == ("VALIDATION_ERROR", field), params
    assert _names(rpc, "orph.val") == {"/orph/val/v"}


def test_the_keep_limit_is_25000(rpc: RpcCall) -> None:
    keep = [{"tree": "a", "name": "n"}] * 25_000
    params = {"root": "/orph/limit", "metaContains": DOCS, "keep": keep, "dryRun": True}
    assert result(rpc("memory.deleteOrphansInTree", params)) == {"count": 0, "paths": []}
