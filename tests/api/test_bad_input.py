"""The bad-input corpus: hostile and careless requests to both faces and MCP. Each must
get a 4xx (or a JSON-RPC client error) naming the offending field, and write nothing;
the server must keep answering on the same connection afterwards. On SQLite and PostgreSQL."""

from __future__ import annotations

import json
import sys
import threading
import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest

from graphrecall.domain import limits
from tests import pg_server
from tests.conftest import API_KEY, Server, _free_port

SPACE = "corpusspace1"
BIG = 2**63  # one past the signed 64-bit range
DEEP_DEPTH = 300  # past the body's depth cap (64) and pydantic's serialiser (255)
OVERFLOW_LATE = "9999-12-31T23:59:59-14:00"  # leaves year 9999 when moved to UTC
OVERFLOW_EARLY = "0001-01-01T00:00:00+14:00"  # leaves year 1 when moved to UTC


def deep(depth: int = DEEP_DEPTH) -> dict[str, Any]:
    out: dict[str, Any] = {}
    cur = out
    for _ in range(depth - 1):
        cur["a"] = {}
        cur = cur["a"]
    return out


@pytest.fixture(scope="module", params=["sqlite", "postgresql"])
def srv(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Server]:
    """The corpus runs on each backend (issue 47: PostgreSQL answered some of it with 500s)."""
    sys.setrecursionlimit(max(sys.getrecursionlimit(), 5000))  # to encode DEEP bodies
    db: Path | str = tmp_path_factory.mktemp("corpus") / "graphrecall.db"
    if request.param == "postgresql":
        db = pg_server.with_schema(pg_server.server_url(), f"c{uuid.uuid4().hex}")
    server = Server(db, _free_port(), API_KEY, {"GRAPHRECALL_SPACE": SPACE}).start()  # type: ignore[arg-type]
    yield server
    server.stop()


@dataclass
class World:
    client: httpx.Client
    base: str
    graph: str
    user: str
    thread: str
    node: str
    edge: str

    def counts(self) -> tuple[int, ...]:
        """How many records of each kind the graph, the user and the space hold."""
        out = []
        for kind in ("nodes", "edges", "episodes"):
            page = self.client.post(f"{self.base}/graphs/{self.graph}/{kind}/list", json={})
            out.append(len(page.json()["items"]))
        messages = self.client.get(f"{self.base}/threads/{self.thread}/messages").json()
        out.append(len(messages["items"]))
        users = self.client.post(f"{self.base}/users/list", json={}).json()
        out.append(len(users["items"]))
        out.append(rpc(self, "memory.countTree", {"tree": "*"})["result"]["count"])
        return tuple(out)


def rpc(world: World, method: str, params: Any, raw: bytes | None = None) -> dict[str, Any]:
    root = world.base.removesuffix("/api/v4")
    body = (
        raw
        if raw is not None
        else _dumps({"jsonrpc": "2.0", "id": 1, "method": method, "params": params})
    )
    response = world.client.post(
        f"{root}/api/v1/memory/rpc",
        content=body,
        headers={"Authorization": f"Bearer {API_KEY}", "X-Me-Space": SPACE},
    )
    assert response.status_code == 200, response.text
    return dict(response.json())


def _dumps(value: Any) -> bytes:
    return json.dumps(value).encode()


@pytest.fixture(scope="module")
def world(srv: Server) -> Iterator[World]:
    client = httpx.Client(headers={"Authorization": f"Api-Key {API_KEY}"}, timeout=60)
    base = srv.base_url
    graph = client.post(f"{base}/graphs", json={"name": "corpus"}).json()["uuid"]
    user = client.post(f"{base}/users", json={"user_id": "corpus-user"}).json()
    thread = client.post(f"{base}/threads", json={"user_uuid": user["uuid"]}).json()
    edge = {"fact": "Ann knows Bob", "fact_name": "KNOWS"}
    refs = {"source_node": {"name": "Ann"}, "target_node": {"name": "Bob"}}
    added = client.post(f"{base}/graphs/{graph}/edges", json={"edges": [edge | refs]}).json()
    w = World(
        client,
        base,
        graph,
        user["uuid"],
        thread["uuid"],
        added["edges"][0]["source_node_uuid"],
        added["edges"][0]["uuid"],
    )
    yield w
    client.close()


def fill(path: str, world: World) -> str:
    return path.format(g=world.graph, u=world.user, t=world.thread, n=world.node, e=world.edge)


# -- the Zep face: (method, path, body, the param the 400 must name) -----------------------
ZepCase = tuple[str, str, Any, str]


def _zep_cases() -> list[ZepCase]:
    cases: list[ZepCase] = []
    edge = {
        "fact": "Ann likes tea",
        "fact_name": "LIKES",
        "source_node": {"name": "Ann"},
        "target_node": {"name": "Tea"},
    }
    json_fields: list[tuple[str, str, Any, str]] = [
        # (method, path, a body with {X} in one field, that field's param)
        (
            "POST",
            "/graphs/{g}/nodes",
            {"nodes": [{"name": "N", "attributes": "X"}]},
            "nodes[0].attributes",
        ),
        (
            "POST",
            "/graphs/{g}/nodes",
            {"nodes": [{"name": "N", "metadata": "X"}]},
            "nodes[0].metadata",
        ),
        (
            "POST",
            "/graphs/{g}/edges",
            {"edges": [edge | {"attributes": "X"}]},
            "edges[0].attributes",
        ),
        ("POST", "/graphs/{g}/edges", {"edges": [edge | {"metadata": "X"}]}, "edges[0].metadata"),
        (
            "POST",
            "/graphs/{g}/edges",
            {"edges": [edge | {"source_node": {"name": "Ann", "attributes": "X"}}]},
            "edges[0].source_node.attributes",
        ),
        ("PATCH", "/graphs/{g}/nodes/{n}", {"attributes": "X"}, "attributes"),
        ("PATCH", "/graphs/{g}/edges/{e}", {"attributes": "X"}, "attributes"),
        ("POST", "/graphs/{g}/episodes", {"data": "hello", "metadata": "X"}, "metadata"),
        (
            "POST",
            "/threads/{t}/messages",
            {"messages": [{"role": "user", "content": "hi", "metadata": "X"}]},
            "messages[0].metadata",
        ),
        ("POST", "/users", {"user_id": "u-x", "metadata": "X"}, "metadata"),
        ("PATCH", "/users/{u}", {"metadata": "X"}, "metadata"),
        (
            "PUT",
            "/graphs/{g}/ontology",
            {"entity_types": [], "entity_type_hierarchy": "X"},
            "entity_type_hierarchy",
        ),
        ("POST", "/graphs/{g}/nodes/list", {"filters": "X"}, "filters"),
        ("POST", "/graphs/{g}/search/edges", {"query": "tea", "filters": "X"}, "filters"),
    ]
    for method, path, body, param in json_fields:
        text = json.dumps(body)
        for bad, suffix in (
            ({"n": BIG}, ".n"),
            ({"n": -BIG - 1}, ".n"),
            ({"n": [1, 10**30]}, ".n[1]"),
            (deep(), None),
        ):
            value = json.loads(text.replace('"X"', json.dumps(bad)))
            cases.append((method, path, value, param + suffix if suffix else param))
    # Timestamps that leave years 1-9999 in UTC, and ones that are not timestamps.
    for value in (OVERFLOW_LATE, OVERFLOW_EARLY, "not a time", "2024-13-01T00:00:00Z"):
        cases += [
            (
                "POST",
                "/graphs/{g}/edges",
                {"edges": [edge | {"valid_at": value}]},
                "edges[0].valid_at",
            ),
            (
                "POST",
                "/graphs/{g}/edges",
                {"edges": [edge | {"invalid_at": value}]},
                "edges[0].invalid_at",
            ),
            (
                "POST",
                "/graphs/{g}/edges",
                {"edges": [edge | {"expired_at": value}]},
                "edges[0].expired_at",
            ),
            (
                "POST",
                "/graphs/{g}/episodes",
                {"data": "hi", "reference_time": value},
                "reference_time",
            ),
            (
                "POST",
                "/threads/{t}/messages",
                {"messages": [{"role": "user", "content": "hi", "reference_time": value}]},
                "messages[0].reference_time",
            ),
        ]
        for field in ("created_at", "valid_at", "invalid_at"):
            date = {"field": field, "operator": "gt", "value": value}
            body = {"query": "tea", "filters": {"date_filters": {"any_of": [{"all_of": [date]}]}}}
            cases.append(
                (
                    "POST",
                    "/graphs/{g}/search/edges",
                    body,
                    "filters.date_filters.any_of[0].all_of[0].value",
                )
            )
    # Integers past 64 bits in filters, on search and list routes.
    for scope in ("edges", "nodes"):
        for value in (10**30, -(10**30), BIG):
            prop = {"property_name": "n", "operator": "eq", "value": value}
            cases.append(
                (
                    "POST",
                    f"/graphs/{{g}}/search/{scope}",
                    {"query": "x", "filters": {"property_filters": [prop]}},
                    "filters.property_filters[0].value",
                )
            )
            cases.append(
                (
                    "POST",
                    f"/graphs/{{g}}/{scope}/list",
                    {"filters": {"property_filters": [prop]}},
                    "filters.property_filters[0].value",
                )
            )
    # Whole bodies nested past any parser, on every kind of write.
    for method, path in (
        ("POST", "/graphs"),
        ("POST", "/users"),
        ("POST", "/threads"),
        ("POST", "/graphs/{g}/nodes"),
        ("POST", "/graphs/{g}/edges"),
        ("POST", "/graphs/{g}/episodes"),
        ("POST", "/threads/{t}/messages"),
        ("POST", "/graphs/{g}/search/edges"),
        ("POST", "/graphs/{g}/context"),
        ("PATCH", "/project"),
        ("POST", "/context-templates"),
    ):
        cases.append((method, path, "[" * 10_000 + "]" * 10_000, "body"))
    # Shapes and values the models refuse.
    for size in (0, -1, 10**30, BIG, "ten"):
        for path in ("/threads", "/tasks", "/threads/{t}/messages", "/threads/{t}/episodes"):
            cases.append(("GET", f"{path}?page_size={size}", None, "page_size"))
        cases.append(
            ("POST", f"/graphs/{{g}}/search/edges?page_size={size}", {"query": "x"}, "page_size")
        )
        cases.append(("POST", f"/graphs/{{g}}/nodes/list?page_size={size}", {}, "page_size"))
    cases += [
        (
            "POST",
            "/graphs/{g}/edges",
            {"edges": [edge | {"fact_name": "likes"}]},
            "edges[0].fact_name",
        ),
        ("POST", "/graphs/{g}/edges", {"edges": []}, "edges"),
        ("POST", "/graphs/{g}/nodes", {"nodes": [{"name": ""}]}, "nodes[0].name"),
        ("POST", "/graphs/{g}/episodes", {"data": ""}, "data"),
        ("POST", "/graphs/{g}/episodes", {"data": "{", "type": "json"}, "data"),
        (
            "POST",
            "/threads/{t}/messages",
            {"messages": [{"role": "robot", "content": "x"}]},
            "messages[0].role",
        ),
        ("POST", "/threads/{t}/messages", {"messages": []}, "messages"),
        ("POST", "/graphs/{g}/search/edges", {"query": "x", "reranker": "best"}, "reranker"),
        ("POST", "/graphs/{g}/search/edges", {"query": "x", "mmr_lambda": 2}, "mmr_lambda"),
        ("POST", "/graphs/{g}/search/edges", {}, "query"),
        ("POST", "/graphs/{g}/subgraph", {"seed_node_uuids": [], "depth": 10**30}, "depth"),
        (
            "POST",
            "/graphs/{g}/nodes",
            b'{"nodes": [{"name": "N", "attributes": {"x": NaN}}]}',
            "body",
        ),
        (
            "POST",
            "/graphs/{g}/nodes",
            b'{"nodes": [{"name": "N", "attributes": {"x": -Infinity}}]}',
            "body",
        ),
        ("POST", "/graphs/{g}/nodes", b'{"nodes": [', "body"),
        ("POST", "/graphs/{g}/nodes", b"\xff\xfe", "body"),
        (
            "POST",
            "/graphs/{g}/nodes",
            b'{"nodes": [{"name": "N", "attributes": {"x": 1' + b"0" * 5000 + b"}}]}",
            "body",
        ),
    ]
    # Issue 47: free-text caps (item 6), cost caps (item 7), no coercion, no empty user_id.
    long = "x" * (limits.MAX_DESCRIPTION_CHARS + 1)
    cases += [
        ("POST", "/users", {"first_name": "x" * (limits.MAX_PERSON_NAME_CHARS + 1)}, "first_name"),
        ("POST", "/users", {"email": "x" * (limits.MAX_EMAIL_CHARS + 1)}, "email"),
        ("POST", "/users", {"user_id": ""}, "user_id"),
        (
            "POST",
            "/users",
            {"user_id": "c", "disable_default_ontology": "true"},
            "disable_default_ontology",
        ),
        ("POST", "/graphs", {"name": "g", "description": long}, "description"),
        (
            "POST",
            "/graphs/{g}/nodes",
            {"nodes": [{"name": "N", "summary": long}]},
            "nodes[0].summary",
        ),
        (
            "POST",
            "/graphs/{g}/edges",
            {"edges": [edge | {"attributes": {"a": "b" * limits.MAX_JSON_OBJECT_BYTES}}]},
            "edges[0].attributes",
        ),
        (
            "POST",
            "/graphs/{g}/search/edges",
            {"query": " ".join(f"w{i}" for i in range(limits.MAX_QUERY_TERMS + 1))},
            "query",
        ),
        ("POST", "/graphs/{g}/context", {"query": "x", "max_characters": "700"}, "max_characters"),
        (
            "POST",
            "/context-templates",
            {"name": "t", "template": "%{edges limit=5}" * 21},
            "template",
        ),
    ]
    return cases


ZEP_CASES = _zep_cases()


@pytest.mark.parametrize(("method", "path", "body", "param"), ZEP_CASES)
def test_zep_bad_input_is_a_400_naming_the_field_and_writes_nothing(
    world: World, method: str, path: str, body: Any, param: str
) -> None:
    before = world.counts()
    content = (
        body
        if isinstance(body, bytes)
        else body.encode()
        if isinstance(body, str)
        else _dumps(body)
    )
    response = world.client.request(
        method,
        world.base + fill(path, world),
        content=content,
        headers={"Content-Type": "application/json"},
    )
    assert response.status_code == 400, response.text[:500]
    error = response.json()["error"]
    if param == "body" and error.get("param") != "body":
        # A value the parser itself refuses names the body; one it reads names the field.
        assert error.get("param"), error
    else:
        # Too deep: the path where the cap was crossed, which starts at the field.
        assert str(error.get("param")).startswith(param), error
    assert world.counts() == before


# -- the Memory Engine face -----------------------------------------------------------------
MeCase = tuple[str, Any, str]


def _me_cases() -> list[MeCase]:
    create = {"content": "x", "tree": "corpus"}
    cases: list[MeCase] = []
    for bad, suffix in (
        ({"n": BIG}, ".n"),
        ({"n": -BIG - 1}, ".n"),
        ({"n": [10**30]}, ".n[0]"),
        (deep(), None),
    ):
        cases.append(("memory.create", create | {"meta": bad}, "meta" + (suffix or "")))
        cases.append(("memory.search", {"meta": bad, "tree": "corpus"}, "meta" + (suffix or "")))
        cases.append(
            (
                "memory.batchCreate",
                {"memories": [create | {"meta": bad}]},
                "memories[0].meta" + (suffix or ""),
            )
        )
    for tree in (
        "*{9223372036854775808}",
        "*{99999999999999999999}",
        "a.*{2,1}",
        "*{1001}",
        "a..!",
        "a.(b",
    ):
        cases.append(("memory.search", {"tree": tree}, "tree"))
        cases.append(("memory.countTree", {"tree": tree}, "tree"))
    for grep in (r"(a)\1", "(?=a)b", "(?<=a)b", "(", "a{2,1}", "x" * 1001):
        cases.append(("memory.search", {"grep": grep, "tree": "corpus"}, "grep"))
    for value in (OVERFLOW_LATE, OVERFLOW_EARLY, "yesterday", "2024-02-30T00:00:00Z"):
        cases.append(("memory.create", create | {"temporal": {"start": value}}, "temporal.start"))
        cases.append(
            (
                "memory.search",
                {"tree": "corpus", "temporal": {"contains": value}},
                "temporal.contains",
            )
        )
    for number in (10**30, BIG, -1, 0):
        cases.append(("memory.search", {"tree": "corpus", "limit": number}, "limit"))
        cases.append(("memory.countTree", {"tree": "corpus", "maxCount": number}, "maxCount"))
    cases += [
        ("memory.create", {"tree": "corpus"}, "content"),
        ("memory.create", create | {"id": "not-a-uuid"}, "id"),
        ("memory.create", create | {"id": "0190f0f0-0000-4000-8000-000000000000"}, "id"),
        ("memory.create", create | {"tree": "a/b c"}, "tree"),
        ("memory.create", create | {"name": "-bad"}, "name"),
    ]
    for predicate in (
        '$.a like_regex "(a)\\1"',
        '$.a like_regex "(?=a)"',
        '$.a like_regex "("',
        '$.a like_regex "a" flag "z"',
        "$.a like_regex 5",
        "$.a ==",
        "$$",
    ):
        cases.append(
            ("memory.search", {"tree": "corpus", "metaPredicate": predicate}, "metaPredicate")
        )
    for ident in ("not-a-uuid", "0190f0f0-0000-4000-8000-000000000000", ""):
        cases.append(("memory.get", {"id": ident}, "id"))
        cases.append(("memory.delete", {"id": ident}, "id"))
    for version in (0, -1, BIG, 10**30):
        cases.append(
            (
                "memory.revert",
                {"id": "0190f0f0-0000-7000-8000-000000000000", "version": version},
                "version",
            )
        )
    for levels in (0, 101, BIG):
        cases.append(("memory.tree", {"levels": levels}, "levels"))
    for since in (OVERFLOW_LATE, OVERFLOW_EARLY, "soon"):
        cases.append(("memory.history", {"since": since}, "since"))
    # Issue 47: cost caps (item 7) and no coercion of "7" (item 12).
    cases += [
        ("memory.search", {"semantic": "tea " * 2049}, "semantic"),
        ("memory.search", {"fulltext": "tea " * 501}, "fulltext"),
        ("memory.search", {"fulltext": " ".join(f"w{i}" for i in range(129))}, "fulltext"),
        ("memory.search", {"tree": "corpus", "limit": "7"}, "limit"),
    ]
    return cases


ME_CASES = _me_cases()


@pytest.mark.parametrize(("method", "params", "param"), ME_CASES)
def test_memory_engine_bad_input_is_a_client_error_naming_the_field(
    world: World, method: str, params: Any, param: str
) -> None:
    before = world.counts()
    error = rpc(world, method, params)["error"]
    assert error["code"] in (-32600, -32602, -32000), error
    if error["code"] == -32000:
        assert error["data"]["code"] == "VALIDATION_ERROR", error
    assert error["data"]["param"].startswith(param), error
    assert world.counts() == before


@pytest.mark.parametrize(
    ("raw", "code"),
    [
        (b"[" * 10_000 + b"]" * 10_000, -32600),
        (
            b'{"jsonrpc": "2.0", "id": 1, "method": "memory.tree", "params": '
            + b"[" * 5000
            + b"]" * 5000
            + b"}",
            -32600,
        ),
        (b"{", -32700),
        (b"\xff", -32700),
        (b'{"jsonrpc": "2.0", "id": 1, "method": "memory.tree", "params": {"x": NaN}}', -32700),
        (b"[]", -32600),
        (b'{"jsonrpc": "1.0", "id": 1, "method": "memory.tree"}', -32600),
    ],
)
def test_memory_engine_broken_envelopes_are_json_rpc_errors(
    world: World, raw: bytes, code: int
) -> None:
    assert rpc(world, "", None, raw=raw)["error"]["code"] == code


# -- MCP over HTTP ---------------------------------------------------------------------------
MCP_CASES: list[tuple[str, dict[str, Any], str]] = [
    ("me_memory_create", {"content": "x", "tree": "corpus", "meta": {"n": BIG}}, "meta.n"),
    ("me_memory_create", {"content": "x", "tree": "corpus", "meta": deep()}, "params"),
    ("me_memory_search", {"tree": "corpus", "meta": {"n": [10**30]}}, "meta.n"),
    ("me_memory_search", {"tree": "*{9223372036854775808}"}, "tree"),
    ("me_memory_search", {"tree": "corpus", "grep": r"(a)\1"}, "grep"),
    ("me_memory_search", {"tree": "corpus", "grep": "(?=a)"}, "grep"),
    (
        "me_memory_create",
        {"content": "x", "tree": "corpus", "temporal": {"start": OVERFLOW_LATE}},
        "temporal",
    ),
    ("graph_add_episode", {"data": "x", "graph_uuid": "not-a-uuid"}, "graph"),
    ("graph_search", {"query": "x", "graph_uuid": "not-a-uuid"}, "graph"),
]


def mcp(world: World, body: bytes) -> httpx.Response:
    root = world.base.removesuffix("/api/v4")
    return world.client.post(
        f"{root}/mcp",
        content=body,
        headers={
            "Authorization": f"Bearer {API_KEY}",
            "X-Me-Space": SPACE,
            "Content-Type": "application/json",
            "Accept": "application/json, text/event-stream",
        },
    )


@pytest.mark.parametrize(("tool", "arguments", "param"), MCP_CASES)
def test_mcp_bad_input_is_a_client_error_and_writes_nothing(
    world: World, tool: str, arguments: dict[str, Any], param: str
) -> None:
    before = world.counts()
    call = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "tools/call",
        "params": {"name": tool, "arguments": arguments},
    }
    response = mcp(world, _dumps(call))
    assert response.status_code in (200, 400), response.text
    body = response.json()
    if response.status_code == 400:
        assert body["error"]["code"] in (-32600, -32602), body
    else:
        result = body.get("result") or {}
        assert result.get("isError") or "error" in body, body
        text = json.dumps(body)
        assert param.split(".")[0] in text, body
    assert world.counts() == before


@pytest.mark.parametrize(
    "raw",
    [
        b"[" * 10_000 + b"]" * 10_000,
        b'{"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {"n": 1e999}}',
    ],
)
def test_mcp_bodies_past_the_limits_are_refused(world: World, raw: bytes) -> None:
    response = mcp(world, raw)
    assert response.status_code == 400
    assert response.json()["error"]["code"] in (-32700, -32600, -32602)


def test_the_corpus_is_large() -> None:
    assert len(ZEP_CASES) + len(ME_CASES) + len(MCP_CASES) >= 200


def test_years_before_1000_are_stored_with_four_digits_and_sort_first(world: World) -> None:
    edge = {"fact": "Rome was founded", "fact_name": "FOUNDED"}
    refs = {"source_node": {"name": "Romulus"}, "target_node": {"name": "Rome"}}
    added = world.client.post(
        f"{world.base}/graphs/{world.graph}/edges",
        json={"edges": [edge | refs | {"valid_at": "0005-01-01T00:00:00Z"}]},
    )
    assert added.status_code == 200, added.text
    stored = added.json()["edges"][0]
    assert stored["valid_at"] == "0005-01-01T00:00:00.000000Z"
    before = {"field": "valid_at", "operator": "lt", "value": "2020-01-01T00:00:00Z"}
    found = world.client.post(
        f"{world.base}/graphs/{world.graph}/edges/list",
        json={"filters": {"date_filters": {"any_of": [{"all_of": [before]}]}}},
    )
    assert stored["uuid"] in [e["uuid"] for e in found.json()["items"]]
    world.client.delete(f"{world.base}/graphs/{world.graph}/edges/{stored['uuid']}")


def test_trace_is_405_with_allow(world: World) -> None:
    response = world.client.request("TRACE", f"{world.base}/project")
    assert response.status_code == 405
    assert set(response.headers["allow"].replace(" ", "").split(",")) >= {"GET", "PATCH"}


def test_a_backtracking_grep_does_not_stall_another_project(world: World, srv: Server) -> None:
    # Memories shaped for (a|aa)+$: Python's re needs ~2^n steps for each.
    created = rpc(
        world,
        "memory.batchCreate",
        {"memories": [{"content": "a" * 40 + "!", "tree": "stall"} for _ in range(50)]},
    )
    assert "result" in created, created
    started = time.perf_counter()
    found = rpc(world, "memory.search", {"grep": "(a|aa)+$", "tree": "stall"})
    assert found["result"]["results"] == []
    assert time.perf_counter() - started < 1.0
    grep = {"grep": "(a|aa|aaa)+(b|bb)+$", "tree": "stall"}
    body = _dumps({"jsonrpc": "2.0", "id": 1, "method": "memory.search", "params": grep})
    timings: list[float] = []

    def other_project() -> None:
        with httpx.Client(timeout=30) as other:
            for _ in range(10):
                t = time.perf_counter()
                other.get(f"http://127.0.0.1:{srv.port}/healthz")
                timings.append(time.perf_counter() - t)

    thread = threading.Thread(target=other_project)
    thread.start()
    for _ in range(10):
        rpc(world, "memory.search", grep, raw=body)
    thread.join()
    assert max(timings) < 0.5, timings  # generous: a shared, noisy CI machine
    rpc(world, "memory.deleteTree", {"tree": "stall"})
