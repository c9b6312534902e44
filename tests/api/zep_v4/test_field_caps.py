"""Every free-text field has a documented cap (issue 47, item 6): a value over it is a 400
naming the field and writes nothing; a value at it is stored and read back, on SQLite and
on PostgreSQL, where a name is also an index key (a btree row holds at most 2,704 bytes:
``first_name`` over ~2.7 KB was a 500 there)."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import httpx
import pytest

from graphrecall.domain import limits
from tests.inprocess import InProcess

# Four bytes in UTF-8 and one character: the longest a capped name can be in bytes.
WIDE = "\U0001d538"


@dataclass
class Ids:
    graph: str
    user: str
    thread: str
    node: str
    edge: str
    episode: str
    message: str


@pytest.fixture(scope="module")
def http(server: InProcess) -> Iterator[httpx.Client]:
    with server.http("/api/v4", headers={"Authorization": f"Api-Key {server.api_key}"}) as client:
        yield client


@pytest.fixture(scope="module")
def ids(http: httpx.Client) -> Ids:
    graph = http.post("/graphs", json={"name": "caps"}).json()["uuid"]
    user = http.post("/users", json={"user_id": "caps-user"}).json()["uuid"]
    thread = http.post("/threads", json={"user_uuid": user}).json()["uuid"]
    edge = {"fact": "Ann knows Bob", "fact_name": "KNOWS"}
    refs = {"source_node": {"name": "Ann"}, "target_node": {"name": "Bob"}}
    added = http.post(f"/graphs/{graph}/edges", json={"edges": [edge | refs]}).json()
    episode = http.post(f"/graphs/{graph}/episodes", json={"data": "Ann met Bob."}).json()
    said = http.post(
        f"/threads/{thread}/messages", json={"messages": [{"role": "user", "content": "Hi"}]}
    ).json()
    return Ids(
        graph,
        user,
        thread,
        added["edges"][0]["source_node_uuid"],
        added["edges"][0]["uuid"],
        episode["episode"]["uuid"],
        said["messages"][0]["uuid"],
    )


def over(cap: int) -> str:
    return "a" * (cap + 1)


def big_object() -> dict[str, Any]:
    return {"blob": "b" * limits.MAX_JSON_OBJECT_BYTES}


EDGE = {"fact": "Ann knows Bob", "fact_name": "KNOWS", "source_node": {"name": "Ann"}}

# (method, path, body, the param the 400 names)
CASES: list[tuple[str, str, Any, str]] = [
    ("POST", "/users", {"first_name": over(limits.MAX_PERSON_NAME_CHARS)}, "first_name"),
    ("POST", "/users", {"last_name": over(limits.MAX_PERSON_NAME_CHARS)}, "last_name"),
    ("POST", "/users", {"email": over(limits.MAX_EMAIL_CHARS)}, "email"),
    ("POST", "/users", {"time_zone": over(limits.MAX_TIME_ZONE_CHARS)}, "time_zone"),
    ("POST", "/users", {"content_policy": big_object()}, "content_policy"),
    ("POST", "/users", {"metadata": {"k": over(limits.MAX_JSON_OBJECT_BYTES)}}, "metadata"),
    ("PATCH", "/users/{u}", {"first_name": over(limits.MAX_PERSON_NAME_CHARS)}, "first_name"),
    ("POST", "/graphs", {"description": over(limits.MAX_DESCRIPTION_CHARS)}, "description"),
    ("PATCH", "/graphs/{g}", {"description": over(limits.MAX_DESCRIPTION_CHARS)}, "description"),
    (
        "POST",
        "/graphs/{g}/nodes",
        {"nodes": [{"name": "N", "summary": over(limits.MAX_SUMMARY_CHARS)}]},
        "nodes[0].summary",
    ),
    (
        "POST",
        "/graphs/{g}/nodes",
        {"nodes": [{"name": "N", "label": over(limits.MAX_LABEL_CHARS)}]},
        "nodes[0].label",
    ),
    (
        "POST",
        "/graphs/{g}/nodes",
        {"nodes": [{"name": "N", "attributes": big_object()}]},
        "nodes[0].attributes",
    ),
    ("PATCH", "/graphs/{g}/nodes/{n}", {"summary": over(limits.MAX_SUMMARY_CHARS)}, "summary"),
    ("PATCH", "/graphs/{g}/nodes/{n}", {"attributes": big_object()}, "attributes"),
    (
        "POST",
        "/graphs/{g}/edges",
        {
            "edges": [
                EDGE | {"target_node": {"name": "B", "labels": [over(limits.MAX_LABEL_CHARS)]}}
            ]
        },
        "edges[0].target_node.labels[0]",
    ),
    (
        "POST",
        "/graphs/{g}/edges",
        {"edges": [EDGE | {"target_node": {"name": "B", "labels": ["L"] * 21}}]},
        "edges[0].target_node.labels",
    ),
    (
        "POST",
        "/graphs/{g}/edges",
        {"edges": [EDGE | {"target_node": {"name": "B"}, "attributes": big_object()}]},
        "edges[0].attributes",
    ),
    ("PATCH", "/graphs/{g}/edges/{e}", {"attributes": big_object()}, "attributes"),
    (
        "POST",
        "/graphs/{g}/episodes",
        {"data": "x", "source_description": over(limits.MAX_SOURCE_DESCRIPTION_CHARS)},
        "source_description",
    ),
    (
        "POST",
        "/graphs/{g}/episodes",
        {"data": "x", "document_id": over(limits.MAX_DOCUMENT_ID_CHARS)},
        "document_id",
    ),
    (
        "POST",
        "/graphs/{g}/episodes",
        {"data": "x", "reference_time": over(limits.MAX_TIMESTAMP_CHARS)},
        "reference_time",
    ),
    ("PATCH", "/graphs/{g}/episodes/{p}", {"metadata": big_object()}, "metadata"),
    (
        "POST",
        "/threads/{t}/messages",
        {"messages": [{"role": "user", "content": "x", "name": over(limits.MAX_NAME_CHARS)}]},
        "messages[0].name",
    ),
    ("PATCH", "/threads/{t}/messages/{m}", {"metadata": big_object()}, "metadata"),
    (
        "POST",
        "/user-groups",
        {"name": "g", "description": over(limits.MAX_DESCRIPTION_CHARS)},
        "description",
    ),
    (
        "POST",
        "/context-templates",
        {"name": "t", "template": over(limits.MAX_TEMPLATE_CHARS)},
        "template",
    ),
    (
        "POST",
        "/context-templates",
        {"name": over(limits.MAX_NAME_CHARS), "template": "%{edges limit=3}"},
        "name",
    ),
]


def _fill(path: str, ids: Ids) -> str:
    return path.format(
        g=ids.graph, u=ids.user, t=ids.thread, n=ids.node, e=ids.edge, p=ids.episode, m=ids.message
    )


@pytest.mark.parametrize(("method", "path", "body", "param"), CASES, ids=[c[3] for c in CASES])
def test_a_field_over_its_cap_is_a_400_naming_it(
    http: httpx.Client, ids: Ids, method: str, path: str, body: Any, param: str
) -> None:
    before = http.post("/users/list", json={}).json()["items"]
    response = http.request(method, _fill(path, ids), json=body)
    assert response.status_code == 400, response.text[:300]
    error = response.json()["error"]
    assert error["param"] == param, error
    assert len(http.post("/users/list", json={}).json()["items"]) == len(before)


def test_names_at_their_caps_are_stored_and_read_back(http: httpx.Client, ids: Ids) -> None:
    """The longest names in the widest characters: the user's node (named from first and
    last name, else user_id) and a node given by name are index keys on PostgreSQL."""
    first = WIDE * limits.MAX_PERSON_NAME_CHARS
    last = "\u00e9" * limits.MAX_PERSON_NAME_CHARS
    user = http.post("/users", json={"first_name": first, "last_name": last})
    assert user.status_code in (200, 201), user.text[:300]
    node = http.get(f"/users/{user.json()['uuid']}/node").json()
    assert node["name"] == f"{first} {last}"

    by_id = http.post("/users", json={"user_id": WIDE * limits.MAX_USER_ID_CHARS})
    assert by_id.status_code in (200, 201), by_id.text[:300]
    assert http.get(f"/users/{by_id.json()['uuid']}/node").json()["name"] == (
        WIDE * limits.MAX_USER_ID_CHARS
    )
    email = http.post("/users", json={"email": "e" * (limits.MAX_EMAIL_CHARS - 4) + "@x.y"})
    assert email.status_code in (200, 201), email.text[:300]

    name = WIDE * limits.MAX_NAME_CHARS
    labels = ["L" * limits.MAX_LABEL_CHARS] * limits.MAX_LABELS
    added = http.post(
        f"/graphs/{ids.graph}/edges",
        json={
            "edges": [
                {
                    "fact": "a long name",
                    "fact_name": "KNOWS",
                    "source_node": {"name": name, "labels": labels},
                    "target_node": {"name": "Bob"},
                    "attributes": {"blob": "b" * (limits.MAX_JSON_OBJECT_BYTES - 20)},
                }
            ]
        },
    )
    assert added.status_code in (200, 201), added.text[:300]
    source = added.json()["edges"][0]["source_node_uuid"]
    stored = http.get(f"/graphs/{ids.graph}/nodes/{source}").json()
    assert stored["name"] == name
