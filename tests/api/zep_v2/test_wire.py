"""Zep Cloud v2 / CE 2.x under /api/v2, what the client scenarios do not show: a session
is the v3 thread of that id (both ways), empty query parameters and explicit nulls are
accepted, what graphrecall cannot keep is a 400 naming the field (and writes nothing),
an unknown session is a 404 naming ``session_id``, and the v2 routes not built are 405."""

from __future__ import annotations

import re
import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import httpx
import pytest
from fastapi.routing import APIRoute

from graphrecall.api import zep_v2, zep_v3
from graphrecall.api.app import create_app
from graphrecall.api.zep_v2.reference_routes_v2 import ZEP_V2_ROUTES
from graphrecall.config import Settings
from tests.api.zep_v3.conftest import v2_url
from tests.api.zep_v3.test_routes import _app_entries
from tests.api.zep_v3.test_wire import V3
from tests.conftest import Server


@dataclass
class V2(V3):
    def processed(self, session_id: str | None = None) -> None:
        """Wait until the session's messages are processed (read through v3)."""
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            listed = self.ok("GET", f"/threads/{session_id or self.thread_id}/messages")
            if all(m["processed"] for m in listed["messages"]):
                return
            time.sleep(0.05)
        raise AssertionError("messages not processed")


@pytest.fixture(scope="module")
def v2(server: Server) -> Iterator[V2]:
    """A user with one session of two processed messages, added through v2."""
    headers = {"Authorization": f"Api-Key {server.api_key}"}
    with httpx.Client(base_url=v2_url(server), headers=headers, timeout=60) as http:
        tag = uuid.uuid4().hex[:8]
        client = V2(http, f"v2-{tag}", f"v2-session-{tag}")
        client.ok("POST", "/users", json={"user_id": client.user_id, "first_name": "Ben"})
        client.ok(
            "POST",
            "/sessions",
            json={
                "session_id": client.thread_id,
                "user_id": client.user_id,
                "metadata": None,  # zep-cloud 1.0.9 sends unset fields as null
                "fact_rating_instruction": None,
            },
        )
        client.ok(
            "POST",
            f"/sessions/{client.thread_id}/memory",
            json={
                "messages": [
                    {
                        "role": "Ben",
                        "role_type": "user",
                        "content": "I moved to Oslo in 2021.",
                        "metadata": None,
                    },
                    # CE clients may give only a role that is a role type.
                    {"role": "assistant", "content": "Oslo is lovely.", "metadata": None},
                ],
                "fact_instruction": None,
                "summary_instruction": None,
            },
        )
        client.processed()
        yield client


def test_a_session_is_the_v3_thread_of_that_id(v2: V2) -> None:
    thread = v2.ok("GET", f"/users/{v2.user_id}/threads")
    assert [t["thread_id"] for t in thread] == [v2.thread_id]
    messages = v2.ok("GET", f"/threads/{v2.thread_id}/messages")["messages"]
    assert [(m["role"], m.get("name")) for m in messages] == [("user", "Ben"), ("assistant", None)]
    # ... and a v3 thread is a v2 session.
    other = f"{v2.thread_id}-v3"
    v2.ok("POST", "/threads", json={"thread_id": other, "user_id": v2.user_id})
    session = v2.ok("GET", f"/sessions/{other}")
    assert (session["session_id"], session["user_id"]) == (other, v2.user_id)
    sessions = v2.ok("GET", f"/users/{v2.user_id}/sessions")
    assert {s["session_id"] for s in sessions} == {v2.thread_id, other}
    v2.ok("DELETE", f"/threads/{other}")
    v2.error(404, "GET", f"/sessions/{other}")


def test_empty_query_parameters_are_absent(v2: V2) -> None:
    memory = v2.ok("GET", f"/sessions/{v2.thread_id}/memory?lastn=&minRating=&memoryType=")
    assert [m["content"] for m in memory["messages"]] == [
        "I moved to Oslo in 2021.",
        "Oslo is lovely.",
    ]
    assert [(m.get("role"), m["role_type"]) for m in memory["messages"]] == [
        ("Ben", "user"),
        (None, "assistant"),
    ]
    listed = v2.ok("GET", f"/sessions/{v2.thread_id}/messages?limit=&cursor=")
    assert (listed["row_count"], listed["total_count"]) == (2, 2)
    ordered = v2.ok("GET", "/sessions-ordered?page_number=&page_size=&order_by=&asc=")
    assert v2.thread_id in [s["session_id"] for s in ordered["sessions"]]


def test_min_rating_keeps_the_facts_rated_at_least_that(v2: V2) -> None:
    memory = v2.ok("GET", f"/sessions/{v2.thread_id}/memory")
    ratings = [f["rating"] for f in memory["relevant_facts"]]
    assert ratings and all(0 <= r <= 1 for r in ratings)
    assert memory["facts"] == [f["fact"] for f in memory["relevant_facts"]]
    assert "Oslo" in memory["context"]
    above = v2.ok("GET", f"/sessions/{v2.thread_id}/memory?minRating={max(ratings)}")
    assert [f["rating"] for f in above["relevant_facts"]] == [max(ratings)]
    none = v2.ok("GET", f"/sessions/{v2.thread_id}/memory?minRating=1.01")
    assert none["relevant_facts"] == [] and none["facts"] == []


def test_what_graphrecall_cannot_keep_is_a_400_naming_it(v2: V2) -> None:
    session = f"{v2.thread_id}-meta"
    body = {"session_id": session, "user_id": v2.user_id, "metadata": {"k": "v"}}
    assert v2.error(400, "POST", "/sessions", json=body)["param"] == "metadata"
    v2.error(404, "GET", f"/sessions/{session}")  # nothing was created
    no_user = v2.error(400, "POST", "/sessions", json={"session_id": session})
    assert "user_id" in no_user["message"]
    patch = {"fact_rating_instruction": {"instruction": "rate"}}
    error = v2.error(400, "PATCH", f"/sessions/{v2.thread_id}", json=patch)
    assert error["param"] == "fact_rating_instruction"
    assert v2.ok("PATCH", f"/sessions/{v2.thread_id}", json={"metadata": None})["session_id"]
    memory = {"messages": [{"role_type": "user", "content": "x"}], "fact_instruction": "f"}
    path = f"/sessions/{v2.thread_id}/memory"
    assert v2.error(400, "POST", path, json=memory)["param"] == "fact_instruction"
    bad_role = {"messages": [{"role": "Ben", "role_type": "boss", "content": "x"}]}
    assert v2.error(400, "POST", path, json=bad_role)["param"] == "messages[0].role_type"
    empty = {"messages": [{"role_type": "user", "content": ""}]}
    assert v2.error(400, "POST", path, json=empty)["param"] == "messages[0].content"
    assert v2.ok("GET", f"/sessions/{v2.thread_id}/messages")["total_count"] == 2
    kind = v2.error(400, "GET", f"{path}?memoryType=everything")
    assert kind["param"] == "memoryType"
    assert v2.error(400, "GET", f"{path}?lastn=many")["param"] == "lastn"
    assert v2.error(400, "GET", f"{path}?minRating=high")["param"] == "minRating"


def test_search_needs_text_and_a_user_or_sessions(v2: V2) -> None:
    error = v2.error(400, "POST", "/sessions/search", json={"text": "Oslo"})
    assert "user_id or session_ids" in error["message"]
    error = v2.error(400, "POST", f"/sessions/{v2.thread_id}/search", json={"text": " "})
    assert error["param"] == "text"
    error = v2.error(
        400,
        "POST",
        f"/sessions/{v2.thread_id}/search",
        json={"text": "Oslo", "metadata": {"where": {"jsonpath": "$.x"}}},
    )
    assert error["param"] == "metadata"
    found = v2.ok(
        "POST",
        f"/sessions/{v2.thread_id}/search?limit=",
        json={"text": "Where did Ben move?", "search_scope": "messages", "mmr_lambda": None},
    )
    assert isinstance(found, list) and found
    assert found[0]["message"]["content"] == "I moved to Oslo in 2021."
    assert all(0 <= r["score"] <= 1 for r in found)
    assert v2.ok("GET", f"/sessions/{v2.thread_id}/summary")["row_count"] in (0, 1)
    facts = v2.ok("GET", f"/sessions/{v2.thread_id}/facts?minRating=")["facts"]
    memory = v2.ok("GET", f"/sessions/{v2.thread_id}/memory")
    assert facts == memory["relevant_facts"] and facts
    summaries = v2.ok(
        "POST", f"/sessions/{v2.thread_id}/search", json={"text": "Oslo", "search_scope": "summary"}
    )
    assert isinstance(summaries, list) and all("summary" in r for r in summaries)


def test_a_deleted_sessions_messages_are_no_longer_its(v2: V2) -> None:
    """memory.delete deletes the session; its messages stay in the user's graph as
    episodes, and a session search no longer finds them as the session's."""
    other = f"{v2.thread_id}-gone"
    v2.ok("POST", "/sessions", json={"session_id": other, "user_id": v2.user_id})
    message = {"role": "Ben", "role_type": "user", "content": "My cat is called Miso."}
    v2.ok("POST", f"/sessions/{other}/memory", json={"messages": [message]})
    v2.processed(other)
    query = {"user_id": v2.user_id, "text": "What is the cat called?", "search_scope": "messages"}
    found = v2.ok("POST", "/sessions/search", json=query)["results"]
    assert other in [r["session_id"] for r in found]
    v2.ok("DELETE", f"/sessions/{other}/memory")
    v2.error(404, "GET", f"/sessions/{other}/memory")
    found = v2.ok("POST", "/sessions/search", json=query)["results"]
    assert found and {r["session_id"] for r in found} == {v2.thread_id}


def test_unknown_sessions_and_facts_are_404s_naming_them(v2: V2) -> None:
    for method, path in (
        ("GET", "/sessions/nobody/memory"),
        ("POST", "/sessions/nobody/memory"),
        ("DELETE", "/sessions/nobody/memory"),
        ("GET", "/sessions/nobody/messages"),
    ):
        body = {"messages": [{"role_type": "user", "content": "x"}]}
        error = v2.error(404, method, path, json=body if method == "POST" else None)
        assert error["param"] == "session_id", (method, path)
    missing = str(uuid.uuid4())
    assert v2.error(404, "GET", f"/facts/{missing}")["param"] == "fact_uuid"


@pytest.mark.parametrize(
    ("method", "path"),
    [
        ("POST", "/collections/docs"),
        ("POST", "/collections/docs/search"),
        ("POST", "/sessions/s1/classify"),
        ("POST", "/sessions/end"),
        ("GET", "/groups-ordered"),
    ],
)
def test_v2_routes_not_built_are_405_naming_them(v2: V2, method: str, path: str) -> None:
    error = v2.error(405, method, path, json={})
    assert error["code"] == "not_implemented" and "Zep Cloud v2" in error["message"]


def test_the_v2_reference_routes_are_each_built_or_refused() -> None:
    """Every v2 route built is in the reference (so none is served unannounced)."""
    unnamed = {(m, re.sub(r"\{[^}]+\}", "{}", p)) for m, p in ZEP_V2_ROUTES}
    built = [
        (method, re.sub(r"\{[^}]+\}", "{}", r.path))
        for router in zep_v2.ROUTERS
        for r in router.routes
        if isinstance(r, APIRoute)
        for method in r.methods or ()
    ]
    assert len(built) == 17
    assert not [b for b in built if b not in unnamed]


def test_each_v2_route_is_served_or_refused_and_collides_with_nothing(tmp_path: Path) -> None:
    app = create_app(Settings(db=str(tmp_path / "routes.db")))
    refused = 0
    for method, template in ZEP_V2_ROUTES:
        path = zep_v3.PREFIX + re.sub(r"\{[^}]+\}", "x1", template)
        entries = _app_entries(app, method, path)
        assert len(entries) == 1, (method, template, entries)
        if getattr(entries[0], "original_router", None) not in zep_v2.ROUTERS:
            assert entries[0].name == "not_built", (method, template)
            refused += 1
    assert refused == len(ZEP_V2_ROUTES) - 17


def test_a_fact_deleted_is_gone_from_memory(v2: V2) -> None:
    """Last of the tests on the shared session: it deletes one of its facts."""
    facts = v2.ok("GET", f"/sessions/{v2.thread_id}/memory")["relevant_facts"]
    assert facts
    gone = facts[0]["uuid"]
    assert v2.ok("GET", f"/facts/{gone}")["fact"]["fact"] == facts[0]["fact"]
    assert v2.ok("DELETE", f"/facts/{gone}") == {"message": "deleted"}
    assert v2.error(404, "GET", f"/facts/{gone}")["param"] == "fact_uuid"
    after = v2.ok("GET", f"/sessions/{v2.thread_id}/memory")["relevant_facts"]
    assert gone not in [f["uuid"] for f in after]
