"""An agent's calls through the published Zep Community Edition 2.x client
(``zep-python`` 2.0.2), unmodified, run in its own interpreter path.

Usage: ``python scenario_ce.py ROOT_URL API_KEY``: the CE client appends ``/api/v2`` to
the URL it is given (the server's root, as for a self-hosted Zep). Ids are prefixed with
$SCENARIO_USER. Prints one JSON line per call: ``{"call", "ok", "detail"}``; exits 0 once
every call has run. Imports nothing of graphrecall: it is a client, as a user's agent is.
"""

from __future__ import annotations

import json
import os
import sys
import time
import traceback
from collections.abc import Callable
from typing import Any

from zep_python import NotFoundError
from zep_python.client import Zep
from zep_python.types import Message

ROOT_URL, API_KEY = sys.argv[1], sys.argv[2]
PREFIX = os.environ.get("SCENARIO_USER", "ce")
ALICE, SESSION = f"{PREFIX}-alice", f"{PREFIX}-session-1"
client = Zep(base_url=ROOT_URL, api_key=API_KEY)
state: dict[str, Any] = {}


def call(name: str, fn: Callable[[], Any]) -> None:
    try:
        detail = fn()
        print(json.dumps({"call": name, "ok": True, "detail": str(detail)[:300]}), flush=True)
    except Exception as exc:  # one failed call is reported, the rest still run
        tail = traceback.format_exception_only(type(exc), exc)[-1].strip()
        print(json.dumps({"call": name, "ok": False, "detail": tail[:600]}), flush=True)


def check(condition: bool, what: str) -> None:
    if not condition:
        raise AssertionError(what)


def add_user() -> str:
    user = client.user.add(user_id=ALICE, first_name="Alice", last_name="Smith")
    check(user.user_id == ALICE and bool(user.uuid_), f"user {user}")
    return str(user.uuid_)


def add_session() -> str:
    found = client.memory.add_session(session_id=SESSION, user_id=ALICE)
    check(found.session_id == SESSION and found.user_id == ALICE, f"{found}")
    return str(found.uuid_)


def add_memory() -> str:
    # CE's role is the speaker's name, role_type the role.
    done = client.memory.add(
        SESSION,
        messages=[
            Message(role="Alice", role_type="user", content="I just moved to Lisbon."),
            Message(role="Agent", role_type="assistant", content="Welcome to Portugal!"),
            Message(role="Alice", role_type="user", content="I work at a bakery in Alfama."),
        ],
    )
    check(bool(done.message), f"{done}")
    return str(done.message)


def facts_learned() -> str:
    """CE agents poll memory.get until the session's facts appear."""
    deadline = time.monotonic() + 180
    while time.monotonic() < deadline:
        memory = client.memory.get(SESSION)
        facts = memory.relevant_facts or []
        lisbon = [f for f in facts if "Lisbon" in (f.fact or "")]
        if lisbon:
            check(all(f.rating is not None and 0 <= f.rating <= 1 for f in facts), f"{facts}")
            check([m.role for m in memory.messages or []] == ["Alice", "Agent", "Alice"], "roles")
            state["fact_uuid"] = lisbon[0].uuid_
            return str([f.fact for f in facts])
        time.sleep(0.5)
    raise AssertionError("no fact mentioning Lisbon")


def memory_lastn() -> str:
    memory = client.memory.get(SESSION, lastn=2, min_rating=0.0)
    contents = [m.content for m in memory.messages or []]
    check(contents == ["Welcome to Portugal!", "I work at a bakery in Alfama."], f"{contents}")
    return str(contents)


def search_facts() -> str:
    found = client.memory.search_sessions(
        user_id=ALICE, text="Where does Alice live?", search_scope="facts", limit=5
    )
    facts = [r.fact.fact for r in found.results or [] if r.fact]
    check(any("Lisbon" in (f or "") for f in facts), f"{found}")
    return str(facts)


def search_messages() -> str:
    found = client.memory.search_sessions(
        session_ids=[SESSION], text="Where does Alice work?", search_scope="messages"
    )
    results = found.results or []
    contents = [r.message.content for r in results if r.message]
    check("I work at a bakery in Alfama." in contents, f"{contents}")
    check(all(r.session_id == SESSION and r.score is not None for r in results), f"{results}")
    return str(contents)


def search_mmr() -> str:
    found = client.memory.search_sessions(
        user_id=ALICE, text="bakery", search_type="mmr", mmr_lambda=0.5, limit=2
    )
    check(0 < len(found.results or []) <= 2, f"{found}")
    return str(len(found.results or []))


def get_session() -> str:
    found = client.memory.get_session(SESSION)
    check(found.session_id == SESSION and found.user_id == ALICE, f"{found}")
    return str(found.uuid_)


def session_messages() -> str:
    found = client.memory.get_session_messages(SESSION)
    check(found.total_count == 3 and found.row_count == 3, f"{found}")
    first = (found.messages or [])[0]
    check(first.role == "Alice" and first.role_type == "user", f"{first}")
    return f"{found.row_count} messages"


def get_fact() -> str:
    found = client.memory.get_fact(state["fact_uuid"])
    check(found.fact is not None and "Lisbon" in (found.fact.fact or ""), f"{found}")
    return str(found.fact)


def list_sessions() -> str:
    # Not user.get_sessions: zep-python 2.0.2 parses its answer as a list of lists of
    # sessions, which no server sends (docs/migrating-from-zep-v2.md).
    found = client.memory.list_sessions(page_size=100, order_by="session_id", asc=True)
    check(SESSION in [s.session_id for s in found.sessions or []], f"{found}")
    return f"{found.total_count} sessions"


def delete_memory() -> str:
    client.memory.delete(SESSION)
    try:
        client.memory.get(SESSION)
    except NotFoundError:
        return "gone"
    raise AssertionError("memory still there")


def delete_user() -> str:
    client.user.delete(ALICE)
    try:
        client.user.get(ALICE)
    except NotFoundError:
        return "gone"
    raise AssertionError("user still there")


SCENARIO: list[tuple[str, Callable[[], Any]]] = [
    ("user.add", add_user),
    ("memory.add_session", add_session),
    ("memory.add", add_memory),
    ("memory.get relevant_facts", facts_learned),
    ("memory.get lastn", memory_lastn),
    ("memory.search_sessions facts", search_facts),
    ("memory.search_sessions messages", search_messages),
    ("memory.search_sessions mmr", search_mmr),
    ("memory.get_session", get_session),
    ("memory.get_session_messages", session_messages),
    ("memory.get_fact", get_fact),
    ("memory.list_sessions", list_sessions),
    ("memory.delete", delete_memory),
    ("user.delete", delete_user),
]

if __name__ == "__main__":
    for name, fn in SCENARIO:
        call(name, fn)
