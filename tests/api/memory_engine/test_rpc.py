"""The JSON-RPC surface byte by byte: auth and space selection, envelope and params
errors, application error codes, limits, batch creates, history and revert."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Callable
from typing import Any

import httpx
import pytest

from tests.api.memory_engine.conftest import SPACE, RpcCall, app_error, base, result
from tests.conftest import Server
from tests.inprocess import InProcess

UNKNOWN_V7 = "0190f0f0-0000-7000-8000-000000000000"


def post(server: Server | InProcess, body: Any, **headers: str) -> httpx.Response:
    hdrs = {"Authorization": f"Bearer {server.api_key}", "X-Me-Space": SPACE, **headers}
    content = body if isinstance(body, bytes) else json.dumps(body).encode()
    with server.http(timeout=30) as http:
        return http.post(
            "/api/v1/memory/rpc",
            content=content,
            headers={"Content-Type": "application/json", **hdrs},
        )


def call(method: str, params: Any = None) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "method": method, "id": 7, "params": params or {}}


def test_version_is_public(me_server: Server) -> None:
    body = httpx.get(f"{base(me_server)}/api/v1/version", params={"clientVersion": "0.8.0"}).json()
    assert body["serverVersion"] == "0.8.0" and body["minClientVersion"] == "0.4.0"
    assert body["client"] == {"version": "0.8.0", "compatible": True}
    old = httpx.get(f"{base(me_server)}/api/v1/version", params={"clientVersion": "0.3.9"})
    assert old.json()["client"]["compatible"] is False


@pytest.mark.parametrize(
    ("headers", "status", "code"),
    [
        ({"Authorization": ""}, 401, "UNAUTHORIZED"),
        ({"Authorization": "Bearer wrong-key"}, 401, "UNAUTHORIZED"),
        ({"X-Me-Space": ""}, 400, "MISSING_SPACE"),
        ({"X-Me-Space": "nosuchspace1"}, 403, "FORBIDDEN"),  # as another project's space
        ({"Authorization": "Bearer wrong-key", "X-Me-Space": "nosuchspace1"}, 401, "UNAUTHORIZED"),
    ],
)
def test_auth_and_space_selection(
    me_server: Server, headers: dict[str, str], status: int, code: str
) -> None:
    response = post(me_server, call("memory.tree"), **headers)
    assert response.status_code == status
    assert response.json()["error"]["code"] == code


def test_a_key_of_another_project_is_forbidden_and_spaces_are_isolated(me_server: Server) -> None:
    cli = me_server.cli
    other_key = cli("keys", "create", "--project", "elsewhere")
    response = post(me_server, call("memory.tree"), Authorization=f"Bearer {other_key}")
    assert response.status_code == 403 and response.json()["error"]["code"] == "FORBIDDEN"
    slug = cli("spaces", "create", "Team notes", "--project", "elsewhere")
    assert len(slug) == 12 and slug.isalnum() and slug.islower()
    assert slug in cli("spaces", "list")
    # Slugs cannot be probed: their space and one that does not exist answer alike.
    probes = [post(me_server, call("memory.tree"), **{"X-Me-Space": s}) for s in (slug, "zz" * 6)]
    assert [(r.status_code, r.json()) for r in probes] == [(403, probes[1].json())] * 2
    theirs = {"Authorization": f"Bearer {other_key}", "X-Me-Space": slug}
    made = post(me_server, call("memory.create", {"content": "theirs", "tree": "/t"}), **theirs)
    memory_id = made.json()["result"]["id"]
    mine = post(me_server, call("memory.get", {"id": memory_id})).json()
    assert app_error(mine)[0] == "NOT_FOUND"
    # Ids are unique per space: their id is no oracle, it is answered as a fresh id would
    # be (created here), and each space then reads only its own memory (issue 25).
    same = {"id": memory_id, "content": "mine", "tree": "/t"}
    created = post(me_server, call("memory.create", same)).json()
    assert result(created)["id"] == memory_id and result(created)["content"] == "mine"
    batch = {"memories": [{"id": memory_id, "content": "x", "tree": "/t"}], "onConflict": "error"}
    assert app_error(post(me_server, call("memory.batchCreate", batch), **theirs).json())[0] == (
        "CONFLICT"  # in their own space the id is taken, as it always was
    )
    assert result(post(me_server, call("memory.get", {"id": memory_id})).json())["content"] == (
        "mine"
    )
    got = post(me_server, call("memory.get", {"id": memory_id}), **theirs).json()
    assert result(got)["content"] == "theirs"
    deleted = post(me_server, call("memory.delete", {"id": memory_id})).json()
    assert "error" not in deleted
    got = post(me_server, call("memory.get", {"id": memory_id}), **theirs).json()
    assert result(got)["content"] == "theirs"


def test_envelope_errors(me_server: Server) -> None:
    parse = post(me_server, b"{not json").json()
    assert parse["error"]["code"] == -32700 and parse["id"] is None
    for bad in ([call("memory.tree")], {"jsonrpc": "1.0", "method": "x", "id": 1}):
        assert post(me_server, bad).json()["error"]["code"] == -32600
    no_id = post(me_server, {"jsonrpc": "2.0", "method": "memory.tree"}).json()
    assert no_id["error"]["code"] == -32600
    unknown = post(me_server, call("memory.explode")).json()
    assert unknown["error"] == {"code": -32601, "message": "Method not found: memory.explode"}
    assert unknown["id"] == 7


@pytest.mark.parametrize(
    ("method", "params", "field"),
    [
        ("memory.get", {"id": "not-a-uuid"}, "id"),
        ("memory.get", {"id": "0190f0f0-0000-4000-8000-000000000000"}, "id"),  # v4, not v7
        ("memory.create", {"content": "", "tree": "/a"}, "content"),
        ("memory.create", {"content": "x"}, "tree"),
        ("memory.create", {"content": "x", "tree": "/a b"}, "tree"),
        ("memory.create", {"content": "x", "tree": "/a", "name": "-bad"}, "name"),
        ("memory.create", {"content": "x", "tree": "/a", "meta": [1]}, "meta"),
        (
            "memory.create",
            {"content": "x", "tree": "/a", "temporal": {"start": "2025-01-01"}},
            "temporal.start",
        ),
        ("memory.search", {"limit": 1001}, "limit"),
        ("memory.search", {"limit": 0}, "limit"),
        ("memory.search", {"candidateLimit": 5000}, "candidateLimit"),
        ("memory.search", {"semanticThreshold": -0.1}, "semanticThreshold"),
        ("memory.search", {"weights": {"semantic": 2}}, "weights.semantic"),
        ("memory.search", {"orderBy": "sideways"}, "orderBy"),
        ("memory.update", {"id": UNKNOWN_V7, "versionHash": "short"}, "versionHash"),
        ("memory.tree", {"levels": 101}, "levels"),
        ("memory.batchCreate", {"memories": []}, "memories"),
        # Cost caps (issue 47, item 7): a long semantic text, a long or many-worded fulltext.
        ("memory.search", {"semantic": "tea " * 2049}, "semantic"),
        ("memory.search", {"fulltext": "tea " * 501}, "fulltext"),
        ("memory.search", {"fulltext": " ".join(f"w{i}" for i in range(129))}, "fulltext"),
        ("memory.search", {"limit": "7"}, "limit"),  # no coercion (issue 47, item 12)
    ],
)
def test_invalid_params_name_the_field(
    rpc: RpcCall, method: str, params: dict[str, Any], field: str
) -> None:
    error = rpc(method, params)["error"]
    assert error["code"] == -32602
    assert error["message"].startswith("Invalid params: ")
    assert error["data"]["param"] == field


def test_application_errors(rpc: RpcCall) -> None:
    assert app_error(rpc("memory.get", {"id": UNKNOWN_V7}))[:2] == (
        "NOT_FOUND",
        f"Memory not found: {UNKNOWN_V7}",
    )
    assert app_error(rpc("memory.getByPath", {"path": "/rpc/none/x"}))[0] == "NOT_FOUND"
    assert app_error(rpc("memory.getByPath", {"path": "/rpc/none/"}))[0] == "VALIDATION_ERROR"
    assert app_error(rpc("memory.delete", {"id": UNKNOWN_V7}))[0] == "NOT_FOUND"
    made = result(rpc("memory.create", {"content": "a", "tree": "/rpc/err", "name": "a"}))
    dup = rpc("memory.create", {"content": "b", "tree": "rpc.err", "name": "a"})
    assert app_error(dup)[0] == "CONFLICT"
    stale = rpc("memory.update", {"id": made["id"], "versionHash": "0" * 32, "content": "x"})
    code, message, param = app_error(stale)
    assert (code, param) == ("CONFLICT", "versionHash") and "stale" in message
    cases = [
        ({"grep": "x"}, "grep"),
        ({"tree": "/rpc", "grep": "a("}, "grep"),
        ({"tree": "a & (b"}, "tree"),
        ({"temporal": {}}, "temporal"),
        (
            {
                "temporal": {
                    "within": {"start": "2025-02-01T00:00:00Z", "end": "2025-01-01T00:00:00Z"}
                }
            },
            "temporal.within.start",
        ),
        ({"metaPredicate": "$.a ? (@ > 1)"}, "metaPredicate"),
        ({"fulltext": "a", "semantic": "a", "weights": {"semantic": 0, "fulltext": 0}}, "weights"),
    ]
    for params, field in cases:
        code, _, param = app_error(rpc("memory.search", params))
        assert (code, param) == ("VALIDATION_ERROR", field), params
    tilde = rpc("memory.create", {"content": "x", "tree": "/a/~/b"})
    assert app_error(tilde)[0] == "VALIDATION_ERROR"


def test_search_with_meta_predicate(rpc: RpcCall) -> None:
    rows = [
        ({"kind": "decision", "priority": 3, "tags": ["api", "auth"]}, "ship the api gateway"),
        ({"kind": "note", "priority": 1, "tags": ["api"]}, "api notes from standup"),
        ({"kind": "decision", "priority": "high"}, "api rate limits decided"),
        ({}, "api without meta"),
    ]
    for meta, content in rows:
        result(rpc("memory.create", {"content": content, "tree": "/rpc/mp", "meta": meta}))

    def found(**params: Any) -> list[str]:
        body = result(rpc("memory.search", {"tree": "/rpc/mp", "orderBy": "asc", **params}))
        assert body["total"] == len(body["results"])
        return [r["content"] for r in body["results"]]

    assert found(metaPredicate='$.kind == "decision" && $.priority >= 2') == [
        "ship the api gateway"
    ]
    # lax mode: arrays unwrap; a string priority never compares with a number
    assert found(metaPredicate='$.tags == "api"') == [
        "ship the api gateway",
        "api notes from standup",
    ]
    assert found(metaPredicate="$.priority < 5") == [
        "ship the api gateway",
        "api notes from standup",
    ]
    assert found(metaPredicate="!exists($.kind)") == ["api without meta"]
    # ANDed with meta, and with the ranked (fulltext) path and grep
    assert found(meta={"kind": "decision"}, metaPredicate='$.priority like_regex "^h"') == [
        "api rate limits decided"
    ]
    ranked = found(fulltext="api", metaPredicate='$.kind starts with "not"')
    assert ranked == ["api notes from standup"]
    assert found(metaPredicate='$.kind == "decision"', grep="GATEWAY") == ["ship the api gateway"]
    assert len(found(metaPredicate="")) == 4  # empty: no predicate
    before = result(rpc("memory.history", {"tree": "/rpc/mp"}))["events"]
    for bad in ["$.kind = 1", "$.a.size() > 1", "(" * 40 + "$.a == 1" + ")" * 40, "x" * 2001]:
        code, message, param = app_error(rpc("memory.search", {"metaPredicate": bad}))
        assert (code, param) == ("VALIDATION_ERROR", "metaPredicate"), bad
        assert message.startswith("metaPredicate: "), message
    assert result(rpc("memory.history", {"tree": "/rpc/mp"}))["events"] == before


def test_body_cap_is_one_mebibyte(me_server: Server) -> None:
    big = call("memory.create", {"content": "x" * (1024 * 1024), "tree": "/rpc/big"})
    response = post(me_server, big)
    assert response.status_code == 413
    assert response.json()["error"]["code"] == "PAYLOAD_TOO_LARGE"
    fits = call("memory.create", {"content": "x" * (1000 * 1000), "tree": "/rpc/big"})
    assert "result" in post(me_server, fits).json()


def test_old_clients_are_turned_away(me_server: Server) -> None:
    response = post(me_server, call("memory.tree"), **{"X-Client-Version": "0.3.0"})
    assert response.status_code == 426
    assert response.json()["error"]["data"]["code"] == "CLIENT_VERSION_INCOMPATIBLE"


def test_batch_create_statuses_and_atomicity(rpc: RpcCall) -> None:
    first = [
        {"content": "one", "tree": "/rpc/batch", "name": "one"},
        {"content": "two", "tree": "/rpc/batch"},
    ]
    made = result(rpc("memory.batchCreate", {"memories": first}))["results"]
    assert [r["status"] for r in made] == ["inserted", "inserted"]
    again = [
        {"content": "one", "tree": "/rpc/batch", "name": "one"},  # unchanged
        {"content": "ONE", "tree": "/rpc/batch", "name": "one-b"},
        {"id": made[1]["id"], "content": "two v2", "tree": "/rpc/batch"},
    ]
    replaced = result(rpc("memory.batchCreate", {"memories": again, "onConflict": "replace"}))
    assert [r["status"] for r in replaced["results"]] == ["skipped", "inserted", "updated"]
    assert replaced["results"][0]["id"] == made[0]["id"]
    assert result(rpc("memory.get", {"id": made[1]["id"]}))["content"] == "two v2"
    # A key twice in one batch, and a conflict mid-batch: nothing is written.
    twice = [{"content": "x", "tree": "/rpc/batch2", "name": "n"}] * 2
    assert app_error(rpc("memory.batchCreate", {"memories": twice}))[2] == "memories[1]"
    clash = [
        {"content": "fresh", "tree": "/rpc/batch3", "name": "fresh"},
        {"content": "dup", "tree": "/rpc/batch", "name": "one"},
    ]
    assert app_error(rpc("memory.batchCreate", {"memories": clash}))[0] == "CONFLICT"
    assert result(rpc("memory.countTree", {"tree": "/rpc/batch3"})) == {"count": 0}


def test_update_semantics(rpc: RpcCall) -> None:
    made = result(
        rpc(
            "memory.create",
            {
                "content": "c",
                "tree": "/rpc/upd",
                "name": "n",
                "meta": {"a": 1, "b": 2},
                "temporal": {"start": "2025-01-01T00:00:00Z", "end": "2025-01-02T00:00:00Z"},
            },
        )
    )
    same = result(
        rpc("memory.update", {"id": made["id"], "versionHash": made["versionHash"], "content": "c"})
    )
    assert same["version"] == 1 and same["versionHash"] == made["versionHash"]
    meta = result(
        rpc(
            "memory.update",
            {
                "id": made["id"],
                "versionHash": made["versionHash"],
                "meta": {"b": 3},
                "temporal": None,
                "name": None,
            },
        )
    )
    assert meta["meta"] == {"b": 3}  # replaced, not merged
    assert meta["temporal"] is None and meta["name"] is None and meta["version"] == 2
    other = result(rpc("memory.create", {"content": "o", "tree": "/rpc/upd", "name": "taken"}))
    clash = rpc(
        "memory.update", {"id": meta["id"], "versionHash": meta["versionHash"], "name": "taken"}
    )
    assert app_error(clash)[0] == "CONFLICT"
    assert other["name"] == "taken"


def test_history_and_revert(rpc: RpcCall) -> None:
    made = result(rpc("memory.create", {"content": "first", "tree": "/rpc/hist", "name": "h"}))
    v2 = result(
        rpc(
            "memory.update",
            {"id": made["id"], "versionHash": made["versionHash"], "content": "second"},
        )
    )
    events = result(rpc("memory.history", {"memoryId": made["id"]}))
    assert [e["operation"] for e in events["events"]] == ["update", "insert"]  # newest first
    assert [e["version"] for e in events["events"]] == [2, 1]
    assert events["events"][1]["content"] == "first" and events["nextCursor"] is None
    page = result(rpc("memory.history", {"tree": "/rpc/hist", "limit": 1, "order": "asc"}))
    assert len(page["events"]) == 1 and page["nextCursor"]
    rest = result(
        rpc("memory.history", {"tree": "/rpc/hist", "cursor": page["nextCursor"], "order": "asc"})
    )
    assert [e["version"] for e in rest["events"]] == [2]
    assert app_error(rpc("memory.history", {}))[0] == "VALIDATION_ERROR"

    back = result(rpc("memory.revert", {"id": made["id"], "version": 1}))
    assert back["content"] == "first" and back["version"] == 3
    wrong = rpc(
        "memory.revert", {"id": made["id"], "version": 2, "expectedVersionHash": v2["versionHash"]}
    )
    assert app_error(wrong)[0] == "CONFLICT"
    result(rpc("memory.deleteByPath", {"path": "/rpc/hist/h"}))
    undeleted = result(rpc("memory.revert", {"path": "/rpc/hist/h", "version": 2}))
    assert undeleted["id"] == made["id"] and undeleted["content"] == "second"
    assert undeleted["version"] == 4
    by_path = result(rpc("memory.history", {"path": "/rpc/hist/h", "operation": "delete"}))
    assert [e["operation"] for e in by_path["events"]] == ["delete"]
    assert app_error(rpc("memory.revert", {"id": made["id"], "version": 99}))[0] == "NOT_FOUND"


def test_access_effective_and_embedding_status(rpc: RpcCall) -> None:
    access = result(rpc("access.effective"))
    assert access["space"]["slug"] == SPACE
    assert access["principal"]["kind"] in ("u", "s") and access["access"][0]["access"] == 3
    status = result(rpc("memory.embeddingStatus"))
    assert set(status) == {"pending", "inFlight", "waiting", "failed", "oldestPendingAt"}


def test_semantic_search_without_an_embedder(make_app: Callable[..., InProcess]) -> None:
    srv = make_app(env={"GRAPHRECALL_SPACE": SPACE, "GRAPHRECALL_EMBEDDER": "none"})
    result(post(srv, call("memory.create", {"content": "lexical only", "tree": "/x"})).json())
    semantic = post(srv, call("memory.search", {"semantic": "lexical"})).json()
    assert app_error(semantic)[0] == "EMBEDDING_NOT_CONFIGURED"
    hybrid = result(
        post(srv, call("memory.search", {"semantic": "x", "fulltext": "lexical"})).json()
    )
    assert [r["content"] for r in hybrid["results"]] == ["lexical only"]
    assert hybrid["results"][0]["hasEmbedding"] is False


def test_the_callers_home_is_counted_under_tilde_only(rpc: RpcCall) -> None:
    mine = result(rpc("memory.create", {"content": "mine", "tree": "~/treetest"}))
    assert mine["tree"] == "~/treetest"
    result(rpc("memory.create", {"content": "theirs", "tree": "/home/someone/treetest"}))
    nodes = {n["path"]: n["count"] for n in result(rpc("memory.tree"))["nodes"]}
    assert nodes["/home"] == 1 and nodes["/home/someone"] == 1
    assert nodes["~/treetest"] == 1 and nodes["~"] >= 1
    homes = sorted(p for p in nodes if p.startswith("/home"))
    assert homes == ["/home", "/home/someone", "/home/someone/treetest"]
    top = {n["path"]: n["count"] for n in result(rpc("memory.tree", {"levels": 1}))["nodes"]}
    assert top["/home"] == 1
    found = result(rpc("memory.search", {"tree": "~"}))
    assert {r["tree"] for r in found["results"]} <= {"~", "~/treetest", "~/cli-notes"}


def test_serve_rejects_a_malformed_space_slug(tmp_path: Any) -> None:
    env = {**os.environ, "GRAPHRECALL_SPACE": "Not-A-Slug"}
    done = subprocess.run(
        [sys.executable, "-m", "graphrecall", "serve", "--db", str(tmp_path / "x.db")],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 2  # a setting to fix: one line, no traceback
    assert "GRAPHRECALL_SPACE: must be 12 lowercase letters or digits" in done.stderr
    assert "Traceback" not in done.stderr and "serving" not in done.stdout
