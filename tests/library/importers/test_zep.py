"""Import from a Zep v4 server: a second graphrecall server (a real one, on loopback) is
the source, filled through the zep-cloud SDK; the destination is a fresh database. Lists
are read two items a page, so every cursor is followed."""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from zep_cloud import AddMessage, EdgeInput, EdgeNodeRef, NodeInput, Zep

from graphrecall import GraphRecall
from graphrecall.cli import main
from graphrecall.library.importers import zep_source
from graphrecall.library.importers.once import instant
from graphrecall.library.importers.zep import import_from_zep
from graphrecall.library.transfer import Imported
from tests.conftest import API_KEY, Server, _free_port, wait_for_task

CHAT = [
    ("user", "Alice", "I moved to Lisbon in March to work at Nordlicht.", "2025-03-02T09:00:00Z"),
    ("assistant", "Helper", "How do you like Lisbon so far?", "2025-03-02T09:00:05Z"),
    (
        "user",
        "Alice",
        "I love it; my brother Tomas lives nearby in Sintra.",
        "2025-03-02T09:01:00Z",
    ),
    ("assistant", "Helper", "Sintra is close, you can visit often.", "2025-03-02T09:01:05Z"),
    ("user", "Alice", "Yes, we meet every Sunday for lunch.", "2025-03-02T09:02:00Z"),
]
TEA = "Alice's favourite tea is genmaicha."
ROSTER = json.dumps({"employee": "Alice", "team": "Atlas", "role": "data engineer"})


def fill(zep: Zep) -> dict[str, Any]:
    """Users with threads and episodes, a standalone graph with hand-made facts."""
    alice = zep.user.create(
        user_id="alice", first_name="Alice", last_name="Moreau", email="alice@example.com"
    )
    chat = zep.thread.create(user_uuid=alice.uuid_)
    messages = [AddMessage(role=r, name=n, content=c, reference_time=t) for r, n, c, t in CHAT]
    zep.thread.add_messages(chat.uuid_, messages=messages)
    other = zep.thread.create(user_uuid=alice.uuid_)
    zep.thread.add_messages(other.uuid_, messages=[AddMessage(role="user", content="Hello!")])
    zep.graph.episode.add(alice.graph_uuid, data=TEA, reference_time="2025-01-10T08:00:00Z")
    zep.graph.episode.add(alice.graph_uuid, data=ROSTER, type="json")
    bob = zep.user.create(first_name="Bob")  # no user_id
    zep.graph.episode.add(bob.graph_uuid, data="Bob repairs vintage bicycles in Ghent.")
    kb = zep.graph.create(name="kb", description="team knowledge")
    zep.graph.episode.add(kb.uuid_, data="The Atlas team ships on Thursdays.")
    nodes = zep.graph.node.add(
        kb.uuid_, nodes=[NodeInput(name="Atlas"), NodeInput(name="Orion"), NodeInput(name="Vega")]
    )
    assert wait_for_task(zep, nodes.task.uuid_) == "succeeded"
    uuid = {n.name: n.uuid_ for n in nodes.nodes}
    edge = EdgeInput(
        fact="Orion depends on Atlas",
        fact_name="DEPENDS_ON",
        source_node=EdgeNodeRef(uuid_=uuid["Orion"]),
        target_node=EdgeNodeRef(uuid_=uuid["Atlas"]),
    )
    assert wait_for_task(zep, zep.graph.edge.add(kb.uuid_, edges=[edge]).task.uuid_) in (
        "succeeded",
        "partial",
    )
    return {"alice": alice, "bob": bob, "kb": kb, "threads": [chat, other]}


@pytest.fixture(scope="module")
def source(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Server, Any]]:
    """One source server for the module (a start takes long on a busy machine); the
    imports only read it."""
    db = tmp_path_factory.mktemp("zep-source") / "source.db"
    server = Server(db, _free_port(), API_KEY)
    try:
        patient_start(server)
        yield server, fill(server.client())
    finally:
        server.stop()


def patient_start(server: Server, more: float = 180) -> None:
    """``server.start()``, waiting ``more`` seconds past its own minute: on a machine
    shared with training runs a start can take longer (90 s measured)."""
    try:
        server.start()
    except RuntimeError:
        if server.process is None or server.process.poll() is not None:
            raise
        deadline = time.monotonic() + more
        while time.monotonic() < deadline:
            try:
                if httpx.get(f"http://127.0.0.1:{server.port}/healthz", timeout=1).is_success:
                    return
            except httpx.HTTPError:
                time.sleep(0.5)
        raise


def copy(gr: GraphRecall, server: Server, steps: int | None = None) -> Imported:
    """One import run, two items a page; ``steps``: stop after that many (a cut run)."""
    last = Imported()
    with zep_source.ZepSource(server.base_url, API_KEY, page_size=2) as reader:
        for n, running in enumerate(import_from_zep(gr, reader), start=1):
            last = running
            if steps is not None and n >= steps:
                break
    return last


def messages(gr: GraphRecall, thread_uuid: str) -> list[tuple[Any, ...]]:
    found = gr.thread.list_messages(thread_uuid, page_size=100)
    return [(m.role, m.name, m.content, instant(m.reference_time)) for m in found]


def own_episodes(gr: Any, graph: str) -> set[tuple[str, str, str | None]]:
    listed = gr.graph.episode.list(graph, page_size=100)
    return {
        (e.source, e.content, instant(e.reference_time)) for e in listed if e.source != "message"
    }


def test_a_zep_server_round_trips(source: tuple[Server, Any], tmp_path: Path) -> None:
    server, made = source
    zep = server.client()
    with GraphRecall(tmp_path / "dest.db") as gr:
        cut = copy(gr, server, steps=2)  # the plan, the first thread; then cut off
        assert cut.messages == len(CHAT) and cut.threads == 1
        done = copy(gr, server)
        assert done.present == len(CHAT)  # found again, not added twice
        assert (done.threads, done.messages, done.graphs) == (1, 1, 1)
        for task in [*cut.tasks, *done.tasks]:
            assert gr.wait(task, timeout=300).status in ("succeeded", "partial")

        alice = gr.user.lookup(user_id="alice")
        assert (alice.first_name, alice.last_name, alice.email) == (
            "Alice",
            "Moreau",
            "alice@example.com",
        )
        for thread in made["threads"]:
            copied = gr.thread.lookup(thread_id=thread.thread_id)
            assert copied.user_uuid == alice.uuid
            source_messages = zep.thread.list_messages(thread.uuid_, page_size=100)
            assert messages(gr, copied.uuid) == [
                (m.role, m.name, m.content, instant(m.reference_time or m.created_at))
                for m in source_messages
            ]
        assert messages(gr, gr.thread.lookup(thread_id=made["threads"][0].thread_id).uuid) == [
            (r, n, c, instant(t)) for r, n, c, t in CHAT
        ]
        assert own_episodes(gr, alice.graph_uuid) == own_episodes(zep, made["alice"].graph_uuid)
        assert ("text", TEA, "2025-01-10T08:00:00+00:00") in own_episodes(gr, alice.graph_uuid)
        bob = gr.user.lookup(user_id=made["bob"].uuid_)  # no user_id: its uuid keeps it apart
        assert bob.first_name == "Bob"
        assert own_episodes(gr, bob.graph_uuid) == own_episodes(zep, made["bob"].graph_uuid)
        kb = gr.graph.lookup(graph_id=made["kb"].graph_id or made["kb"].uuid_)
        assert (kb.name, kb.description) == ("kb", "team knowledge")
        assert own_episodes(gr, kb.uuid) == own_episodes(zep, made["kb"].uuid_)
        facts = {e.fact for e in gr.graph.edge.list(kb.uuid, page_size=100)}
        assert "Orion depends on Atlas" in facts  # hand-made: copied as it is
        assert "Vega" in {n.name for n in gr.graph.node.list(kb.uuid, page_size=100)}

        # The destination derives the graph from the copied messages with its own models.
        extracted = [e for e in gr.graph.edge.list(alice.graph_uuid, page_size=100)]
        assert any(e.episode_uuids and "Lisbon" in e.fact for e in extracted), extracted
        before = gr.stats()["counts"]

        again = copy(gr, server)
        added = (again.threads, again.messages, again.episodes, again.edges, again.nodes)
        assert added == (0, 0, 0, 0, 0) and again.graphs == 0
        assert again.present == len(CHAT) + 1 + 2 + 1 + 1 + 1  # messages, episodes, a fact
        assert gr.stats()["counts"] == before


def test_the_cli_copies_and_names_bad_sources(
    source: tuple[Server, Any],
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    server, _ = source
    db = str(tmp_path / "dest.db")

    def run(*args: str) -> tuple[int, str, str]:
        code = main(["--db", db, "import", *args, "--no-wait"])
        out, err = capsys.readouterr()
        return code, out, err

    monkeypatch.setenv("ZEP_API_KEY", API_KEY)  # the key from the environment
    code, out, _ = run("--from-zep", server.base_url)
    assert code == 0 and f"added {len(CHAT) + 1} message(s) in 2 thread(s)" in out, out
    assert "4 episode(s), 1 fact(s)" in out and "1 graph(s) made" in out
    code, out, _ = run("--from-zep", server.base_url)
    assert code == 0 and "added 0 message(s) in 0 thread(s), 0 episode(s), 0 fact(s)" in out
    assert f"{len(CHAT) + 1 + 4 + 1} message(s) or episode(s) already there" in out

    monkeypatch.delenv("ZEP_API_KEY")
    code, _, err = run("--from-zep", server.base_url)
    assert code == 2 and "ZEP_API_KEY" in err
    for args, problem in [
        (("--zep-api-key", "wrong"), "refused the API key"),
        (("--zep-api-key", API_KEY, "--from-zep", f"{server.base_url}/nope"), "is not found"),
        (
            ("--zep-api-key", API_KEY, "--from-zep", f"http://127.0.0.1:{_free_port()}/api/v4"),
            "cannot reach",
        ),
    ]:
        where = () if "--from-zep" in args else ("--from-zep", server.base_url)
        code, _, err = run(*where, *args)
        assert code == 2 and problem in err and len(err.strip().splitlines()) == 1, err
