"""The MCP tools through the official MCP Python SDK client: over stdio
(``graphrecall mcp``) and over streamable HTTP (``/mcp`` of the server)."""

from __future__ import annotations

import json
import sys
import time
from collections.abc import Awaitable, Callable
from typing import Any

import anyio
import httpx2
from mcp.client import Client
from mcp.client.stdio import StdioServerParameters
from mcp.client.streamable_http import streamable_http_client

from tests.api.memory_engine.conftest import SPACE, RpcCall, base, wait_embedded
from tests.conftest import Server

MEMORY_TOOLS = {
    "me_memory_context",
    "me_memory_create",
    "me_memory_search",
    "me_memory_get",
    "me_memory_get_by_path",
    "me_memory_update",
    "me_memory_delete",
    "me_memory_delete_by_path",
    "me_memory_delete_tree",
    "me_memory_count",
    "me_memory_copy",
    "me_memory_mv",
    "me_memory_tree",
    "me_memory_history",
    "me_memory_revert",
}
SEARCH_PARAMS = {
    "semantic",
    "fulltext",
    "grep",
    "meta",
    "tree",
    "temporal",
    "weights",
    "candidateLimit",
    "semanticThreshold",
    "limit",
    "order_by",
}

Session = Callable[[Client], Awaitable[None]]


def text_of(outcome: Any) -> str:
    return "".join(getattr(c, "text", "") for c in outcome.content)


async def call(client: Client, tool: str, **args: Any) -> Any:
    outcome = await client.call_tool(tool, args)
    assert not outcome.is_error, text_of(outcome)
    return json.loads(text_of(outcome))


async def failure(client: Client, tool: str, **args: Any) -> str:
    outcome = await client.call_tool(tool, args)
    assert outcome.is_error
    return text_of(outcome)


async def exercise(client: Client, tree: str) -> None:
    """What an agent does: list the tools, store, search, read, update, clean up."""
    tools = {t.name: t for t in (await client.list_tools()).tools}
    graph_tools = {"graph_search", "graph_add_episode", "graph_get_context", "thread_add_messages"}
    assert set(tools) == MEMORY_TOOLS | graph_tools
    assert set(tools["me_memory_search"].input_schema["properties"]) >= SEARCH_PARAMS
    assert tools["me_memory_search"].input_schema.get("required", []) == []
    assert set(tools["me_memory_create"].input_schema["required"]) == {"content", "tree"}

    context = await call(client, "me_memory_context")
    assert context["space"]["slug"] == SPACE
    made = await call(
        client,
        "me_memory_create",
        content="Deploys are frozen during the last week of December.",
        tree=tree,
        name="freeze",
        meta={"type": "decision"},
        temporal={"start": "2025-12-24T00:00:00Z", "end": "2026-01-01T00:00:00Z"},
    )
    assert made["tree"] == tree and made["version"] == 1
    found = await call(
        client, "me_memory_search", fulltext="deploys frozen", tree=tree, limit=0, order_by=None
    )
    assert [r["id"] for r in found["results"]] == [made["id"]]
    assert found["limit"] == 10 and 0 <= found["results"][0]["score"] <= 1
    browse = await call(
        client,
        "me_memory_search",
        meta={"type": "decision"},
        tree=tree,
        temporal={"contains": "2025-12-25T12:00:00Z"},
        order_by="asc",
    )
    assert [r["id"] for r in browse["results"]] == [made["id"]]
    assert (await call(client, "me_memory_get", id=made["id"]))["name"] == "freeze"
    assert (await call(client, "me_memory_get_by_path", path=f"{tree}/freeze"))["id"] == made["id"]
    updated = await call(
        client,
        "me_memory_update",
        id=made["id"],
        version_hash=made["versionHash"],
        content="Deploys are frozen from Dec 20.",
        name="",
    )
    assert updated["version"] == 2 and updated["name"] is None
    stale = await failure(
        client, "me_memory_update", id=made["id"], version_hash=made["versionHash"], content="x"
    )
    assert "stale" in stale
    assert "grep cannot be used alone" in await failure(client, "me_memory_search", grep="x")
    assert (await call(client, "me_memory_count", tree=tree)) == {"count": 1}
    nodes = (await call(client, "me_memory_tree", tree=tree.rsplit("/", 1)[0]))["nodes"]
    assert {"path": tree, "count": 1} in nodes
    history = await call(client, "me_memory_history", memoryId=made["id"])
    assert [e["version"] for e in history["events"]] == [2, 1]
    copied = await call(
        client, "me_memory_copy", source=tree, destination=f"{tree}-copy", dry_run=False
    )
    assert copied == {"count": 1}
    moved = await call(
        client, "me_memory_mv", source=f"{tree}-copy", destination=f"{tree}-moved", dry_run=False
    )
    assert moved == {"count": 1}
    deleted = await call(client, "me_memory_delete_tree", tree=f"{tree}-moved", dry_run=False)
    assert deleted == {"count": 1}
    assert (await call(client, "me_memory_delete", id=made["id"])) == {"deleted": True}
    assert "not found" in (await failure(client, "me_memory_get", id=made["id"])).lower()


async def graph_tools(client: Client, server: Server) -> None:
    graph = httpx2.post(
        f"{server.base_url}/graphs",
        json={"name": "mcp graph"},
        headers={"Authorization": f"Api-Key {server.api_key}"},
    ).json()["uuid"]
    added = await call(
        client,
        "graph_add_episode",
        graph_uuid=graph,
        data="Maria moved to Lisbon in 2021 and works at Acme.",
    )
    assert added["episode_uuid"] and added["task_uuid"]
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        found = await call(
            client, "graph_search", graph_uuid=graph, query="Maria", scope="episodes"
        )
        if found["results"]:
            break
        await anyio.sleep(0.2)
    assert found["results"][0]["uuid"] == added["episode_uuid"]
    assert "graph_uuid" in (await failure(client, "graph_search", query="x"))

    headers = {"Authorization": f"Api-Key {server.api_key}"}
    user = httpx2.post(f"{server.base_url}/users", json={}, headers=headers).json()
    thread = httpx2.post(
        f"{server.base_url}/threads", json={"user_uuid": user["uuid"]}, headers=headers
    ).json()
    sent = await call(
        client,
        "thread_add_messages",
        thread_uuid=thread["uuid"],
        messages=[{"role": "user", "name": "Tom", "content": "I adopted a dog called Biscuit."}],
    )
    assert len(sent["message_uuids"]) == 1 and sent["task_uuid"]
    bad = await failure(
        client,
        "thread_add_messages",
        thread_uuid=thread["uuid"],
        messages=[{"role": "alien", "content": "x"}],
    )
    assert "role" in bad
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        block = await call(client, "graph_get_context", graph_uuid=user["uuid"], query="dog")
        if "Biscuit" in block["context"]:
            break
        await anyio.sleep(0.2)
    assert "Biscuit" in block["context"]


def run(session: Session, target: Any) -> None:
    async def main() -> None:
        async with Client(target, read_timeout_seconds=120) as client:
            await session(client)

    anyio.run(main)


def test_mcp_over_stdio(me_server: Server, rpc: RpcCall) -> None:
    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "graphrecall", "--db", str(me_server.db), "mcp", "--space", SPACE],
        env={"GRAPHRECALL_LOG_LEVEL": "warning", "PATH": ""},
    )

    async def session(client: Client) -> None:
        await exercise(client, "/mcp/stdio")
        await graph_tools(client, me_server)

    run(session, params)
    wait_embedded(rpc)


def http_client(server: Server, **headers: str) -> Any:
    client = httpx2.AsyncClient(
        headers={"Authorization": f"Bearer {server.api_key}", **headers}, timeout=120
    )
    return streamable_http_client(f"{base(server)}/mcp", http_client=client)


def test_mcp_over_http(me_server: Server) -> None:
    async def session(client: Client) -> None:
        await exercise(client, "/mcp/http")
        await graph_tools(client, me_server)

    run(session, http_client(me_server, **{"X-Me-Space": SPACE}))


def test_mcp_http_needs_a_key_and_a_space_for_memory_tools(me_server: Server) -> None:
    response = httpx2.post(
        f"{base(me_server)}/mcp",
        json={"jsonrpc": "2.0", "id": 1, "method": "tools/list"},
        headers={"Accept": "application/json, text/event-stream"},
    )
    assert response.status_code == 401

    async def no_space(client: Client) -> None:
        assert "no memory space selected" in await failure(client, "me_memory_get", id="x")

    run(no_space, http_client(me_server))


def test_mcp_http_an_unknown_space_answers_as_another_projects(me_server: Server) -> None:
    """A good key gets the same 403 for a space that does not exist and for one of
    another project (slugs cannot be probed); a bad key gets 401 whatever the slug."""

    def post(space: str, key: str) -> Any:
        return httpx2.post(
            f"{base(me_server)}/mcp",
            json={"jsonrpc": "2.0", "id": 1, "method": "tools/list"},
            headers={"Authorization": f"Bearer {key}", "X-Me-Space": space},
        )

    theirs = me_server.cli("spaces", "create", "Probe target", "--project", "probed")
    answers = [post(space, me_server.api_key) for space in ("nosuchspace1", theirs)]
    assert [a.status_code for a in answers] == [403, 403]
    assert answers[0].json() == answers[1].json()
    assert post("nosuchspace1", "wrong-key-0123456789").status_code == 401


def test_the_me_mcp_proxy_works_against_graphrecall(
    me_binary: Any, me_server: Server, tmp_path: Any
) -> None:
    """``me mcp`` (the client's own stdio MCP server) proxies onto our JSON-RPC."""
    params = StdioServerParameters(
        command=str(me_binary),
        args=["mcp", "--api-key", me_server.api_key, "--space", SPACE, "--server", base(me_server)],
        env={"HOME": str(tmp_path), "PATH": ""},
    )

    async def session(client: Client) -> None:
        names = {t.name for t in (await client.list_tools()).tools}
        assert {"me_memory_search", "me_memory_create", "me_memory_context"} <= names
        context = await call(client, "me_memory_context", format="json")
        assert context["space"]["slug"] == SPACE
        made = await call(
            client,
            "me_memory_create",
            content="Proxied through me mcp.",
            tree="/mcp/proxy",
            format="json",
        )
        found = await call(
            client, "me_memory_search", fulltext="proxied", tree="/mcp/proxy", format="json"
        )
        assert [r["id"] for r in found["results"]] == [made["id"]]
        assert "stale" in await failure(
            client, "me_memory_update", id=made["id"], version_hash="0" * 32, content="x"
        )

    run(session, params)


def test_mcp_prompts_get_of_an_unknown_prompt_is_invalid_params(me_server: Server) -> None:
    """graphrecall offers no prompts; asking for one is the caller's -32602 (it was the
    library's error code 0)."""
    response = httpx2.post(
        f"{base(me_server)}/mcp",
        json={"jsonrpc": "2.0", "id": 1, "method": "prompts/get", "params": {"name": "nope"}},
        headers={
            "Accept": "application/json, text/event-stream",
            "Authorization": f"Bearer {me_server.api_key}",
            "X-Me-Space": SPACE,
        },
    )
    assert response.status_code == 200
    text = response.text
    payload = json.loads(text[text.index("{") : text.rindex("}") + 1])
    assert payload["error"]["code"] == -32602
    assert "Unknown prompt: nope" in payload["error"]["message"]
