"""Auth, isolation between projects, and bad input: always a 4xx naming the field."""

from __future__ import annotations

from typing import Any

import httpx
import pytest
from zep_cloud import Zep
from zep_cloud.core.api_error import ApiError
from zep_cloud.errors import BadRequestError, NotFoundError, UnauthorizedError

from tests.inprocess import InProcess

UNKNOWN = "0190f0f0-0000-7000-8000-000000000000"


def raw(server: InProcess, method: str, path: str, **kwargs: Any) -> httpx.Response:
    headers = {"Authorization": f"Api-Key {server.api_key}", **kwargs.pop("headers", {})}
    with server.http("/api/v4") as http:
        return http.request(method, path, headers=headers, **kwargs)


def test_wrong_or_missing_key_is_unauthorized(server: InProcess) -> None:
    with pytest.raises(UnauthorizedError):
        server.client(api_key="wrong").user.create(user_id="x")
    with server.http("/api/v4") as http:
        response = http.get("/project")
    assert response.status_code == 401
    assert response.json()["error"]["code"] == "unauthorized"


def test_unknown_uuids_are_not_found(zep: Zep) -> None:
    with pytest.raises(NotFoundError) as info:
        zep.graph.get(UNKNOWN)
    assert info.value.body.error.code == "not_found"
    graph = zep.graph.create(name="nf")
    for call in (
        lambda: zep.graph.node.get(graph.uuid_, UNKNOWN),
        lambda: zep.graph.edge.get(graph.uuid_, UNKNOWN),
        lambda: zep.graph.episode.get(graph.uuid_, UNKNOWN),
        lambda: zep.user.get(UNKNOWN),
        lambda: zep.thread.get(UNKNOWN),
        lambda: zep.task.get(UNKNOWN),
    ):
        with pytest.raises(NotFoundError):
            call()


def test_invalid_uuid_is_a_400_naming_the_path_parameter(zep: Zep) -> None:
    with pytest.raises(BadRequestError) as info:
        zep.graph.get("not-a-uuid")
    assert info.value.body.error.param == "graph_uuid"


def test_projects_are_isolated(server: InProcess, zep: Zep) -> None:
    other = server.client(api_key=server.cli("keys", "create", "--project", "other-team"))
    mine = zep.graph.create(name="private")
    with pytest.raises(NotFoundError):
        other.graph.get(mine.uuid_)
    assert mine.uuid_ not in [g.uuid_ for g in other.graph.list()]
    theirs = other.user.create(first_name="Other")
    with pytest.raises(NotFoundError):
        zep.user.get(theirs.uuid_)


@pytest.mark.parametrize(
    ("method", "path", "body", "param"),
    [
        ("POST", "/graphs", {"name": 12}, "name"),
        ("POST", "/graphs", {"name": "x" * 501}, "name"),
        ("POST", "/users", {"metadata": "not an object"}, "metadata"),
        ("POST", "/users", {"metadata": {"nested": {"a": 1}}}, "metadata"),
        ("POST", "/threads", {}, "user_uuid"),
        ("POST", "/threads", {"user_uuid": "nope"}, "user_uuid"),
        ("PATCH", "/project", {"default_time_zone": "Nowhere/Else"}, "default_time_zone"),
    ],
)
def test_malformed_bodies(
    server: InProcess, method: str, path: str, body: dict[str, Any], param: str
) -> None:
    response = raw(server, method, path, json=body)
    assert response.status_code == 400, response.text
    assert response.json()["error"]["param"] == param


def test_malformed_bodies_via_sdk(zep: Zep) -> None:
    graph = zep.graph.create(name="bad")
    with pytest.raises(BadRequestError) as info:
        zep.graph.episode.add(graph.uuid_, data="x", type="video")  # unknown enum value
    assert info.value.body.error.param == "type"
    with pytest.raises(BadRequestError) as info:
        zep.graph.episode.add(graph.uuid_, data="")
    assert info.value.body.error.param == "data"


def test_no_5xx_on_garbage(server: InProcess) -> None:
    graph = raw(server, "POST", "/graphs", json={"name": "garbage"}).json()["uuid"]
    cases = [
        (
            "POST",
            "/graphs",
            {"content": b"{not json", "headers": {"content-type": "application/json"}},
        ),
        (
            "POST",
            "/graphs",
            {"content": b"[1,2,3]", "headers": {"content-type": "application/json"}},
        ),
        ("POST", f"/graphs/{graph}/episodes", {"json": {"data": 5}}),
        ("POST", f"/graphs/{graph}/episodes", {"json": {"data": "x", "metadata": [1]}}),
        ("POST", f"/graphs/{graph}/nodes", {"json": {"nodes": "x"}}),
        ("POST", f"/graphs/{graph}/nodes", {"json": {"nodes": [{"name": None}]}}),
        ("POST", f"/graphs/{graph}/nodes/list?page_size=abc", {"json": {}}),
        ("POST", f"/graphs/{graph}/nodes/list?page_size=-5", {"json": {}}),
        ("POST", f"/graphs/{graph}/edges/list?cursor=%00%ff", {"json": {}}),
        ("POST", f"/graphs/{graph}/subgraph", {"json": {"seed_node_uuids": ["x"], "depth": 99}}),
        ("POST", f"/graphs/{graph}/subgraph", {"json": {"seed_node_uuids": ["bad"]}}),
        ("GET", "/tasks?status=exploded", {}),
        ("GET", f"/graphs/{graph}/nodes/{'9' * 2000}", {}),
        ("PATCH", f"/graphs/{graph}", {"json": {"time_zone": 3}}),
    ]
    for method, path, kwargs in cases:
        response = raw(server, method, path, **kwargs)
        assert 400 <= response.status_code < 500, (
            method,
            path,
            response.status_code,
            response.text,
        )
        assert "error" in response.json() and response.json()["error"]["message"]


def test_oversized_body_is_413(server: InProcess) -> None:
    graph = raw(server, "POST", "/graphs", json={"name": "big"}).json()["uuid"]
    response = raw(
        server,
        "POST",
        f"/graphs/{graph}/episodes",
        content=b'{"data": "' + b"x" * (9 * 1024 * 1024) + b'"}',
        headers={"content-type": "application/json"},
    )
    assert response.status_code == 413
    assert response.json()["error"]["code"] == "payload_too_large"
    episodes = raw(server, "POST", f"/graphs/{graph}/episodes/list", json={}).json()
    assert episodes["items"] == []


def test_unbuilt_endpoints_answer_at_once_without_sdk_retries(server: InProcess) -> None:
    # The SDK's default client, which retries 5xx, 408, 409 and 429 with back-off; the
    # requests it sends are counted (a time bound failed on a loaded machine).
    sent: list[httpx.Request] = []
    http = server.http(event_hooks={"request": [sent.append]})
    zep = Zep(api_key=server.api_key, base_url=server.base_url, httpx_client=http)
    graph = zep.graph.create(name="unbuilt")
    sent.clear()
    with pytest.raises(ApiError) as info:
        zep.graph.get_instructions(graph.uuid_)
    assert len(sent) == 1  # one request, no retry
    assert info.value.status_code == 405
    message = info.value.body["error"]["message"]
    assert message == (
        "GET /graphs/{graph_uuid}/instructions is part of the Zep v4 API,"
        " not implemented by graphrecall"
    )
    answer = raw(server, "PUT", "/project/observation-steering", json={})
    assert answer.status_code == 405 and answer.json()["error"]["code"] == "not_implemented"
    assert answer.headers["Allow"] == ""  # graphrecall serves no method on that path
    answer = raw(server, "GET", "/threads/x/summary")
    assert answer.status_code != 405  # a built route is untouched


def test_an_unbuilt_option_is_a_400_naming_it(zep: Zep) -> None:
    with pytest.raises(BadRequestError) as info:
        zep.project.update(include_policy_violating_episodes=True)
    assert info.value.body.error.param == "include_policy_violating_episodes"


def test_a_filter_the_endpoint_does_not_take_is_rejected_not_ignored(zep: Zep) -> None:
    graph = zep.graph.create(name="filters")
    with pytest.raises(BadRequestError) as info:
        list(zep.graph.node.list(graph.uuid_, filters={"source_node_uuids": [UNKNOWN]}))
    assert info.value.body.error.code == "unsupported_filter"
    assert info.value.body.error.param == "filters.source_node_uuids"


def test_routes_also_served_at_root(server: InProcess) -> None:
    with server.http() as http:
        root = http.get("/project", headers={"Authorization": f"Api-Key {server.api_key}"})
    assert root.status_code == 200 and root.json()["name"] == "default"


def test_project_time_zone(zep: Zep) -> None:
    assert (
        zep.project.update(default_time_zone="America/New_York").default_time_zone
        == "America/New_York"
    )
    assert zep.project.get().default_time_zone == "America/New_York"


def test_a_literal_path_with_another_method_is_405_not_a_uuid_error(server: InProcess) -> None:
    """GET /users/list once reached GET /users/{user_uuid}: 400 "not a valid UUID: 'list'"."""
    graph = raw(server, "POST", "/graphs", json={"name": "literal"}).json()["uuid"]
    for method, path in [
        ("GET", "/users/list"),
        ("DELETE", "/users/list"),
        ("GET", f"/graphs/{graph}/nodes/list"),
        ("PATCH", f"/graphs/{graph}/edges/list"),
        ("GET", "/graphs/lookup"),
    ]:
        answer = raw(server, method, path)
        assert answer.status_code == 405, (method, path, answer.text[:200])
        assert answer.headers["Allow"] == "POST"
        assert answer.json()["error"]["code"] == "method_not_allowed"
    # The parameter routes beside them are untouched.
    assert raw(server, "GET", f"/graphs/{graph}").status_code == 200
    assert raw(server, "POST", "/users/list", json={}).status_code == 200


@pytest.mark.parametrize(
    ("path", "body", "param"),
    [
        ("/users", {"user_id": ""}, "user_id"),
        (
            "/users",
            {"user_id": "strict-1", "disable_default_ontology": "true"},
            "disable_default_ontology",
        ),
        ("/graphs/{g}/context", {"query": "tea", "max_characters": "700"}, "max_characters"),
        ("/graphs/{g}/context", {"query": "tea", "include_results": "true"}, "include_results"),
        ("/graphs/{g}/search/edges", {"query": "tea", "mmr_lambda": "0.5"}, "mmr_lambda"),
    ],
)
def test_numbers_and_booleans_as_strings_and_an_empty_user_id_are_refused(
    server: InProcess, path: str, body: dict[str, Any], param: str
) -> None:
    graph = raw(server, "POST", "/graphs", json={"name": "strict"}).json()["uuid"]
    answer = raw(server, "POST", path.format(g=graph), json=body)
    assert answer.status_code == 400, answer.text[:200]
    assert answer.json()["error"]["param"] == param
