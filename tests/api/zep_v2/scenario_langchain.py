"""An agent's calls through LangChain's ``ZepCloudChatMessageHistory`` (langchain-community
0.4.2) and the Zep Cloud v2 client it drives (``zep-cloud`` 1.0.9), unmodified, run in
their own interpreter path (the suite's environment has zep-cloud 4).

Usage: ``python scenario_langchain.py API_KEY`` with ``ZEP_API_URL`` set to the server's
root: the LangChain class takes no URL and builds ``Zep(api_key=...)`` itself, and
zep-cloud 1.x reads ``ZEP_API_URL`` (+ ``/api/v2``) first. Ids are prefixed with
$SCENARIO_USER. Prints one JSON line per call: ``{"call", "ok", "detail"}``; exits 0 once
every call has run. Imports nothing of graphrecall: it is a client, as a user's agent is.
"""

from __future__ import annotations

import json
import os
import sys
import time
import traceback
import warnings
from collections.abc import Callable
from typing import Any

warnings.simplefilter("ignore", DeprecationWarning)  # "langchain-community is being sunset"

from langchain_community.chat_message_histories import (  # noqa: E402
    ZepCloudChatMessageHistory,
)
from langchain_core.messages import AIMessage, HumanMessage  # noqa: E402
from zep_cloud import NotFoundError  # noqa: E402
from zep_cloud.client import Zep  # noqa: E402

API_KEY = sys.argv[1]
PREFIX = os.environ.get("SCENARIO_USER", "lc")
ALICE, SESSION = f"{PREFIX}-alice", f"{PREFIX}-session-1"
client = Zep(api_key=API_KEY)  # the URL from ZEP_API_URL, as LangChain's own client
history = ZepCloudChatMessageHistory(session_id=SESSION, api_key=API_KEY)
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
    user = client.user.add(user_id=ALICE, first_name="Alice", email="alice@example.com")
    check(user.user_id == ALICE and bool(user.uuid_), f"user {user}")
    return str(user.uuid_)


def add_session() -> str:
    # LangChain's class never creates its session: the user's code does, as here.
    found = client.memory.add_session(session_id=SESSION, user_id=ALICE)
    check(found.session_id == SESSION and found.user_id == ALICE, f"{found}")
    return str(found.uuid_)


def add_user_message() -> str:
    history.add_user_message("I just moved to Lisbon.", metadata={"turn": 1})
    return "added"


def add_ai_message() -> str:
    history.add_ai_message("Welcome to Portugal!")
    return "added"


def add_messages() -> str:
    history.add_messages(
        [
            HumanMessage(content="I work at a bakery in Alfama now."),
            AIMessage(content="That sounds lovely."),
        ]
    )
    return "added"


def zep_messages() -> str:
    found = history.zep_messages
    got = [(m.role, m.role_type, m.content) for m in found]
    check(
        got
        == [
            ("human", "user", "I just moved to Lisbon."),
            ("ai", "assistant", "Welcome to Portugal!"),
            ("human", "user", "I work at a bakery in Alfama now."),
            ("ai", "assistant", "That sounds lovely."),
        ],
        f"{got}",
    )
    check(found[0].metadata == {"turn": 1}, f"metadata {found[0].metadata}")
    state["first_uuid"] = found[0].uuid_
    return str(got)


def facts_learned() -> str:
    """CE and Cloud v2 agents poll memory.get until the session's facts appear."""
    deadline = time.monotonic() + 180
    while time.monotonic() < deadline:
        memory = client.memory.get(SESSION)
        facts = memory.relevant_facts or []
        if any("Lisbon" in (f.fact or "") for f in facts):
            check(all(f.rating is not None and 0 <= f.rating <= 1 for f in facts), f"{facts}")
            check(memory.facts == [f.fact for f in facts], f"facts {memory.facts}")
            return str([f.fact for f in facts])
        time.sleep(0.5)
    raise AssertionError("no fact mentioning Lisbon")


def history_messages() -> str:
    found = history.messages
    check(len(found) == 1 and isinstance(found[0], HumanMessage), f"{found}")
    text = str(found[0].content)
    check("human: I just moved to Lisbon." in text, text)
    check("ai: That sounds lovely." in text, text)
    return text[:200]


def memory_get_lastn() -> str:
    memory = client.memory.get(SESSION, lastn=1)
    contents = [m.content for m in memory.messages or []]
    check(contents == ["That sounds lovely."], f"{contents}")
    return str(contents)


def history_search() -> str:
    found = history.search("Where does the user live now?", limit=2)
    check(0 < len(found) <= 2, f"{found}")
    check(found[0].message is not None and found[0].score is not None, f"{found[0]}")
    contents = [r.message.content for r in found if r.message]
    check("I just moved to Lisbon." in contents, f"{contents}")
    return str(contents)


def search_facts() -> str:
    found = client.memory.search(SESSION, text="Lisbon", search_scope="facts")
    facts = [r.fact for r in found]  # kept by the model, which takes extra fields
    check(bool(found) and any("Lisbon" in f["fact"] for f in facts), f"{found}")
    return str(facts)


def search_sessions() -> str:
    found = client.memory.search_sessions(
        user_id=ALICE, text="Where does Alice work?", search_scope="messages", limit=3
    )
    results = found.results or []
    check(bool(results) and all(r.session_id == SESSION for r in results), f"{found}")
    return str([r.message.content for r in results if r.message])


def get_session() -> str:
    found = client.memory.get_session(SESSION)
    check(found.session_id == SESSION and found.user_id == ALICE, f"{found}")
    return str(found.uuid_)


def user_sessions() -> str:
    found = client.user.get_sessions(ALICE)
    check([s.session_id for s in found] == [SESSION], f"{found}")
    return str(len(found))


def list_sessions() -> str:
    found = client.memory.list_sessions(page_size=100)
    check(SESSION in [s.session_id for s in found.sessions or []], f"{found}")
    return f"{found.total_count} sessions"


def session_messages() -> str:
    found = client.memory.get_session_messages(SESSION, limit=2)
    check(found.total_count == 4 and found.row_count == 2, f"{found}")
    check((found.messages or [])[0].content == "I just moved to Lisbon.", f"{found}")
    return f"{found.row_count} of {found.total_count}"


def message_metadata() -> str:
    updated = client.memory.update_message_metadata(
        SESSION, state["first_uuid"], metadata={"topic": "moving"}
    )
    check(updated.metadata == {"turn": 1, "topic": "moving"}, f"{updated}")
    again = client.memory.get_session_message(SESSION, state["first_uuid"])
    check(again.metadata == updated.metadata, f"{again}")
    return str(again.metadata)


def clear() -> str:
    history.clear()
    check(history.messages == [], "messages after clear")  # the 404 LangChain swallows
    try:
        client.memory.get_session(SESSION)
    except NotFoundError:
        return "gone"
    raise AssertionError("session still there")


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
    ("history.add_user_message", add_user_message),
    ("history.add_ai_message", add_ai_message),
    ("history.add_messages", add_messages),
    ("history.zep_messages", zep_messages),
    ("memory.get relevant_facts", facts_learned),
    ("history.messages", history_messages),
    ("memory.get lastn", memory_get_lastn),
    ("history.search", history_search),
    ("memory.search facts", search_facts),
    ("memory.search_sessions", search_sessions),
    ("memory.get_session", get_session),
    ("user.get_sessions", user_sessions),
    ("memory.list_sessions", list_sessions),
    ("memory.get_session_messages", session_messages),
    ("memory.update_message_metadata", message_metadata),
    ("history.clear", clear),
    ("user.delete", delete_user),
]

if __name__ == "__main__":
    for name, fn in SCENARIO:
        call(name, fn)
