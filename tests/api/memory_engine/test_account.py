"""The account face (``/api/v1/user/rpc``) through the real ``me`` 0.8.0 client: whoami,
spaces and API keys map onto graphrecall's projects, spaces and keys; what has no meaning
here answers an error that says so."""

from __future__ import annotations

import os
import subprocess
import time
from typing import Any

import httpx

from tests.api.memory_engine.conftest import SPACE, Me, base
from tests.conftest import Server, _free_port


def user_rpc(server: Server, method: str, params: Any = None, key: str | None = None) -> Any:
    response = httpx.post(
        f"{base(server)}/api/v1/user/rpc",
        json={"jsonrpc": "2.0", "method": method, "id": 7, "params": params or {}},
        headers={"Authorization": f"Bearer {key or server.api_key}"},
        timeout=30,
    )
    assert response.status_code == 200, response.text
    return response.json()


def test_whoami_names_the_key_and_its_project(me: Me) -> None:
    shown = me.json("whoami")
    identity = shown["identity"]
    assert identity["kind"] == "s" and identity["email"] is None
    assert identity["name"] == "from environment"  # the GRAPHRECALL_API_KEY key's name
    assert identity["project"]["name"] == "default"
    assert shown["space"]["slug"] == SPACE and shown["space"]["admin"] is True
    assert shown["auth"] == "service-account"
    text = me.ok("whoami")
    assert "Kind:   service account" in text and f"({SPACE})" in text


def test_space_list_and_create(me: Me, me_server: Server) -> None:
    spaces = me.json("space", "list")["spaces"]
    mine = [s for s in spaces if s["slug"] == SPACE]
    assert mine and mine[0]["active"] is True and mine[0]["admin"] is True
    created = me.json("space", "create", "Account test space")
    assert len(created["slug"]) == 12
    listed = {s["slug"]: s["name"] for s in me.json("space", "list")["spaces"]}
    assert listed[created["slug"]] == "Account test space"
    renamed = user_rpc(me_server, "space.rename", {"slug": created["slug"], "name": "Renamed"})
    assert renamed["result"]["space"]["name"] == "Renamed"
    # The new space is usable at once with the same key.
    found = httpx.post(
        f"{base(me_server)}/api/v1/memory/rpc",
        json={"jsonrpc": "2.0", "method": "memory.tree", "id": 1, "params": {}},
        headers={"Authorization": f"Bearer {me_server.api_key}", "X-Me-Space": created["slug"]},
        timeout=30,
    ).json()
    assert found["result"] == {"nodes": []}


def test_apikey_list_create_and_revoke(me: Me, me_server: Server) -> None:
    keys = {k["name"]: k for k in me.json("apikey", "list")["apiKeys"]}
    assert keys["from environment"]["restricted"] is False
    assert keys["from environment"]["id"] == me.json("whoami")["identity"]["id"]
    assert "from environment" in me.ok("apikey", "list")

    # `me apikey create/delete` need an OAuth login session (client-side); the calls
    # they make are answered here.
    made = user_rpc(me_server, "apiKey.create", {"name": "ci"})["result"]
    assert made["name"] == "ci" and made["key"].startswith("gr_")
    space_list = user_rpc(me_server, "space.list", key=made["key"])["result"]["spaces"]
    assert SPACE in [s["slug"] for s in space_list]
    got = user_rpc(me_server, "apiKey.get", {"id": made["id"]})["result"]
    assert got["apiKey"]["name"] == "ci" and got["access"] == []
    assert user_rpc(me_server, "apiKey.delete", {"id": made["id"]})["result"] == {"deleted": True}
    refused = httpx.post(
        f"{base(me_server)}/api/v1/user/rpc",
        json={"jsonrpc": "2.0", "method": "whoami", "id": 1},
        headers={"Authorization": f"Bearer {made['key']}"},
        timeout=30,
    )
    assert refused.status_code == 401 and refused.json()["error"]["code"] == "UNAUTHORIZED"
    assert user_rpc(me_server, "apiKey.delete", {"id": made["id"]})["result"] == {"deleted": False}
    names = [k["name"] for k in me.json("apikey", "list")["apiKeys"]]
    assert "from environment" in names and "ci" not in names


def test_what_graphrecall_does_not_have_says_so(me: Me, me_server: Server) -> None:
    for command in (("service", "list"), ("invite", "list"), ("access", "list"), ("group", "list")):
        printed = me.fails(*command)
        assert "is not supported by graphrecall" in printed, (command, printed)
    error = user_rpc(me_server, "apiKey.create", {"name": "x", "expiresAt": "2030-01-01T00:00:00Z"})
    assert error["error"]["code"] == -32000
    assert error["error"]["data"] == {"code": "VALIDATION_ERROR", "param": "expiresAt"}
    unknown = user_rpc(me_server, "space.frobnicate")
    assert unknown["error"] == {"code": -32601, "message": "Method not found: space.frobnicate"}


def test_the_account_face_needs_a_key(me_server: Server) -> None:
    url = f"{base(me_server)}/api/v1/user/rpc"
    body = {"jsonrpc": "2.0", "method": "whoami", "id": 1}
    assert httpx.post(url, json=body, timeout=30).status_code == 401
    wrong = httpx.post(url, json=body, headers={"Authorization": "Bearer nope"}, timeout=30)
    assert wrong.status_code == 401


def test_space_members_are_the_project_keys(me: Me) -> None:
    members = me.json("space", "members", "--kind", "all")["members"]
    assert {"name": "from environment", "kind": "s"}.items() <= members[0].items()
    assert me.json("space", "members")["members"] == []  # no user accounts


def test_me_serve_web_ui_reaches_graphrecall(me: Me, me_server: Server) -> None:
    """`me serve` (the client's local web UI) proxies its JSON-RPC to this server."""
    port = _free_port()
    env = {
        "PATH": os.environ.get("PATH", ""),
        "HOME": str(me.home),
        "ME_SERVER": base(me_server),
        "ME_API_KEY": me_server.api_key,
        "ME_SPACE": SPACE,
        "NO_COLOR": "1",
    }
    process = subprocess.Popen(
        [str(me.binary), "serve", "--port", str(port), "--no-open"],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    ui = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            try:
                if httpx.get(f"{ui}/healthz", timeout=1).status_code == 200:
                    break
            except httpx.HTTPError:
                time.sleep(0.2)
        page = httpx.get(ui, timeout=10)
        assert page.status_code == 200 and "<title>Memory Engine</title>" in page.text
        call = {"jsonrpc": "2.0", "id": 1, "method": "memory.tree", "params": {}}
        tree = httpx.post(f"{ui}/rpc", json=call, timeout=30).json()
        assert "nodes" in tree["result"]
        call = {"jsonrpc": "2.0", "id": 2, "method": "space.list", "params": {}}
        listed = httpx.post(f"{ui}/api/v1/user/rpc", json=call, timeout=30).json()
        assert SPACE in [s["slug"] for s in listed["result"]["spaces"]]
    finally:
        process.terminate()
        process.wait(15)
