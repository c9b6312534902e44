"""Through the real SDK, every writer of messages, episodes, edges and nodes (the services
and the ingestion pipeline) leaves what records are searched and sorted by as computing it
from scratch gives; none of it is part of the API."""

from __future__ import annotations

import sqlite3

from zep_cloud import AddMessage, EdgeInput, EdgeNodeRef, Zep

from tests.conftest import wait_for_task
from tests.ingest.search_columns import expected_columns, stored_columns
from tests.inprocess import InProcess


def _columns_of(server: InProcess, graph: str) -> tuple[dict[str, object], dict[str, object]]:
    """(stored, expected) search columns of the graph's episodes and nodes."""
    conn = sqlite3.connect(f"file:{server.db}?mode=ro", uri=True)
    try:
        episodes = {
            u for (u,) in conn.execute("SELECT uuid FROM episodes WHERE graph_uuid = ?", [graph])
        }
        nodes = {u for (u,) in conn.execute("SELECT uuid FROM nodes WHERE graph_uuid = ?", [graph])}
        stored, expected = stored_columns(conn), expected_columns(conn)
    finally:
        conn.close()

    def mine(columns: tuple[dict[str, object], dict[str, object]]) -> dict[str, object]:
        return {
            **{u: v for u, v in columns[0].items() if u in episodes},
            **{u: v for u, v in columns[1].items() if u in nodes},
        }

    return mine(stored), mine(expected)


def test_every_writer_keeps_the_search_columns(zep: Zep, server: InProcess) -> None:
    user = zep.user.create(first_name="Alice", last_name="Moreau")
    graph = user.graph_uuid
    assert graph
    thread = zep.thread.create(user_uuid=user.uuid_)
    lines = [
        ("Alice", "I live in Boston and I work at Acme."),
        ("Bob", "How long have you been there?"),
        ("Alice", "Five years. I moved to Lisbon last Tuesday."),  # invalidates Boston
        ("Bob", "My friend Tom loves jazz."),
        ("Alice", "I adopted a dog named Rex."),
    ]
    added = zep.thread.add_messages(
        thread.uuid_,
        messages=[
            AddMessage(role="user", name=who, content=text, reference_time="2024-06-13T09:00:00Z")
            for who, text in lines[:3]
        ],
    )
    later = zep.thread.add_messages(
        thread.uuid_,
        messages=[AddMessage(role="user", name=who, content=text) for who, text in lines[3:]],
    )
    for task in (added.task, later.task):
        assert task is not None and wait_for_task(zep, task.uuid_) == "succeeded"
    episode = zep.graph.episode.add(graph_uuid=graph, data="Alice plays the violin.")
    assert episode.task is not None and wait_for_task(zep, episode.task.uuid_) == "succeeded"
    edges = zep.graph.edge.add(
        graph,
        edges=[
            EdgeInput(
                fact=f"Tom {verb.lower()} {target}",
                fact_name=verb.upper(),
                source_node=EdgeNodeRef(name="Tom"),
                target_node=EdgeNodeRef(name=target),
            )
            for verb, target in (("knows", "Rex the dog"), ("visits", "Porto"))
        ],
    )
    assert edges.task is not None and wait_for_task(zep, edges.task.uuid_) == "succeeded"
    stored, expected = _columns_of(server, graph)
    assert stored == expected
    said = [v for v in stored.values() if isinstance(v, tuple)]
    assert sum(1 for v in said if v[0]) >= 4 and sum(1 for v in said if v[2]) >= 4
    assert any(v[1] for v in said)  # the pipeline linked facts to their messages
    assert any(isinstance(v, int) and v > 2 for v in stored.values())

    # A fact of a message rewritten, a fact deleted, a node deleted with its edges, a
    # message in the middle of the thread deleted.
    facts = list(zep.graph.edge.list(graph))
    cited = next(e for e in facts if e.episode_uuids)
    zep.graph.edge.update(graph, cited.uuid_, fact=f"{cited.fact} (restated)")
    zep.graph.edge.delete(graph, edges.edges[1].uuid_)
    tom = next(n for n in zep.graph.node.list(graph) if n.name == "Tom")
    zep.graph.node.delete(graph, tom.uuid_)
    zep.graph.episode.delete(graph, added.messages[1].uuid_)
    stored, expected = _columns_of(server, graph)
    assert stored == expected
    assert any("(restated)" in (v[1] or "") for v in stored.values() if isinstance(v, tuple))

    # The API shows none of it (a node's degree is the Zep field it always was).
    with server.http("/api/v4") as http:
        raw = http.post(
            f"/graphs/{graph}/episodes/list",
            headers={"Authorization": f"Api-Key {server.api_key}"},
        )
    assert raw.status_code == 200 and "search_" not in raw.text and "Five years" in raw.text
