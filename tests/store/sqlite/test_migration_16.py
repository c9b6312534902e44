"""Migration 16: the triggers that computed what records are searched by go (writers
compute it now: graph_model/graph_writes.py); a database upgraded from 15 keeps every value they
computed, and its episode index still matches its rows."""

from __future__ import annotations

import re
import sqlite3
from pathlib import Path

from graphrecall.domain.models import Episode
from graphrecall.store import open_store
from graphrecall.store.sqlite.migrations import migrate
from tests.ingest.search_columns import expected_columns, stored_columns

GRAPH = "g-1"
STAMP = "2026-01-01T00:00:00.000000Z"
CHAT = [
    ("Caroline", "Wow, what an amazing family pic! How long have you been married?"),
    ("Melanie", "5 years already! Time flies."),
    ("Caroline", "That is lovely."),
    ("Melanie", "Thanks! We got a rescue dog on Sunday."),
]


def _computing(conn: sqlite3.Connection) -> set[str]:
    """Triggers other than those that copy rows into a full-text index (``{table}_fts_*``)
    or log them (``{table}_rows_*``)."""
    names = [n for (n,) in conn.execute("SELECT name FROM sqlite_master WHERE type = 'trigger'")]
    return {n for n in names if not re.fullmatch(r"[a-z_]+_(fts|rows)_(insert|delete|update)", n)}


def _write_at_15(conn: sqlite3.Connection) -> None:
    """Messages, nodes, edges and links written as a version-15 database had them: its
    triggers fill the search columns and degrees."""
    for i, (who, text) in enumerate(CHAT):
        conn.execute(
            "INSERT INTO episodes (uuid, graph_uuid, content, source, role, role_name,"
            " reference_time, created_at, thread_uuid) VALUES (?,?,?,?,?,?,?,?,?)",
            [f"m{i}", GRAPH, text, "message", "user", who, STAMP, f"{STAMP[:-8]}{i}Z", "t-1"],
        )
    for uuid in ("caroline", "melanie", "dog"):
        conn.execute(
            "INSERT INTO nodes (uuid, graph_uuid, name, labels, created_at, updated_at)"
            " VALUES (?,?,?,?,?,?)",
            [uuid, GRAPH, uuid, '["Entity"]', STAMP, STAMP],
        )
    for uuid, fact, source, target, expired in (
        ("e1", "Melanie has been married for 5 years", "melanie", "caroline", None),
        ("e2", "Melanie adopted a greyhound", "melanie", "dog", None),
        ("e3", "Melanie lives in Boston", "melanie", "melanie", STAMP),
    ):
        conn.execute(
            "INSERT INTO edges (uuid, graph_uuid, name, fact, source_node_uuid,"
            " target_node_uuid, created_at, updated_at, expired_at) VALUES (?,?,?,?,?,?,?,?,?)",
            [uuid, GRAPH, "REL", fact, source, target, STAMP, STAMP, expired],
        )
    for edge, episode in (("e1", "m1"), ("e2", "m3"), ("e3", "m3")):
        conn.execute("INSERT INTO links VALUES ('edges', ?, ?, ?)", [GRAPH, edge, episode])


def test_upgrading_from_15_keeps_every_computed_value(tmp_path: Path) -> None:
    path = tmp_path / "old.sqlite"
    conn = sqlite3.connect(path, isolation_level=None)
    assert migrate(conn, 15) == 15
    assert len(_computing(conn)) == 10
    _write_at_15(conn)
    before = stored_columns(conn)
    episodes, degrees = before
    assert degrees == {"caroline": 1, "melanie": 2, "dog": 1}
    assert episodes["m3"][1] == "Melanie adopted a greyhound\nMelanie lives in Boston"
    assert episodes["m1"][0] and episodes["m1"][2]  # its question, its reply
    assert migrate(conn, 16) == 16
    assert stored_columns(conn) == before == expected_columns(conn)
    assert _computing(conn) == set()
    conn.execute("INSERT INTO episodes_fts(episodes_fts, rank) VALUES ('integrity-check', 1)")
    # Nothing computes in the database any more: a raw write moves no degree.
    conn.execute(
        "INSERT INTO edges (uuid, graph_uuid, name, fact, source_node_uuid, target_node_uuid,"
        " created_at, updated_at) VALUES ('e4', ?, 'REL', 'x', 'dog', 'dog', ?, ?)",
        [GRAPH, STAMP, STAMP],
    )
    assert stored_columns(conn)[1] == degrees
    # nor does a message inserted into the thread fill its own or its neighbours' texts.
    conn.execute(
        "INSERT INTO episodes (uuid, graph_uuid, content, source, role_name, reference_time,"
        " created_at, thread_uuid) VALUES ('m4', ?, 'later', 'message', 'Bob', ?, ?, 't-1')",
        [GRAPH, STAMP, "2026-01-02T00:00:00.000000Z"],
    )
    after = stored_columns(conn)[0]
    assert after["m4"] == (None, None, None) and after["m3"] == episodes["m3"]
    conn.close()
    store = open_store(path)
    try:
        # Found through the columns the old triggers filled: the reply by its question
        # and its fact, the message after by its context, the message by its facts.
        married = [u for u, _ in store.text_search(Episode, {}, ["married"])]
        assert sorted(married) == ["m0", "m1", "m2"]
        assert [u for u, _ in store.text_search(Episode, {}, ["greyhound"])] == ["m3"]
    finally:
        store.close()


def test_the_episode_index_copies_each_search_column_written(tmp_path: Path) -> None:
    store = open_store(tmp_path / "db.sqlite")
    try:
        conn = store.db.conn  # type: ignore[attr-defined]
        conn.execute(
            "INSERT INTO episodes (uuid, graph_uuid, content, source, reference_time,"
            " created_at) VALUES ('m', ?, 'hello', 'text', ?, ?)",
            [GRAPH, STAMP, STAMP],
        )
        for column, word in (
            ("search_context", "zanzibar"),
            ("search_facts", "quokka"),
            ("search_replies", "marimba"),
        ):
            conn.execute(f"UPDATE episodes SET {column} = ? WHERE uuid = 'm'", [word])
            assert [u for u, _ in store.text_search(Episode, {}, [word])] == ["m"]
        conn.execute("INSERT INTO episodes_fts(episodes_fts, rank) VALUES ('integrity-check', 1)")
    finally:
        store.close()
