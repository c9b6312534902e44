"""An ordinary agent's calls through the published Python ``zep-cloud`` 3.x SDK, run in
its own interpreter path (the test suite's own environment has zep-cloud 4).

Usage: ``python scenario_py.py BASE_URL API_KEY`` (ids prefixed with $SCENARIO_USER).
Prints one JSON line per call: ``{"call": name, "ok": bool, "detail": str}``; exits 0
once every call has run.
Imports nothing of graphrecall: it is a client, as a user's agent is.
"""

from __future__ import annotations

import json
import os
import sys
import time
import traceback
from collections.abc import Callable
from typing import Any

from zep_cloud import Message, NotFoundError
from zep_cloud.client import Zep

BASE_URL, API_KEY = sys.argv[1], sys.argv[2]
# Ids of this run's own (two clients may share one server).
PREFIX = os.environ.get("SCENARIO_USER", "v3")
ALICE, THREAD, KB = f"{PREFIX}-alice", f"{PREFIX}-thread-1", f"{PREFIX}-kb"
client = Zep(api_key=API_KEY, base_url=BASE_URL)
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


def wait_task(task_id: str) -> str:
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        status = client.task.get(task_id).status
        if status in ("succeeded", "failed", "partial", "completed"):
            return str(status)
        time.sleep(0.1)
    raise AssertionError(f"task {task_id} did not finish")


def add_user() -> str:
    user = client.user.add(user_id=ALICE, first_name="Alice", email="alice@example.com")
    check(user.user_id == ALICE and bool(user.uuid_), f"user {user}")
    state["user_uuid"] = user.uuid_
    return user.uuid_


def get_user() -> str:
    user = client.user.get(ALICE)
    check(user.first_name == "Alice" and user.uuid_ == state["user_uuid"], f"user {user}")
    return str(user.email)


def create_thread() -> str:
    thread = client.thread.create(thread_id=THREAD, user_id=ALICE)
    check(thread.thread_id == THREAD and thread.user_id == ALICE, f"{thread}")
    return str(thread.uuid_)


def add_messages() -> str:
    added = client.thread.add_messages(
        THREAD,
        messages=[
            Message(role="user", name="Alice", content="I just moved to Lisbon."),
            Message(role="assistant", name="Agent", content="Welcome to Portugal!"),
            Message(role="user", name="Alice", content="I work at a bakery in Alfama now."),
        ],
    )
    check(len(added.message_uuids or []) == 3 and bool(added.task_id), f"{added}")
    state["message_task"] = added.task_id
    state["message_uuids"] = added.message_uuids
    return str(added.task_id)


def task_done() -> str:
    status = wait_task(state["message_task"])
    check(status == "succeeded", f"status {status}")
    return status


def messages_processed() -> str:
    listed = client.thread.get(THREAD)
    messages = listed.messages or []
    check([m.uuid_ for m in messages] == state["message_uuids"], f"order {messages}")
    check(all(m.processed for m in messages), "not all processed")
    check(listed.total_count == 3 and listed.row_count == 3, f"counts {listed}")
    check(messages[0].role == "user" and messages[0].name == "Alice", f"{messages[0]}")
    return f"{len(messages)} messages"


def last_messages() -> str:
    listed = client.thread.get(THREAD, lastn=2)
    contents = [m.content for m in listed.messages or []]
    check(contents == ["Welcome to Portugal!", "I work at a bakery in Alfama now."], f"{contents}")
    return str(contents)


def user_context() -> str:
    context = client.thread.get_user_context(THREAD).context or ""
    check("Lisbon" in context, f"context without Lisbon: {context[:300]}")
    return context[:120]


def graph_add_text() -> str:
    episode = client.graph.add(
        user_id=ALICE, type="text", data="Alice adopted a cat named Miso last spring."
    )
    check(bool(episode.uuid_) and episode.content.startswith("Alice adopted"), f"{episode}")
    state.setdefault("tasks", []).append(episode.task_id)
    state["text_episode"] = episode.uuid_
    return episode.uuid_


def graph_add_json() -> str:
    data = json.dumps({"name": "Alice", "employer": "Padaria Alfama", "city": "Lisbon"})
    episode = client.graph.add(user_id=ALICE, type="json", data=data)
    check(episode.source == "json", f"{episode}")
    state.setdefault("tasks", []).append(episode.task_id)
    return episode.uuid_


def graph_tasks_done() -> str:
    statuses = [wait_task(t) for t in state["tasks"]]
    check(all(s == "succeeded" for s in statuses), f"{statuses}")
    return str(statuses)


def edge_search() -> str:
    found = client.graph.search(user_id=ALICE, query="Where does Alice live?", limit=5)
    facts = [e.fact for e in found.edges or []]
    check(any("Lisbon" in f for f in facts), f"facts {facts}")
    state["edge_uuid"] = (found.edges or [])[0].uuid_
    return str(facts[:3])


def node_search() -> str:
    found = client.graph.search(user_id=ALICE, query="Miso the cat", scope="nodes")
    names = [n.name for n in found.nodes or []]
    check(any("Miso" in n for n in names), f"names {names}")
    state["node_uuid"] = next(n.uuid_ for n in found.nodes or [] if "Miso" in n.name)
    return str(names[:5])


def episode_search() -> str:
    found = client.graph.search(user_id=ALICE, query="bakery Alfama", scope="episodes")
    contents = [e.content for e in found.episodes or []]
    check(any("bakery" in c for c in contents), f"{contents}")
    return str(contents[:2])


def user_threads() -> str:
    threads = client.user.get_threads(ALICE)
    check([t.thread_id for t in threads] == [THREAD], f"{threads}")
    return str(len(threads))


def list_threads() -> str:
    listed = client.thread.list_all(page_number=1, page_size=10)
    ids = [t.thread_id for t in listed.threads or []]
    check(THREAD in ids and (listed.total_count or 0) >= 1, f"{listed}")
    return str(ids)


def user_node() -> str:
    node = client.user.get_node(ALICE).node
    check(node is not None and "Alice" in node.name, f"{node}")
    return node.name if node else ""


def graph_create() -> str:
    graph = client.graph.create(graph_id=KB, name="Knowledge base")
    check(graph.graph_id == KB and graph.name == "Knowledge base", f"{graph}")
    return str(graph.uuid_)


def graph_get() -> str:
    graph = client.graph.get(KB)
    check(graph.graph_id == KB, f"{graph}")
    return str(graph.name)


def graph_list() -> str:
    listed = client.graph.list_all(page_number=1, page_size=50)
    ids = [g.graph_id for g in listed.graphs or []]
    check(KB in ids, f"{ids}")
    return str(listed.total_count)


def graph_add_to_graph() -> str:
    episode = client.graph.add(graph_id=KB, type="text", data="The Alfama bakery opens at seven.")
    status = wait_task(str(episode.task_id))
    check(status == "succeeded", status)
    return episode.uuid_


def edges_of_user() -> str:
    edges = client.graph.edge.get_by_user_id(ALICE, limit=50)
    check(any("Lisbon" in e.fact for e in edges), f"{[e.fact for e in edges]}")
    return str(len(edges))


def nodes_of_user() -> str:
    nodes = client.graph.node.get_by_user_id(ALICE, limit=50)
    check(any(n.name == "Lisbon" for n in nodes), f"{[n.name for n in nodes]}")
    return str(len(nodes))


def nodes_of_graph() -> str:
    nodes = client.graph.node.get_by_graph_id(KB)
    check(len(nodes) >= 1, "no nodes")
    return str([n.name for n in nodes])


def episodes_of_user() -> str:
    found = client.graph.episode.get_by_user_id(ALICE, lastn=10)
    contents = [e.content for e in found.episodes or []]
    check(len(contents) == 5 and any("Miso" in c for c in contents), f"{contents}")
    return str(len(contents))


def edge_get() -> str:
    edge = client.graph.edge.get(state["edge_uuid"])
    check(edge.uuid_ == state["edge_uuid"] and bool(edge.episodes), f"{edge}")
    return edge.fact


def node_get() -> str:
    node = client.graph.node.get(state["node_uuid"])
    check("Miso" in node.name, f"{node}")
    return node.name


def node_edges() -> str:
    edges = client.graph.node.get_edges(state["node_uuid"])
    check(len(edges) >= 1, "no edges")
    return str([e.fact for e in edges])


def episode_get() -> str:
    episode = client.graph.episode.get(state["text_episode"])
    check(episode.processed is True and "Miso" in episode.content, f"{episode}")
    return episode.content


def episode_mentions() -> str:
    mentions = client.graph.episode.get_nodes_and_edges(state["text_episode"])
    names = [n.name for n in mentions.nodes or []]
    check(any("Miso" in n for n in names), f"{names}")
    return str(names)


def thread_summary() -> str:
    summary = client.thread.get_summary(THREAD)
    check(summary.thread_id == THREAD and "Lisbon" in (summary.summary or ""), f"{summary}")
    return str(summary.summary)[:100]


def message_update() -> str:
    message = client.thread.message.update(state["message_uuids"][0], metadata={"seen": True})
    check(message.metadata == {"seen": True} and message.content.endswith("Lisbon."), f"{message}")
    return str(message.metadata)


def episode_list() -> str:
    found = client.graph.episode.list_by_user_id(ALICE, limit=2, direction="asc")
    contents = [e.content for e in found]
    check(contents == ["I just moved to Lisbon.", "Welcome to Portugal!"], f"{contents}")
    return str(contents)


def observation_search() -> str:
    found = client.graph.search(user_id=ALICE, query="Alice", scope="observations")
    check(found.observations is not None and found.edges is None, f"{found}")
    return str(len(found.observations or []))


def user_warm() -> str:
    return str(client.user.warm(ALICE).message)


def fact_triple() -> str:
    added = client.graph.add_fact_triple(
        user_id=ALICE,
        fact="Alice mentors Bruno",
        fact_name="MENTORS",
        source_node_name="Alice",
        target_node_name="Bruno",
    )
    check(added.edge is not None and added.edge.fact == "Alice mentors Bruno", f"{added}")
    check(added.target_node is not None and added.target_node.name == "Bruno", f"{added}")
    return str(added.task_id)


def set_ontology() -> str:
    from pydantic import Field
    from zep_cloud.external_clients.ontology import EntityModel, EntityText

    class Pet(EntityModel):
        """An animal someone keeps."""

        species: EntityText = Field(description="cat, dog, ...", default=None)

    client.graph.set_ontology(entities={"Pet": Pet}, user_ids=[ALICE])
    found = client.graph.list_entity_types(user_id=ALICE)
    names = [t.name for t in found.entity_types or []]
    check(names == ["Pet"], f"{found}")
    return str(names)


def thread_delete() -> str:
    client.thread.delete(THREAD)
    try:
        client.thread.get(THREAD)
    except NotFoundError:
        return "404 after delete"
    raise AssertionError("thread still there")


def graph_delete() -> str:
    client.graph.delete(KB)
    try:
        client.graph.get(KB)
    except NotFoundError:
        return "404 after delete"
    raise AssertionError("graph still there")


def user_delete() -> str:
    client.user.delete(ALICE)
    try:
        client.user.get(ALICE)
    except NotFoundError:
        return "404 after delete"
    raise AssertionError("user still there")


SCENARIO: list[tuple[str, Callable[[], Any]]] = [
    ("user.add", add_user),
    ("user.get", get_user),
    ("thread.create", create_thread),
    ("thread.add_messages", add_messages),
    ("task.get", task_done),
    ("thread.get (processed)", messages_processed),
    ("thread.get lastn", last_messages),
    ("thread.get_user_context", user_context),
    ("graph.add text", graph_add_text),
    ("graph.add json", graph_add_json),
    ("task.get (graph.add)", graph_tasks_done),
    ("graph.search edges", edge_search),
    ("graph.search nodes", node_search),
    ("graph.search episodes", episode_search),
    ("user.get_threads", user_threads),
    ("thread.list_all", list_threads),
    ("user.get_node", user_node),
    ("graph.create", graph_create),
    ("graph.get", graph_get),
    ("graph.list_all", graph_list),
    ("graph.add to graph_id", graph_add_to_graph),
    ("graph.edge.get_by_user_id", edges_of_user),
    ("graph.node.get_by_user_id", nodes_of_user),
    ("graph.node.get_by_graph_id", nodes_of_graph),
    ("graph.episode.get_by_user_id", episodes_of_user),
    ("graph.edge.get", edge_get),
    ("graph.node.get", node_get),
    ("graph.node.get_edges", node_edges),
    ("graph.episode.get", episode_get),
    ("graph.episode.get_nodes_and_edges", episode_mentions),
    ("thread.get_summary", thread_summary),
    ("thread.message.update", message_update),
    ("graph.episode.list_by_user_id", episode_list),
    ("graph.search observations", observation_search),
    ("user.warm", user_warm),
    ("graph.add_fact_triple", fact_triple),
    ("graph.set_ontology + list_entity_types", set_ontology),
    ("thread.delete", thread_delete),
    ("graph.delete", graph_delete),
    ("user.delete", user_delete),
]

if __name__ == "__main__":
    for name, fn in SCENARIO:
        call(name, fn)
