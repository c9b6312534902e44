"""Seeded data for the explorer's browser tests: a user's graph with typed nodes and dated
facts (one invalidated), a thread whose messages the worker processes, a standalone
graph, and a Memory Engine space with a small tree of memories. Everything is written
through the public APIs (the zep-cloud SDK and the JSON-RPC), as a user would."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import httpx
from zep_cloud import AddMessage, EdgeInput, EdgeNodeRef, NodeInput, Zep

from tests.conftest import Server, wait_for_task

SPACE = "uispace00001"
NODES = {
    "Alice": ("Person", "Alice is a senior engineer who loves mornings."),
    "Bob": ("Person", "Bob is a salesman and Alice's friend."),
    "Acme": ("Organization", "Acme builds rockets."),
    "Globex": ("Organization", "Globex sells software."),
    "Berlin": ("Location", "Berlin is the capital of Germany."),
    "Paris": ("Location", "Paris is the capital of France."),
    "Green tea": ("Food", "A tea made from unoxidised leaves."),
}
FACTS = [
    # (source, name, target, fact, valid_at, invalid_at)
    ("Alice", "WORKS_AT", "Acme", "Alice works at Acme as a senior engineer", "2021-03-01", None),
    ("Alice", "LIVES_IN", "Berlin", "Alice lived in Berlin", "2019-06-01", "2024-04-01"),
    ("Alice", "LIVES_IN", "Paris", "Alice moved to Paris", "2024-04-01", None),
    ("Alice", "LIKES", "Green tea", "Alice drinks green tea every morning", None, None),
    ("Bob", "WORKS_AT", "Globex", "Bob works at Globex in sales", "2022-01-15", None),
    ("Bob", "FRIEND_OF", "Alice", "Bob is a close friend of Alice", None, None),
]
MESSAGES = [
    ("user", "Alice", "I moved to Paris last spring and I still drink green tea every morning."),
    ("assistant", None, "Noted. How is the new job at Acme going?"),
    ("user", "Alice", "Great. Bob from Globex visited me in Paris last week."),
]
MARCH = {"start": "2026-03-01T00:00:00Z", "end": "2026-03-31T00:00:00Z"}
MEMORIES = [
    (
        "/projects/apollo",
        "plan",
        "Apollo launch plan: test the engines in March.",
        {"kind": "plan"},
    ),
    ("/projects/apollo", "risks", "Apollo risk: the supplier of valves is late.", {"kind": "risk"}),
    ("/projects/zephyr", "notes", "Zephyr notes: a wind tunnel booked for May.", {"kind": "note"}),
    ("/people", "alice", "Alice prefers green tea and morning meetings.", {"kind": "person"}),
]


@dataclass
class Seeded:
    user_uuid: str
    graph_uuid: str
    thread_uuid: str
    standalone_graph: str
    nodes: dict[str, str]
    edges: dict[str, str]
    memories: dict[str, str] = field(default_factory=dict)


def _day(day: str | None) -> str | None:
    return f"{day}T00:00:00Z" if day else None


def rpc(server: Server, method: str, params: dict[str, Any]) -> Any:
    response = httpx.post(
        f"http://127.0.0.1:{server.port}/api/v1/memory/rpc",
        json={"jsonrpc": "2.0", "id": 1, "method": method, "params": params},
        headers={"Authorization": f"Bearer {server.api_key}", "X-Me-Space": SPACE},
        timeout=30,
    )
    body = response.json()
    assert "error" not in body, body
    return body["result"]


def seed(server: Server) -> Seeded:
    zep: Zep = server.client()
    user = zep.user.create(user_id="alice", first_name="Alice", last_name="Martin", time_zone="UTC")
    added = zep.graph.node.add(
        user.uuid_,
        nodes=[NodeInput(name=n, label=label, summary=s) for n, (label, s) in NODES.items()],
    )
    node_ids = {n.name: n.uuid_ for n in added.nodes}
    edges = zep.graph.edge.add(
        user.uuid_,
        edges=[
            EdgeInput(
                fact=fact,
                fact_name=name,
                source_node=EdgeNodeRef(uuid_=node_ids[src]),
                target_node=EdgeNodeRef(uuid_=node_ids[dst]),
                valid_at=_day(valid),
                invalid_at=_day(invalid),
            )
            for src, name, dst, fact, valid, invalid in FACTS
        ],
    )
    wait_for_task(zep, added.task.uuid_)
    wait_for_task(zep, edges.task.uuid_)
    thread = zep.thread.create(user_uuid=user.uuid_)
    said = zep.thread.add_messages(
        thread.uuid_,
        messages=[AddMessage(role=role, name=name, content=text) for role, name, text in MESSAGES],
    )
    wait_for_task(zep, said.task.uuid_, timeout=120)
    other = zep.graph.create(name="Rocket research", description="Notes on engines")
    episode = zep.graph.episode.add(
        other.uuid_, type="text", data="Acme tested the Merlin engine in Texas."
    )
    wait_for_task(zep, episode.task.uuid_, timeout=120)
    memories = {
        f"{tree}/{name}": rpc(
            server,
            "memory.create",
            {"content": content, "tree": tree, "name": name, "meta": meta}
            | ({"temporal": MARCH} if name == "plan" else {}),
        )["id"]
        for tree, name, content, meta in MEMORIES
    }
    return Seeded(
        user_uuid=user.uuid_,
        graph_uuid=user.graph_uuid,
        thread_uuid=thread.uuid_,
        standalone_graph=other.uuid_,
        nodes=node_ids,
        edges={e.fact: e.uuid_ for e in edges.edges},
        memories=memories,
    )


def seed_star(server: Server, spokes: int = 10, loners: int = 5) -> str:
    """A standalone graph: a hub with ``spokes`` neighbours, a separate pair, and
    ``loners`` nodes with no facts. Returns its uuid."""
    zep: Zep = server.client()
    graph = zep.graph.create(name="Star")
    names = ["Hub", *(f"Spoke {i}" for i in range(spokes)), "Pair A", "Pair B"]
    names += [f"Loner {i}" for i in range(loners)]
    added = zep.graph.node.add(graph.uuid_, nodes=[NodeInput(name=n) for n in names])
    ids = {n.name: n.uuid_ for n in added.nodes}
    pairs = [("Hub", f"Spoke {i}") for i in range(spokes)] + [("Pair A", "Pair B")]
    edges = zep.graph.edge.add(
        graph.uuid_,
        edges=[
            EdgeInput(
                fact=f"{a} is linked to {b}",
                fact_name="LINKED_TO",
                source_node=EdgeNodeRef(uuid_=ids[a]),
                target_node=EdgeNodeRef(uuid_=ids[b]),
            )
            for a, b in pairs
        ],
    )
    wait_for_task(zep, added.task.uuid_)
    wait_for_task(zep, edges.task.uuid_)
    return graph.uuid_
