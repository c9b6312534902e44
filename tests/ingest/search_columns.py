"""What episodes and nodes are searched and sorted by, read from a database and computed
from scratch from its records, to compare the two."""

from __future__ import annotations

import sqlite3

from graphrecall.domain.models import Edge, Episode
from graphrecall.graph_model.degree import degrees
from graphrecall.graph_model.indexed_text import facts_text, thread_texts

Texts = tuple[str | None, str | None, str | None]  # context, facts, replies


def stored_columns(conn: sqlite3.Connection) -> tuple[dict[str, Texts], dict[str, int]]:
    """Every episode's (search_context, search_facts, search_replies), every node's degree."""
    episodes = {
        uuid: (context, facts, replies)
        for uuid, context, facts, replies in conn.execute(
            "SELECT uuid, search_context, search_facts, search_replies FROM episodes"
        )
    }
    nodes = {uuid: int(degree) for uuid, degree in conn.execute("SELECT uuid, degree FROM nodes")}
    return episodes, nodes


def expected_columns(conn: sqlite3.Connection) -> tuple[dict[str, Texts], dict[str, int]]:
    """The same, computed from the episodes, edges and links alone."""
    episodes = [
        Episode(
            uuid=uuid,
            graph_uuid=graph,
            content=content,
            role_name=role_name,
            thread_uuid=thread,
            created_at=created_at,
            reference_time=created_at,
        )
        for uuid, graph, content, role_name, thread, created_at in conn.execute(
            "SELECT uuid, graph_uuid, content, role_name, thread_uuid, created_at FROM episodes"
        )
    ]
    edges = [
        Edge(
            uuid=uuid,
            graph_uuid=graph,
            name="R",
            fact=fact,
            source_node_uuid=source,
            target_node_uuid=target,
            created_at=created_at,
            updated_at=created_at,
            expired_at=expired_at,
        )
        for uuid, graph, fact, source, target, created_at, expired_at in conn.execute(
            "SELECT uuid, graph_uuid, fact, source_node_uuid, target_node_uuid, created_at,"
            " expired_at FROM edges"
        )
    ]
    by_key = {(e.graph_uuid, e.uuid): e for e in edges}
    linked: dict[str, list[Edge]] = {}
    graph_of = {e.uuid: e.graph_uuid for e in episodes}
    for edge_uuid, episode_uuid in conn.execute(
        "SELECT uuid, episode_uuid FROM links WHERE kind = 'edges'"
    ):
        edge = by_key.get((graph_of.get(episode_uuid, ""), edge_uuid))
        if edge is not None:
            linked.setdefault(episode_uuid, []).append(edge)
    threads: dict[tuple[str, str], list[Episode]] = {}
    for e in episodes:
        if e.thread_uuid is not None:
            threads.setdefault((e.graph_uuid, e.thread_uuid), []).append(e)
    texts: dict[str, dict[str, str | None]] = {}
    for messages in threads.values():
        texts |= thread_texts(messages, from_start=True, to_end=True)
    expected = {
        e.uuid: (
            texts.get(e.uuid, {}).get("search_context"),
            facts_text(linked.get(e.uuid, [])),
            texts.get(e.uuid, {}).get("search_replies"),
        )
        for e in episodes
    }
    counted = degrees(edges)
    nodes = {
        uuid: counted[(graph, uuid)]
        for uuid, graph in conn.execute("SELECT uuid, graph_uuid FROM nodes")
    }
    return expected, nodes
