"""``Maintenance.mark_erasure`` / ``erase`` on every backend: what a delete marked is
erased from the files, once; a mark a crash left behind is erased by the next open."""

from __future__ import annotations

import subprocess
import sys
import textwrap
import uuid
from pathlib import Path

import psycopg

from graphrecall.domain.models import Edge
from graphrecall.store import Store, open_store
from tests import pg_server

STAMP = "2026-01-01T00:00:00.000000Z"


def _edge(fact: str, graph: str = "g") -> Edge:
    return Edge(
        uuid=str(uuid.uuid4()),
        graph_uuid=graph,
        name="RELATES_TO",
        fact=fact,
        source_node_uuid="a",
        target_node_uuid="b",
        created_at=STAMP,
        updated_at=STAMP,
    )


def _files(store_url: str) -> list[Path]:
    """The files a store wrote (SQLite), or every relation file of the server."""
    if store_url.startswith("postgresql"):
        with psycopg.connect(pg_server.server_url(), autocommit=True) as conn:
            conn.execute("CHECKPOINT")
            row = conn.execute("SHOW data_directory").fetchone()
        assert row is not None
        return [p for p in (Path(row[0]) / "base").rglob("*") if p.is_file()]
    db = Path(store_url.removeprefix("sqlite:///"))
    return [p for p in db.parent.rglob("*") if p.is_file()]


def _copies(store_url: str, word: str) -> int:
    found = 0
    for path in _files(store_url):
        try:
            found += path.read_bytes().count(word.encode())
        except (FileNotFoundError, PermissionError):
            continue
    return found


def test_erase_removes_a_deleted_rows_text_and_keeps_the_rest(store: Store, store_url: str) -> None:
    gone, kept = f"qzgone{uuid.uuid4().hex[:10]}7", f"qzkept{uuid.uuid4().hex[:10]}7"
    doomed, other = _edge(f"the {gone} contract"), _edge(f"the {kept} contract")
    with store.transaction():
        store.insert([doomed, other])
    assert store.text_search(Edge, {"graph_uuid": "g"}, [gone], limit=5)
    assert _copies(store_url, gone) and _copies(store_url, kept)
    with store.transaction():
        store.delete(Edge, {"graph_uuid": "g", "uuid": doomed.uuid})
        store.maintenance.mark_erasure(["edges"])
    receipt = store.maintenance.erase()
    assert receipt["tables"] == ["edges"] and receipt["erased_at"]
    assert _copies(store_url, gone) == 0
    assert _copies(store_url, kept)
    assert [u for u, _ in store.text_search(Edge, {"graph_uuid": "g"}, [kept], limit=5)] == [
        other.uuid
    ]
    assert store.maintenance.erase()["tables"] == []  # erased once


def test_a_mark_left_by_a_crash_is_erased_when_the_store_opens(store_url: str) -> None:
    word = f"qzcrash{uuid.uuid4().hex[:10]}7"
    # Another process deletes and marks, then dies before it erases (no close either).
    script = textwrap.dedent(
        f"""
        import os
        from graphrecall.store import open_store
        from tests.store.conformance.test_erasure import _edge
        s = open_store({store_url!r})
        e = _edge("the {word} contract")
        with s.transaction():
            s.insert([e])
        with s.transaction():
            s.delete(type(e), {{"graph_uuid": "g", "uuid": e.uuid}})
            s.maintenance.mark_erasure(["edges"])
        os._exit(0)
        """
    )
    subprocess.run([sys.executable, "-c", script], check=True, timeout=120)
    assert _copies(store_url, word)  # the crash left the text on disk
    store = open_store(store_url)
    try:
        assert _copies(store_url, word) == 0
        assert store.maintenance.erase()["tables"] == []  # the mark was used up
    finally:
        store.close()
