"""What old v3 clients send that the SDK scenarios do not: empty query parameters and
explicit nulls are accepted; bad input is a 400 naming the field, an unknown id a 404
naming it, and neither writes anything; the rest of v3's routes answer v3 shapes."""

from __future__ import annotations

import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import httpx
import pytest

from tests.api.zep_v3.conftest import v2_url
from tests.conftest import Server


@dataclass
class V3:
    http: httpx.Client
    user_id: str
    thread_id: str

    def ok(self, method: str, path: str, **kwargs: Any) -> Any:
        response = self.http.request(method, path, **kwargs)
        assert response.status_code == 200, (method, path, response.text)
        return response.json()

    def error(self, status: int, method: str, path: str, **kwargs: Any) -> dict[str, Any]:
        response = self.http.request(method, path, **kwargs)
        assert response.status_code == status, (method, path, response.text)
        body: dict[str, Any] = response.json()["error"]
        return body

    def wait(self, task_id: str) -> None:
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            if self.ok("GET", f"/tasks/{task_id}")["status"] in ("succeeded", "failed"):
                return
            time.sleep(0.05)
        raise AssertionError(f"task {task_id} did not finish")


@pytest.fixture(scope="module")
def v3(server: Server) -> Iterator[V3]:
    """A user with one thread of two processed messages."""
    headers = {"Authorization": f"Api-Key {server.api_key}"}
    with httpx.Client(base_url=v2_url(server), headers=headers, timeout=60) as http:
        tag = uuid.uuid4().hex[:8]
        client = V3(http, f"wire-{tag}", f"wire-thread-{tag}")
        client.ok("POST", "/users", json={"user_id": client.user_id, "first_name": "Ben"})
        client.ok(
            "POST", "/threads", json={"thread_id": client.thread_id, "user_id": client.user_id}
        )
        added = client.ok(
            "POST",
            f"/threads/{client.thread_id}/messages",
            json={
                "messages": [
                    {
                        "role": "user",
                        "name": "Ben",
                        "content": "I moved to Oslo in 2021.",
                        "created_at": "2024-03-01T10:00:00Z",
                        "metadata": None,
                    },
                    {"role": "assistant", "name": None, "content": "Oslo is lovely."},
                ],
                "ignore_roles": None,
                "return_context": None,
            },
        )
        client.wait(added["task_id"])
        yield client


def test_empty_query_parameters_read_as_absent(v3: V3) -> None:
    listed = v3.ok("GET", f"/threads/{v3.thread_id}/messages?lastn=&limit=&cursor=")
    assert [m["content"] for m in listed["messages"]] == [
        "I moved to Oslo in 2021.",
        "Oslo is lovely.",
    ]
    assert listed["total_count"] == 2 and listed["user_id"] == v3.user_id
    # v3's created_at is the message's own time, as the client gave it.
    assert listed["messages"][0]["created_at"].startswith("2024-03-01T10:00:00")
    assert v3.ok("GET", f"/threads/{v3.thread_id}/context?template_id=")["context"]
    threads = v3.ok("GET", "/threads?page_number=&page_size=&order_by=&asc=")
    assert v3.thread_id in [t["thread_id"] for t in threads["threads"]]
    episodes = v3.ok("GET", f"/graph/episodes/user/{v3.user_id}?lastn=")["episodes"]
    assert len(episodes) == 2 and episodes[0]["thread_id"] == v3.thread_id
    assert episodes[0]["role_type"] == "user" and episodes[0]["role"] == "Ben"


def test_explicit_nulls_in_bodies_are_accepted(v3: V3) -> None:
    found = v3.ok(
        "POST",
        "/graph/search",
        json={
            "user_id": v3.user_id,
            "graph_id": None,
            "query": "Where does Ben live?",
            "scope": None,
            "reranker": None,
            "limit": None,
            "mmr_lambda": None,
            "center_node_uuid": None,
            "search_filters": None,
            "bfs_origin_node_uuids": None,
        },
    )
    assert any("Oslo" in e["fact"] for e in found["edges"])
    assert set(found) == {"edges"}  # one scope's list, v4's page shape not leaked
    edges = v3.ok("POST", f"/graph/edge/user/{v3.user_id}", json={"limit": None})
    assert edges and "episodes" in edges[0] and "episode_uuids" not in edges[0]


def test_bad_input_is_a_400_naming_the_field_and_writes_nothing(v3: V3) -> None:
    path = f"/threads/{v3.thread_id}/messages"
    assert v3.error(400, "GET", f"{path}?lastn=abc")["param"] == "lastn"
    assert v3.error(400, "GET", f"{path}?lastn=0")["param"] == "lastn"
    assert v3.error(400, "GET", "/threads?page_size=100000")["param"] == "page_size"
    assert v3.error(400, "GET", "/threads?order_by=color")["param"] == "order_by"
    # "norole" is v3's "no role"; v4's messages always have one.
    bad = {"messages": [{"role": "norole", "content": "hi"}]}
    assert v3.error(400, "POST", path, json=bad)["param"] == "messages[0].role"
    taken = {"thread_id": v3.thread_id, "user_id": v3.user_id}
    assert v3.error(400, "POST", "/threads", json=taken)["param"] == "thread_id"
    both = {"user_id": v3.user_id, "graph_id": "g", "type": "text", "data": "x"}
    assert v3.error(400, "POST", "/graph", json=both)["param"] == "graph_id"
    filters = {"user_id": v3.user_id, "query": "x", "search_filters": {"colour": ["red"]}}
    assert v3.error(400, "POST", "/graph/search", json=filters)["param"] == "search_filters.colour"
    operator = {
        "user_id": v3.user_id,
        "query": "x",
        "search_filters": {"valid_at": [[{"comparison_operator": "~", "date": "2024-01-01"}]]},
    }
    unsupported = {**filters, "scope": "nodes", "search_filters": {"edge_types": ["X"]}}
    param = v3.error(400, "POST", "/graph/search", json=unsupported)["param"]
    assert param == "search_filters.edge_types"
    param = v3.error(400, "POST", "/graph/search", json=operator)["param"]
    assert param == "search_filters.valid_at[0][0].comparison_operator"
    batch = {
        "user_id": v3.user_id,
        "episodes": [
            {"type": "text", "data": "fine"},
            {"type": "text", "data": "bad time", "created_at": "not a time"},
        ],
    }
    assert v3.error(400, "POST", "/graph-batch", json=batch)["param"] == "episodes[1].created_at"
    # v3 names a message's and an episode's time created_at (v4: reference_time).
    late = {"messages": [{"role": "user", "content": "x", "created_at": "not a time"}]}
    assert v3.error(400, "POST", path, json=late)["param"] == "messages[0].created_at"
    late = {"user_id": v3.user_id, "type": "text", "data": "x", "created_at": "not a time"}
    assert v3.error(400, "POST", "/graph", json=late)["param"] == "created_at"
    bad_batch = v3.error(400, "GET", "/batches/not-a-batch")
    assert bad_batch["param"] == "batch_id" and bad_batch["message"].startswith("batch_id ")
    listed = v3.ok("GET", f"/threads/{v3.thread_id}/messages")
    assert listed["total_count"] == 2  # nothing of the refused calls was written
    assert len(v3.ok("GET", f"/graph/episodes/user/{v3.user_id}")["episodes"]) == 2


def test_unknown_ids_are_404s_naming_the_field(v3: V3) -> None:
    assert v3.error(404, "GET", "/users/nobody")["param"] == "user_id"
    assert v3.error(404, "GET", "/threads/nothread/messages")["param"] == "thread_id"
    assert v3.error(404, "GET", "/graph/nograph")["param"] == "graph_id"
    assert (
        v3.error(404, "POST", "/threads", json={"thread_id": "t", "user_id": "nobody"})["param"]
        == "user_id"
    )
    # A v3 route graphrecall does not translate says so (not a 404: a missing record).
    stub = v3.error(405, "GET", "/custom-instructions")
    assert stub["code"] == "not_implemented" and "Zep v3" in stub["message"]
    missing = str(uuid.uuid4())
    assert v3.error(404, "GET", f"/graph/edge/{missing}")["param"] == "uuid"
    assert v3.error(400, "GET", "/graph/node/not-a-uuid")["param"] == "uuid"
    assert v3.error(404, "GET", f"/tasks/{missing}")["param"] == "task_id"
    assert v3.error(400, "GET", "/tasks/not-a-task")["param"] == "task_id"


def test_v3_search_filters_are_the_v4_filters(v3: V3) -> None:
    """A date filter in v3's spelling filters as v4's: nothing is valid before 1990."""
    query = {"user_id": v3.user_id, "query": "Where does Ben live?"}
    before = [[{"comparison_operator": "<", "date": "1990-01-01T00:00:00Z"}]]
    after = [[{"comparison_operator": ">", "date": "1990-01-01T00:00:00Z"}]]
    none = v3.ok("POST", "/graph/search", json={**query, "search_filters": {"created_at": before}})
    assert none["edges"] == []
    some = v3.ok("POST", "/graph/search", json={**query, "search_filters": {"created_at": after}})
    assert any("Oslo" in e["fact"] for e in some["edges"])


def test_auto_scope_is_the_context_block(v3: V3) -> None:
    found = v3.ok(
        "POST", "/graph/search", json={"user_id": v3.user_id, "query": "Ben", "scope": "auto"}
    )
    assert "Oslo" in found["context"] and "edges" not in found


def test_the_other_v3_routes_answer_v3_shapes(v3: V3) -> None:
    updated = v3.ok("PATCH", f"/users/{v3.user_id}", json={"last_name": "Berg", "email": None})
    assert updated["last_name"] == "Berg" and updated["user_id"] == v3.user_id
    users = v3.ok("GET", "/users-ordered?pageNumber=1&pageSize=100")
    assert v3.user_id in [u["user_id"] for u in users["users"]]
    assert users["row_count"] == len(users["users"])
    assert v3.ok("GET", f"/threads/{v3.thread_id}/episodes")["episodes"][0]["thread_id"] == (
        v3.thread_id
    )
    batch = v3.ok(
        "POST",
        f"/threads/{v3.thread_id}/messages-batch",
        json={"messages": [{"role": "user", "content": "Batch hello."}]},
    )
    assert len(batch["message_uuids"]) == 1 and batch["task_id"]
    v3.wait(batch["task_id"])
    last = v3.ok("GET", f"/threads/{v3.thread_id}/messages?lastn=1")["messages"]
    assert [m["content"] for m in last] == ["Batch hello."]
    added = v3.ok(
        "POST",
        "/graph-batch",
        json={
            "user_id": v3.user_id,
            "episodes": [
                {"type": "text", "data": "Ben plays chess."},
                {"type": "json", "data": '{"name": "Ben", "club": "Oslo Chess"}'},
            ],
        },
    )
    assert [e["source"] for e in added] == ["text", "json"] and all(e["task_id"] for e in added)
    for episode in added:
        v3.wait(episode["task_id"])
    episode = v3.ok("PATCH", f"/graph/episodes/{added[0]['uuid']}", json={"metadata": {"k": "v"}})
    assert episode["metadata"] == {"k": "v"}
    node = next(
        n for n in v3.ok("POST", f"/graph/node/user/{v3.user_id}", json={}) if n["name"] == "Oslo"
    )
    renamed = v3.ok("PATCH", f"/graph/node/{node['uuid']}", json={"summary": "A city."})
    assert renamed["summary"] == "A city."
    assert v3.ok("GET", f"/graph/node/{node['uuid']}/episodes")["episodes"]
    edge = v3.ok("POST", f"/graph/edge/user/{v3.user_id}", json={"limit": 1})[0]
    page = v3.ok("POST", f"/graph/edge/user/{v3.user_id}", json={"uuid_cursor": edge["uuid"]})
    assert edge["uuid"] not in [e["uuid"] for e in page]  # the page after the cursor
    assert v3.ok("DELETE", f"/graph/edge/{edge['uuid']}") == {"message": "deleted"}
    v3.error(404, "GET", f"/graph/edge/{edge['uuid']}")
    assert v3.ok("DELETE", f"/graph/episodes/{added[0]['uuid']}") == {"message": "deleted"}
    v3.error(404, "GET", f"/graph/episodes/{added[0]['uuid']}")
    graph = v3.ok("POST", "/graph/create", json={"graph_id": f"{v3.user_id}-g", "name": None})
    assert v3.ok("PATCH", f"/graph/{graph['graph_id']}", json={"name": "G"})["name"] == "G"
    taken = {"graph_id": graph["graph_id"]}
    assert v3.error(400, "POST", "/graph/create", json=taken)["param"] == "graph_id"
    listed = v3.ok("GET", "/graph/list-all?pageNumber=&pageSize=")
    assert graph["graph_id"] in [g["graph_id"] for g in listed["graphs"]]


def test_lists_page_filter_and_name_their_thread(v3: V3) -> None:
    user = f"/graph/episodes/user/{v3.user_id}"
    newest = v3.ok("POST", user, json={"limit": 1})
    assert len(newest) == 1
    older = v3.ok("POST", user, json={"limit": 100, "cursor": newest[0]["uuid"]})
    assert older and all(e["uuid"] < newest[0]["uuid"] for e in older)
    oldest = v3.ok("POST", user, json={"limit": 1, "direction": "asc"})[0]
    assert oldest["content"] == "I moved to Oslo in 2021." and oldest["thread_id"] == v3.thread_id
    # v3's filters on the edge list are v4's; one the list does not take is a 400.
    edges = v3.ok("POST", f"/graph/edge/user/{v3.user_id}", json={"limit": 100})
    name = edges[0]["name"]
    typed = v3.ok(
        "POST", f"/graph/edge/user/{v3.user_id}", json={"filters": {"edge_types": [name]}}
    )
    assert typed and {e["name"] for e in typed} == {name}
    bad = {"filters": {"edge_types": [name]}}
    assert v3.error(400, "POST", f"/graph/node/user/{v3.user_id}", json=bad)["param"] == (
        "filters.edge_types"
    )
    assert isinstance(v3.ok("POST", f"/graph/observation/user/{v3.user_id}", json={}), list)
    assert isinstance(v3.ok("POST", f"/graph/thread-summary/user/{v3.user_id}", json=None), list)
    for scope in ("observations", "thread_summaries"):
        found = v3.ok(
            "POST", "/graph/search", json={"user_id": v3.user_id, "query": "Oslo", "scope": scope}
        )
        assert set(found) == {scope}


def test_messages_warm_and_summaries(v3: V3) -> None:
    first = v3.ok("GET", f"/threads/{v3.thread_id}/messages?lastn=100")["messages"][0]
    updated = v3.ok("PATCH", f"/messages/{first['uuid']}", json={"metadata": {"seen": True}})
    assert updated["metadata"] == {"seen": True} and updated["uuid"] == first["uuid"]
    assert v3.error(404, "PATCH", f"/messages/{uuid.uuid4()}", json={})["param"] == ("message_uuid")
    assert v3.ok("GET", f"/users/{v3.user_id}/warm") == {"message": "warming"}
    summary = v3.ok("GET", f"/threads/{v3.thread_id}/summary")
    assert summary["thread_id"] == v3.thread_id and "Oslo" in summary["summary"]
    assert v3.error(404, "GET", "/threads/nothread/summary")["param"] == "thread_id"


def test_fact_triples_and_nodes_are_v4_edges_and_nodes(v3: V3) -> None:
    triple = v3.ok(
        "POST",
        "/graph/add-fact-triple",
        json={
            "user_id": v3.user_id,
            "fact": "Ben mentors Ada",
            "fact_name": "MENTORS",
            "source_node_name": "Ben",
            "target_node_name": "Ada",
            "target_node_labels": ["Person"],
            "valid_at": "2024-01-01T00:00:00Z",
            "created_at": None,
        },
    )
    assert triple["edge"]["fact"] == "Ben mentors Ada" and triple["edge"]["name"] == "MENTORS"
    assert triple["source_node"]["name"] == "Ben" and triple["target_node"]["name"] == "Ada"
    assert "Person" in triple["target_node"]["labels"]
    v3.wait(triple["task_id"])
    assert v3.ok("GET", f"/graph/edge/{triple['edge']['uuid']}")["fact"] == "Ben mentors Ada"
    bad = {"user_id": v3.user_id, "fact": "x", "fact_name": "mentors", "source_node_name": "A"}
    assert v3.error(400, "POST", "/graph/add-fact-triple", json=bad)["param"] == "fact_name"
    bad["fact_name"] = "MENTORS"
    assert v3.error(400, "POST", "/graph/add-fact-triple", json=bad)["param"] == (
        "target_node_name"
    )
    added = v3.ok(
        "POST",
        "/graph/nodes",
        json={"user_id": v3.user_id, "nodes": [{"name": "Fjord", "label": "Place"}]},
    )
    assert [n["name"] for n in added["nodes"]] == ["Fjord"] and added["task_id"]
    v3.wait(added["task_id"])
    assert v3.ok("GET", f"/graph/node/{added['nodes'][0]['uuid']}")["name"] == "Fjord"


def test_context_templates_are_named_by_template_id(v3: V3) -> None:
    template_id = f"{v3.user_id}-facts"
    body = {"template_id": template_id, "template": "FACTS ONLY\n%{edges limit=5}"}
    made = v3.ok("POST", "/context-templates", json=body)
    assert made["template_id"] == template_id and made["uuid"]
    assert v3.error(400, "POST", "/context-templates", json=body)["param"] == "template_id"
    assert v3.ok("GET", f"/context-templates/{template_id}")["template"].startswith("FACTS")
    listed = v3.ok("GET", "/context-templates")["templates"]
    assert template_id in [t["template_id"] for t in listed]
    context = v3.ok("GET", f"/threads/{v3.thread_id}/context?template_id={template_id}")
    assert context["context"].startswith("FACTS ONLY") and "Oslo" in context["context"]
    unknown = v3.error(404, "GET", f"/threads/{v3.thread_id}/context?template_id=nope")
    assert unknown["param"] == "template_id"
    changed = v3.ok(
        "PUT", f"/context-templates/{template_id}", json={"template": "ONLY\n%{edges limit=1}"}
    )
    assert changed["template"].startswith("ONLY")
    bad = {"template": "%{nonsense}"}
    assert v3.error(400, "PUT", f"/context-templates/{template_id}", json=bad)["param"]
    assert v3.ok("DELETE", f"/context-templates/{template_id}") == {"message": "deleted"}
    assert v3.error(404, "GET", f"/context-templates/{template_id}")["param"] == "template_id"


def test_subgraph_neighbours_documents_and_project(v3: V3) -> None:
    graph_id = f"{v3.user_id}-docs"
    v3.ok("POST", "/graph/create", json={"graph_id": graph_id})
    added = v3.ok(
        "POST",
        "/graph",
        json={
            "graph_id": graph_id,
            "type": "text",
            "data": "Ada lives in Bergen. Ada works at Equinor.",
            "document_id": "notes/ada.txt",
        },
    )
    v3.wait(added["task_id"])
    chunks = v3.ok("GET", f"/graph/documents/notes/ada.txt/episodes?graph_id={graph_id}")
    assert [e["uuid"] for e in chunks["episodes"]] == [added["uuid"]]
    assert chunks["episodes"][0]["document_id"] == "notes/ada.txt"
    summaries = v3.ok("POST", f"/graph/document-summary/graph/{graph_id}", json={})
    assert all(s["document_id"] == "notes/ada.txt" for s in summaries)
    ada = next(
        n for n in v3.ok("POST", f"/graph/node/graph/{graph_id}", json={}) if n["name"] == "Ada"
    )
    sub = v3.ok(
        "POST", "/graph/subgraph", json={"graph_id": graph_id, "seed_node_uuids": [ada["uuid"]]}
    )
    assert {"Ada", "Bergen"} <= {n["name"] for n in sub["nodes"]} and sub["edges"]
    assert sub["truncated"] is False
    first = v3.http.post(f"/graph/node/{ada['uuid']}/neighbors", json={"limit": 1})
    assert first.status_code == 200 and len(first.json()) == 1
    assert first.json()[0]["edges"]
    cursor = first.headers["Zep-Next-Cursor"]  # Ada has two neighbours
    rest = v3.ok("POST", f"/graph/node/{ada['uuid']}/neighbors", json={"cursor": cursor})
    names = {first.json()[0]["node"]["name"], *(n["node"]["name"] for n in rest)}
    assert names == {"Bergen", "Equinor"}
    info = v3.ok("GET", "/projects/info")["project"]
    assert info["uuid"] and info["name"]
    zoned = v3.ok("PATCH", "/projects/info", json={"default_time_zone": "Europe/Oslo"})
    assert zoned["project"]["default_time_zone"] == "Europe/Oslo"
    bad = {"default_time_zone": "Mars/Olympus"}
    assert v3.error(400, "PATCH", "/projects/info", json=bad)["param"] == "default_time_zone"
    v3.ok("PATCH", "/projects/info", json={"default_time_zone": None})


def test_a_clone_is_a_new_graph_named_by_target_graph_id(v3: V3) -> None:
    target = f"{v3.user_id}-copy"
    made = v3.ok(
        "POST", "/graph/clone", json={"source_user_id": v3.user_id, "target_graph_id": target}
    )
    assert made["graph_id"] == target
    v3.wait(made["task_id"])
    names = {n["name"] for n in v3.ok("POST", f"/graph/node/graph/{target}", json={})}
    assert "Oslo" in names
    again = {"source_user_id": v3.user_id, "target_graph_id": target}
    assert v3.error(400, "POST", "/graph/clone", json=again)["param"] == "target_graph_id"
    user = {"source_user_id": v3.user_id, "target_user_id": "someone"}
    assert v3.error(400, "POST", "/graph/clone", json=user)["param"] == "target_user_id"
    nowhere = {"source_graph_id": "nope", "target_graph_id": "x"}
    assert v3.error(404, "POST", "/graph/clone", json=nowhere)["param"] == "source_graph_id"
    nobody = {"source_user_id": "nobody", "target_graph_id": "x"}
    assert v3.error(404, "POST", "/graph/clone", json=nobody)["param"] == "source_user_id"


def test_user_summary_instructions_are_added_and_deleted_by_name(v3: V3) -> None:
    path = "/user-summary-instructions"
    project = [{"name": "tone", "text": "Say how the user prefers to be addressed."}]
    assert v3.ok("POST", path, json={"instructions": project}) == {"message": "added"}
    assert v3.ok("GET", path)["instructions"] == project
    # A user without instructions of its own follows the project's.
    assert v3.ok("GET", f"{path}?user_id={v3.user_id}")["instructions"] == project
    own = [{"name": "city", "text": "Name the city the user lives in."}]
    v3.ok("POST", path, json={"instructions": own, "user_ids": [v3.user_id]})
    assert v3.ok("GET", f"{path}?user_id={v3.user_id}")["instructions"] == own
    replaced = [{"name": "city", "text": "Name the user's city and country."}]
    v3.ok("POST", path, json={"instructions": replaced, "user_ids": [v3.user_id]})
    assert v3.ok("GET", f"{path}?user_id={v3.user_id}")["instructions"] == replaced
    unknown = {"instructions": own, "user_ids": [v3.user_id, "nobody"]}
    assert v3.error(404, "POST", path, json=unknown)["param"] == "user_ids[1]"
    twice = {"instructions": own + own}
    assert v3.error(400, "POST", path, json=twice)["param"] == "instructions"
    deleted = {"instruction_names": ["city"], "user_ids": [v3.user_id]}
    assert v3.ok("DELETE", path, json=deleted) == {"message": "deleted"}
    assert v3.ok("GET", f"{path}?user_id={v3.user_id}")["instructions"] == project
    v3.ok("DELETE", path, json={})
    assert v3.ok("GET", path)["instructions"] == []


def test_entity_types_are_the_v4_ontology(v3: V3) -> None:
    pet = {
        "name": "Pet",
        "description": "An animal someone keeps.",
        "properties": [{"name": "species", "type": "Text", "description": "cat, dog"}],
    }
    owns = {"name": "OWNS", "description": "Keeps a pet.", "source_targets": [{"source": "User"}]}
    body = {"entity_types": [pet], "edge_types": [owns], "user_ids": [v3.user_id]}
    assert v3.ok("PUT", "/entity-types", json=body) == {"message": "set"}
    found = v3.ok("GET", f"/entity-types?user_id={v3.user_id}")
    assert [t["name"] for t in found["entity_types"]] == ["Pet"]
    assert found["entity_types"][0]["properties"][0]["type"] == "Text"
    assert [t["name"] for t in found["edge_types"]] == ["OWNS"]
    # The project's types are untouched; a graph without its own follows them.
    assert v3.ok("GET", "/entity-types")["entity_types"] == []
    bad = {"edge_types": [{"name": "owns", "description": "x"}], "user_ids": [v3.user_id]}
    assert v3.error(400, "PUT", "/entity-types", json=bad)["param"] == "edge_types[0]"
    unknown = {"entity_types": [pet], "graph_ids": ["nograph"]}
    assert v3.error(404, "PUT", "/entity-types", json=unknown)["param"] == "graph_ids[0]"
    v3.ok("PUT", "/entity-types", json={"entity_types": [], "user_ids": [v3.user_id]})


def test_user_groups_are_v4_groups_in_v3_envelopes(v3: V3) -> None:
    user = v3.ok("GET", f"/users/{v3.user_id}")
    group = v3.ok("POST", "/user-groups?projectId=", json={"name": f"{v3.user_id}-team"})
    assert group["member_count"] == 0 and group["version"] == 1
    path = f"/user-groups/{group['uuid']}"
    added = v3.ok("POST", f"{path}/members", json={"user_uuids": [user["uuid"]]})
    assert added == {"added_count": 1, "no_op_count": 0}
    members = v3.ok("GET", f"{path}/members?pageNumber=&pageSize=")
    assert [u["user_id"] for u in members["users"]] == [v3.user_id] and members["total_count"] == 1
    candidates = v3.ok("GET", f"{path}/members/candidates")["users"]
    assert v3.user_id not in [u["user_id"] for u in candidates]
    mine = v3.ok("GET", f"/user-groups/users/{user['uuid']}")["user_groups"]
    assert [g["uuid"] for g in mine] == [group["uuid"]] and mine[0]["member_count"] == 1
    listed = v3.ok("GET", "/user-groups?pageNumber=1&pageSize=100")
    assert group["uuid"] in [g["uuid"] for g in listed["user_groups"]]
    renamed = v3.ok("PATCH", path, json={"name": "renamed", "expected_version": 1})
    assert renamed["name"] == "renamed" and renamed["version"] == 2
    removed = v3.ok("DELETE", f"{path}/members/{user['uuid']}")
    assert removed == {"removed_count": 1, "no_op_count": 0}
    again = v3.ok("POST", f"{path}/members/bulk-remove", json={"user_uuids": [user["uuid"]]})
    assert again == {"removed_count": 0, "no_op_count": 1}
    assert v3.ok("DELETE", path) == {"message": "deleted"}
    assert v3.error(404, "GET", path)["param"] == "group_uuid"


def test_batches_take_developer_ids_and_page_by_integer_cursor(v3: V3) -> None:
    batch = v3.ok("POST", "/batches", json={"metadata": {"source": "import"}})
    assert batch["status"] == "draft" and batch["item_count"] == 0
    path = f"/batches/{batch['batch_id']}"
    items = [
        {
            "type": "thread_message",
            "thread_id": v3.thread_id,
            "role": "user",
            "name": "Ben",
            "content": "I took up skiing.",
            "created_at": "2024-02-01T09:00:00Z",
        },
        {"type": "graph_episode", "user_id": v3.user_id, "data": "Ben skis at Holmenkollen."},
        {"type": "graph_episode", "user_id": v3.user_id, "data": "Ben owns red skis."},
    ]
    unknown = {"items": [items[0], {**items[1], "user_id": "nobody"}]}
    assert v3.error(404, "POST", f"{path}/items", json=unknown)["param"] == "items[1].user_id"
    norole = {"items": [{**items[0], "role": "norole"}]}
    assert v3.error(400, "POST", f"{path}/items", json=norole)["param"] == "items[0].role"
    assert v3.ok("GET", path)["item_count"] == 0  # nothing of the refused calls was added
    added = v3.ok("POST", f"{path}/items", json={"items": items})
    assert [i["kind"] for i in added] == ["thread_message", "graph_episode", "graph_episode"]
    assert added[0]["thread_id"] == v3.thread_id and added[1]["user_id"] == v3.user_id
    first = v3.ok("GET", f"{path}/items?limit=2&cursor=")
    assert [i["item_id"] for i in first["items"]] == [i["item_id"] for i in added[:2]]
    rest = v3.ok("GET", f"{path}/items?limit=2&cursor={first['next_cursor']}")
    assert [i["item_id"] for i in rest["items"]] == [added[2]["item_id"]]
    assert rest.get("next_cursor") is None
    assert v3.error(400, "GET", f"{path}/items?status=failed")["param"] == "status"
    assert v3.ok("POST", f"{path}/process")["status"] == "queued"
    deadline = time.monotonic() + 120
    while v3.ok("GET", path)["status"] not in ("succeeded", "partial", "failed"):
        assert time.monotonic() < deadline, "the batch did not finish"
        time.sleep(0.1)
    done = v3.ok("GET", path)
    assert done["status"] == "succeeded" and done["progress"]["succeeded_items"] == 3
    last = v3.ok("GET", f"/threads/{v3.thread_id}/messages?lastn=1")["messages"][0]
    assert last["content"] == "I took up skiing."
    listed = v3.ok("GET", "/batches?limit=100")
    assert batch["batch_id"] in [b["batch_id"] for b in listed["batches"]]
    assert v3.ok("DELETE", path) == {"message": "deleted"}


def test_another_projects_ids_and_items_are_not_found(v3: V3, server: Server) -> None:
    assert httpx.get(f"{v2_url(server)}/users/{v3.user_id}").status_code == 401
    key = subprocess.run(
        [
            sys.executable,
            "-m",
            "graphrecall",
            "--db",
            str(server.db),
            "keys",
            "create",
            "--project",
            f"other-{v3.user_id}",
        ],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    headers = {"Authorization": f"Api-Key {key}"}
    with httpx.Client(base_url=v2_url(server), headers=headers, timeout=60) as http:
        other = V3(http, v3.user_id, v3.thread_id)
        assert other.error(404, "GET", f"/users/{v3.user_id}")["param"] == "user_id"
        assert other.error(404, "GET", f"/threads/{v3.thread_id}/messages")["param"] == (
            "thread_id"
        )
        edge = v3.ok("POST", f"/graph/edge/user/{v3.user_id}", json={"limit": 1})[0]
        assert other.error(404, "GET", f"/graph/edge/{edge['uuid']}")["param"] == "uuid"
        # Ids are the project's own: the same user_id is free in another project.
        assert other.ok("POST", "/users", json={"user_id": v3.user_id})["user_id"] == v3.user_id
    assert v3.ok("GET", f"/users/{v3.user_id}")["first_name"] == "Ben"
