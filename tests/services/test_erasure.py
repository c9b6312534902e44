"""Deletion that erases (services/erasure.py): each kind of delete, through the real SDK
and JSON-RPC, leaves no copy of its text in any file graphrecall wrote, while the server
runs (the erasure is done before the delete answers) and after a clean stop; nothing
else is lost. SQLite: the database, its WAL and shared memory, the saved term-index
files. PostgreSQL: every heap and index file under the data directory's ``base/``, after
a CHECKPOINT (what its WAL keeps is documented in docs/security.md, not scanned).
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
import psycopg
import pytest
from zep_cloud import AddMessage, BatchItemInput, EdgeInput, EdgeNodeRef, NodeInput, Zep

from tests import pg_server
from tests.conftest import API_KEY, Server, _free_port, wait_for_task

# Slow: server processes on each backend, stopped and started again (the files after a
# clean stop are the point).
pytestmark = pytest.mark.slow

SPACE = "erasespace01"


def _canary(kind: str) -> str:
    # Lower-case letters then digits, ending in a digit: the tokenizer and the Porter
    # stemmer leave it whole, so the index keeps exactly these bytes.
    return f"qz{kind}{uuid.uuid4().hex[:12]}7"


@dataclass
class Backend:
    server: Server
    db: Path | str
    data_dir: Path | None = None
    found: dict[str, list[str]] = field(default_factory=dict)

    def files(self) -> list[Path]:
        """Every file the store writes (SQLite), or every relation file (PostgreSQL)."""
        if self.data_dir is not None:
            with psycopg.connect(pg_server.server_url(), autocommit=True) as conn:
                conn.execute("CHECKPOINT")
            return [p for p in (self.data_dir / "base").rglob("*") if p.is_file()]
        db = Path(self.db)
        named = [db, Path(f"{db}-wal"), Path(f"{db}-shm"), Path(f"{db}-journal")]
        saved = Path(f"{db}-termindex")
        return [p for p in named if p.exists()] + (
            sorted(p for p in saved.iterdir() if p.is_file()) if saved.exists() else []
        )

    def copies(self, word: str) -> dict[str, int]:
        """The files holding ``word`` (as written, or capitalised), and how often."""
        needles = {word.encode(), word.capitalize().encode()}
        out: dict[str, int] = {}
        for path in self.files():
            try:
                data = path.read_bytes()
            except (FileNotFoundError, PermissionError):
                continue
            n = sum(data.count(needle) for needle in needles)
            if n:
                out[self._name(path)] = n
        return out

    def _name(self, path: Path) -> str:
        """A relation file as its relation's name (a failure says which table kept it)."""
        if self.data_dir is None:
            return path.name
        node = path.name.split(".")[0].split("_")[0]
        with psycopg.connect(pg_server.server_url(), autocommit=True) as conn:
            row = conn.execute(
                "SELECT relname FROM pg_class WHERE relfilenode = %s", [int(node)]
            ).fetchone()
        return f"{row[0] if row else '?'} ({path.name})"


def rpc(server: Server, method: str, params: dict[str, Any]) -> Any:
    body = {"jsonrpc": "2.0", "method": method, "id": 1, "params": params}
    response = httpx.post(
        f"http://127.0.0.1:{server.port}/api/v1/memory/rpc",
        json=body,
        headers={"Authorization": f"Bearer {server.api_key}", "X-Me-Space": SPACE},
        timeout=60,
    )
    assert response.status_code == 200, response.text
    return response.json()


@pytest.fixture(scope="module", params=["sqlite", "postgresql"])
def backend(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Backend]:
    db: Path | str = tmp_path_factory.mktemp("erase") / "graphrecall.db"
    data_dir = None
    if request.param == "postgresql":
        db = pg_server.with_schema(pg_server.server_url(), f"e{uuid.uuid4().hex}")
        with psycopg.connect(pg_server.server_url(), autocommit=True) as conn:
            row = conn.execute("SHOW data_directory").fetchone()
        assert row is not None
        data_dir = Path(row[0])
    srv = Server(db, _free_port(), API_KEY, {"GRAPHRECALL_SPACE": SPACE}).start()
    yield Backend(srv, db, data_dir)
    srv.stop()


@dataclass
class World:
    zep: Zep
    words: dict[str, str]  # kind -> its canary
    ids: dict[str, str]
    keep_user: str
    keep_user_graph: str
    keep_graph: str


def _says(zep: Zep, user_id: str, name: str, lines: list[str]) -> tuple[str, str, str]:
    """A user whose thread holds ``lines``: (user, its graph, the thread)."""
    user = zep.user.create(user_id=user_id, first_name=name)
    thread = zep.thread.create(user_uuid=user.uuid_)
    added = zep.thread.add_messages(
        thread.uuid_, messages=[AddMessage(role="user", name=name, content=c) for c in lines]
    )
    assert added.task is not None
    assert wait_for_task(zep, added.task.uuid_) == "succeeded"
    return user.uuid_, str(user.graph_uuid), thread.uuid_


def _cli(server: Server, *args: str) -> str:
    return server.cli(*args)


@pytest.fixture(scope="module")
def world(backend: Backend) -> World:
    # A project with a webhook endpoint nobody answers: its events (which name the user's
    # id) stay queued in the database, to be erased with the user or graph they are about.
    _cli(backend.server, "webhooks", "set", "http://127.0.0.1:9/hook", "--project", "erasure")
    key = _cli(backend.server, "keys", "create", "--project", "erasure")
    zep = backend.server.client(api_key=key)
    kinds = ("user", "graph", "episode", "edge", "node", "memory", "batch", "keep")
    words = {k: _canary(k) for k in kinds}
    ids: dict[str, str] = {}
    w = words
    # Kept throughout: a user and a graph whose words must stay found.
    keep_user, keep_user_graph, _ = _says(
        zep, "keeper", "Keeper", [f"My friend {w['keep'].capitalize()} works at Globex in Oslo."]
    )
    # A user whose name and messages (and so facts, nodes, summaries) carry the word.
    ids["user"], _, _ = _says(
        zep,
        f"u{w['user']}",
        w["user"].capitalize(),
        [
            f"My friend {w['user'].capitalize()} works at Initech in Berlin.",
            f"I told {w['user'].capitalize()} the code word {w['user']} yesterday.",
        ],
    )
    # A thread (a v4 thread holds no text of its own; its messages outlive it, as in Zep).
    _, _, ids["thread"] = _says(zep, "threaded", "Theo", ["Theo likes tea."])
    # A graph named and described by its word, holding an episode with it.
    graph = zep.graph.create(name=f"graph {w['graph']}", description=f"about {w['graph']}")
    added = zep.graph.episode.add(graph.uuid_, data=f"{w['graph'].capitalize()} lives in Rome.")
    assert wait_for_task(zep, added.task.uuid_) == "succeeded"
    ids["graph"] = graph.uuid_
    # One graph kept, holding an episode, an edge and a node each deleted on their own.
    kept = zep.graph.create(name="kept graph")
    keep_graph = kept.uuid_
    for text in (
        f"Margo keeps the {w['keep']} ledger in Paris.",
        f"Margo said the {w['episode']} plan starts in May.",
    ):
        added = zep.graph.episode.add(keep_graph, data=text)
        assert wait_for_task(zep, added.task.uuid_) == "succeeded"
        ids["episode"] = added.episode.uuid_  # the second one
    nodes = zep.graph.node.add(
        keep_graph, nodes=[NodeInput(name="Ada"), NodeInput(name=w["node"].capitalize())]
    )
    assert wait_for_task(zep, nodes.task.uuid_) == "succeeded"
    by_name = {n.name: n.uuid_ for n in nodes.nodes}
    edges = zep.graph.edge.add(
        keep_graph,
        edges=[
            EdgeInput(
                fact=f"Ada signed the {w['edge']} contract",
                fact_name="SIGNED",
                source_node=EdgeNodeRef(uuid_=by_name["Ada"]),
                target_node=EdgeNodeRef(uuid_=by_name[w["node"].capitalize()]),
            ),
            EdgeInput(
                fact=f"{w['node'].capitalize()} advises Ada",
                fact_name="ADVISES",
                source_node=EdgeNodeRef(uuid_=by_name[w["node"].capitalize()]),
                target_node=EdgeNodeRef(uuid_=by_name["Ada"]),
            ),
        ],
    )
    assert wait_for_task(zep, edges.task.uuid_) == "succeeded"
    ids["edge"] = next(e.uuid_ for e in edges.edges if w["edge"] in e.fact)
    ids["node"] = by_name[w["node"].capitalize()]
    # A memory with a history: created, then rewritten.
    made = rpc(
        backend.server,
        "memory.create",
        {"content": f"the {w['memory']} door code", "tree": "/notes", "name": "door"},
    )["result"]
    changed = rpc(
        backend.server,
        "memory.update",
        {"id": made["id"], "versionHash": made["versionHash"], "content": f"{w['memory']} v2"},
    )["result"]
    assert changed["version"] == 2
    ids["memory"] = made["id"]
    rpc(backend.server, "memory.create", {"content": f"the {w['keep']} note", "tree": "/notes"})
    # A draft batch whose item carries the word.
    batch = zep.batch.create()
    zep.batch.add_items(
        batch.uuid_,
        items=[
            BatchItemInput(type="graph_episode", graph_uuid=keep_graph, data=f"{w['batch']} notes")
        ],
    )
    ids["batch"] = batch.uuid_
    # Every word is on disk before its delete (else the scans below prove nothing).
    for kind, word in words.items():
        assert backend.copies(word), f"{kind}: {word} never reached the files"
    assert not any(word in str(ids) for word in words.values())
    return World(zep, words, ids, keep_user, keep_user_graph, keep_graph)


def _delete(world: World, backend: Backend, kind: str) -> dict[str, Any] | None:
    """Delete the kind's record; the receipt."""
    zep, i = world.zep, world.ids
    if kind == "memory":
        out = rpc(backend.server, "memory.delete", {"id": i["memory"]})
        assert out["result"] == {"deleted": True}
        return None
    if kind == "batch":
        zep.batch.delete(i["batch"])
        return None
    if kind == "user":
        task = zep.user.delete(i["user"]).task
    elif kind == "thread":
        task = zep.thread.delete(i["thread"]).task
    elif kind == "graph":
        task = zep.graph.delete(i["graph"]).task
    elif kind == "episode":
        task = zep.graph.episode.delete(world.keep_graph, i["episode"]).task
    elif kind == "edge":
        task = zep.graph.edge.delete(world.keep_graph, i["edge"]).task
    else:
        task = zep.graph.node.delete(world.keep_graph, i["node"]).task
    assert task is not None
    done = zep.task.get(task.uuid_)
    assert done.status == "succeeded"
    assert done.result is not None
    return dict(done.result.model_dump()["erasure"])


KINDS = ("memory", "batch", "edge", "episode", "node", "thread", "graph", "user")


def test_each_delete_erases_its_words_while_running(world: World, backend: Backend) -> None:
    for kind in KINDS:
        word = world.words.get(kind, "")
        receipt = _delete(world, backend, kind)
        # Erased before the delete answered: no waiting here.
        assert not word or backend.copies(word) == {}, f"{kind} delete left {word}"
        if receipt is not None:
            assert receipt["deleted"]["uuid"] == world.ids[kind]
            assert receipt["erased_at"] and receipt["tables"]
            assert not word or word not in str(receipt)
    # The memory's receipt is a succeeded task of its own (names ids only).
    # (in the project of the space's key, the server's own)
    listed = backend.server.client().task.list(type="memory.delete")
    memory_tasks = [t for t in listed if t.status == "succeeded"]
    assert memory_tasks and world.ids["memory"] in str(memory_tasks[0].result)


def test_a_deleted_memory_has_no_history_to_revert(world: World, backend: Backend) -> None:
    memory = world.ids["memory"]
    history = rpc(backend.server, "memory.history", {"memoryId": memory})["result"]
    assert history["events"] == []
    reverted = rpc(backend.server, "memory.revert", {"id": memory, "version": 1})
    assert reverted["error"]["data"]["code"] == "NOT_FOUND", reverted


def test_nothing_else_was_lost(world: World, backend: Backend) -> None:
    zep, keep = world.zep, world.words["keep"]
    assert zep.user.get(world.keep_user).user_id == "keeper"
    found = zep.graph.search_episodes(world.keep_user_graph, query=keep).items
    assert found and keep in found[0].content.lower()
    kept = zep.graph.search_episodes(world.keep_graph, query=f"{keep} ledger").items
    assert kept and keep in kept[0].content
    remaining = list(zep.graph.node.list(world.keep_graph))
    assert "Ada" in {n.name for n in remaining}
    notes = rpc(backend.server, "memory.search", {"fulltext": keep})["result"]
    assert notes["results"] and keep in notes["results"][0]["content"]
    assert backend.copies(keep)  # still on disk


def test_no_copy_after_a_clean_stop(world: World, backend: Backend) -> None:
    backend.server.stop()
    try:
        for kind, word in world.words.items():
            if kind != "keep":
                assert backend.copies(word) == {}, kind
        if backend.data_dir is None:  # a clean stop leaves no WAL behind
            wal = Path(f"{backend.db}-wal")
            assert not wal.exists() or wal.stat().st_size == 0
    finally:
        backend.server.start()


@pytest.mark.parametrize("kind", ["sqlite", "postgresql"])
def test_a_retention_window_keeps_history_then_erases_it(kind: str, tmp_path: Path) -> None:
    """GRAPHRECALL_DELETED_HISTORY_SECONDS: revert can undelete within the window; after
    it, an idle worker erases the history (bound: the window + IDLE_JOB_SECONDS + a poll)."""
    db: Path | str = tmp_path / "window.db"
    data_dir = None
    if kind == "postgresql":
        db = pg_server.with_schema(pg_server.server_url(), f"w{uuid.uuid4().hex}")
        with psycopg.connect(pg_server.server_url(), autocommit=True) as conn:
            row = conn.execute("SHOW data_directory").fetchone()
        assert row is not None
        data_dir = Path(row[0])
    env = {"GRAPHRECALL_SPACE": SPACE, "GRAPHRECALL_DELETED_HISTORY_SECONDS": "3"}
    srv = Server(db, _free_port(), API_KEY, env).start()
    backend = Backend(srv, db, data_dir)
    try:
        word = _canary("window")
        made = rpc(srv, "memory.create", {"content": f"{word} one", "tree": "/w", "name": "a"})
        memory = made["result"]["id"]
        rpc(srv, "memory.delete", {"id": memory})
        back = rpc(srv, "memory.revert", {"id": memory, "version": 1})["result"]
        assert back["content"] == f"{word} one"  # undeleted within the window
        rpc(srv, "memory.delete", {"id": memory})
        ops = [
            e["operation"]
            for e in rpc(srv, "memory.history", {"memoryId": memory})["result"]["events"]
        ]
        assert "delete" in ops
        deadline = time.monotonic() + 3 + 10 + 20
        while time.monotonic() < deadline:
            events = rpc(srv, "memory.history", {"memoryId": memory})["result"]["events"]
            if not events:
                break
            time.sleep(0.5)
        assert events == [], "the history outlived its window"
        assert backend.copies(word) == {}
        again = rpc(srv, "memory.revert", {"id": memory, "version": 1})
        assert again["error"]["data"]["code"] == "NOT_FOUND"
    finally:
        srv.stop()
