"""Batches through the SDK: create, add items of every kind, process in the background,
progress and each item's outcome, listing, deleting; the error contract."""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path

import pytest
from zep_cloud import BatchItemInput, Zep
from zep_cloud.errors import BadRequestError, NotFoundError

from tests.api.zep_v4.test_errors import raw
from tests.conftest import Server, wait_for_task
from tests.inprocess import InProcess


def _wait_batch(zep: Zep, batch_uuid: str, timeout: float = 60) -> str:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        status = zep.batch.get(batch_uuid).status
        if status in ("succeeded", "partial", "failed"):
            return str(status)
        time.sleep(0.05)
    raise AssertionError(f"batch {batch_uuid} did not finish in {timeout} s")


def test_a_batch_ingests_episodes_and_messages_in_order(zep: Zep) -> None:
    user = zep.user.create(first_name="Dana")
    thread = zep.thread.create(user_uuid=user.uuid_)
    graph = zep.graph.create(name="batch-docs")
    batch = zep.batch.create(metadata={"source": "import"}, ignore_roles=["assistant"])
    assert batch.status == "draft" and batch.metadata == {"source": "import"}
    assert batch.progress is None and batch.strict_ontology is False

    said = [
        ("user", "I moved to Porto last spring."),
        ("assistant", "Porto is lovely. What do you do there?"),
        ("user", "I teach chemistry at a high school in Porto."),
    ]
    messages = [
        BatchItemInput(
            type="thread_message",
            thread_uuid=thread.uuid_,
            role=role,
            name="Dana" if role == "user" else "Agent",
            content=text,
            reference_time="2024-03-01T10:00:00Z",
        )
        for role, text in said
    ]
    added = zep.batch.add_items(batch.uuid_, items=messages)
    assert [i.sequence_index for i in added.items] == [0, 1, 2]
    assert all(i.status == "pending" and i.thread_uuid == thread.uuid_ for i in added.items)
    assert all(i.user_uuid == user.uuid_ and i.graph_uuid == user.graph_uuid for i in added.items)
    assert all(i.source_uuid == i.episode_uuid for i in added.items)

    more = zep.batch.add_items(
        batch.uuid_,
        items=[
            BatchItemInput(
                type="graph_episode",
                graph_uuid=graph.uuid_,
                data="Acme Corp signed a supply contract with Globex in 2023.",
                document_id="contracts.pdf",
                metadata={"page": 1},
            ),
            BatchItemInput(type="graph_episode", user_uuid=user.uuid_, data="Dana owns a cat."),
            BatchItemInput(
                type="graph_episode", graph_uuid="0190e3c2-0000-7000-8000-000000000000", data="x"
            ),
        ],
    )
    assert [i.sequence_index for i in more.items] == [3, 4]
    assert more.items[1].graph_uuid == user.graph_uuid and more.items[1].user_uuid == user.uuid_
    assert [(r.index, bool(r.reason)) for r in more.rejected_items or []] == [(2, True)]
    # Nothing is ingested while the batch is a draft.
    assert list(zep.thread.list_messages(thread.uuid_)) == []

    result = zep.batch.process(batch.uuid_)
    assert result.batch.status == "queued" and result.task.type == "batch.process"
    assert _wait_batch(zep, batch.uuid_) == "succeeded"
    assert wait_for_task(zep, result.task.uuid_) == "succeeded"
    done = zep.batch.get(batch.uuid_)
    assert done.progress is not None
    assert (done.progress.total_items, done.progress.succeeded_items) == (5, 5)
    assert done.progress.failed_items == 0 and done.progress.processing_items == 0

    items = list(zep.batch.list_items(batch.uuid_, page_size=2))
    assert [i.sequence_index for i in items] == [0, 1, 2, 3, 4]
    assert all(i.status == "succeeded" for i in items)

    # The messages are in the thread, in order, processed, with their reference time.
    stored = list(zep.thread.list_messages(thread.uuid_))
    assert [m.content for m in stored] == [text for _, text in said]
    assert [m.uuid_ for m in stored] == [i.episode_uuid for i in items[:3]]
    assert all(m.processed for m in stored)
    assert stored[0].reference_time == "2024-03-01T10:00:00.000000Z"
    episode = zep.graph.episode.get(graph.uuid_, items[3].episode_uuid)
    assert episode.processed and episode.metadata == {"page": 1}
    edges = zep.graph.search_edges(user.graph_uuid, query="Where does Dana work?").items
    assert any("chemistry" in e.fact or "Porto" in e.fact for e in edges)

    listed = [b.uuid_ for b in zep.batch.list(status="succeeded")]
    assert batch.uuid_ in listed
    assert batch.uuid_ not in [b.uuid_ for b in zep.batch.list(status="draft")]

    zep.batch.delete(batch.uuid_)
    with pytest.raises(NotFoundError):
        zep.batch.get(batch.uuid_)
    # The episodes it made stay in their graphs.
    assert len(list(zep.thread.list_messages(thread.uuid_))) == 3


def test_batch_errors_name_the_field(zep: Zep) -> None:
    graph = zep.graph.create(name="batch-errors")
    batch = zep.batch.create()
    cases = [
        (BatchItemInput(type="graph_episode", graph_uuid=graph.uuid_), "items[0].data"),
        (BatchItemInput(type="graph_episode", data="x"), "items[0].graph_uuid"),
        (BatchItemInput(type="thread_message", content="hi", role="user"), "items[0].thread_uuid"),
        (
            BatchItemInput(type="graph_episode", graph_uuid="nope", data="x"),
            "items[0].graph_uuid",
        ),
        (
            BatchItemInput(
                type="graph_episode",
                graph_uuid=graph.uuid_,
                data="x",
                reference_time="yesterday-ish",
            ),
            "items[0].reference_time",
        ),
        (
            BatchItemInput(
                type="graph_episode", graph_uuid=graph.uuid_, data="{", data_type="json"
            ),
            "items[0].data",
        ),
    ]
    for item, param in cases:
        with pytest.raises(BadRequestError) as info:
            zep.batch.add_items(batch.uuid_, items=[item])
        assert info.value.body.error.param == param, item
    with pytest.raises(BadRequestError) as info:
        zep.batch.process(batch.uuid_)  # nothing in it: no partial write was made
    assert info.value.body.error.param == "batch_uuid"
    with pytest.raises(BadRequestError) as info:
        zep.batch.get("not-a-uuid")
    assert info.value.body.error.param == "batch_uuid"
    with pytest.raises(NotFoundError):
        zep.batch.get("0190e3c2-0000-7000-8000-000000000000")

    zep.batch.add_items(
        batch.uuid_, items=[BatchItemInput(type="graph_episode", graph_uuid=graph.uuid_, data="x")]
    )
    zep.batch.process(batch.uuid_)
    with pytest.raises(BadRequestError) as info:  # a processed batch takes no more items
        zep.batch.add_items(
            batch.uuid_,
            items=[BatchItemInput(type="graph_episode", graph_uuid=graph.uuid_, data="y")],
        )
    assert info.value.body.error.param == "batch_uuid"
    with pytest.raises(BadRequestError):
        zep.batch.process(batch.uuid_)  # once
    assert _wait_batch(zep, batch.uuid_) == "succeeded"


def test_batches_are_not_seen_across_projects(server: InProcess, zep: Zep) -> None:
    command = ["keys", "create", "--project", "batch-other"]
    key = server.cli(*command)
    other = server.client(api_key=key)
    mine = zep.batch.create()
    graph = zep.graph.create(name="mine")
    with pytest.raises(NotFoundError):
        other.batch.get(mine.uuid_)
    with pytest.raises(NotFoundError):
        other.batch.process(mine.uuid_)
    with pytest.raises(NotFoundError):
        other.batch.delete(mine.uuid_)
    assert mine.uuid_ not in [b.uuid_ for b in other.batch.list()]
    # Another project's graph is "not found": the item is rejected.
    theirs = other.batch.create()
    added = other.batch.add_items(
        theirs.uuid_,
        items=[BatchItemInput(type="graph_episode", graph_uuid=graph.uuid_, data="x")],
    )
    assert added.items == [] and [r.index for r in added.rejected_items or []] == [0]


def test_raw_batch_body_errors(server: InProcess) -> None:
    batch = raw(server, "POST", "/batches", json={}).json()
    answer = raw(server, "POST", f"/batches/{batch['uuid']}/items", json={"items": []})
    assert answer.status_code == 400 and answer.json()["error"]["param"] == "items"
    answer = raw(
        server, "POST", f"/batches/{batch['uuid']}/items", json={"items": [{"type": "video"}]}
    )
    assert answer.status_code == 400 and answer.json()["error"]["param"] == "items[0].type"
    answer = raw(server, "POST", "/batches", json={"ignore_roles": ["robot"]})
    assert answer.status_code == 400 and answer.json()["error"]["param"] == "ignore_roles[0]"


# Slow: kills a server process and starts another on its database.
@pytest.mark.slow
def test_a_batch_resumes_after_its_server_is_killed(
    make_server: Callable[..., Server], tmp_path: Path
) -> None:
    """Items are tasks under leases: a server killed mid-batch leaves them to the next one,
    which finishes the batch; every message is ingested once, in order."""
    db = tmp_path / "batch-crash.db"
    env = {"GRAPHRECALL_TASK_LEASE_SECONDS": "2"}
    first = make_server(db, env=env)
    zep = first.client()
    user = zep.user.create(first_name="Kim")
    thread = zep.thread.create(user_uuid=user.uuid_)
    batch = zep.batch.create()
    texts = [f"Message number {n}: Kim visited city {n}." for n in range(64)]
    for start in range(0, len(texts), 32):
        zep.batch.add_items(
            batch.uuid_,
            items=[
                BatchItemInput(
                    type="thread_message",
                    thread_uuid=thread.uuid_,
                    role="user",
                    name="Kim",
                    content=text,
                )
                for text in texts[start : start + 32]
            ],
        )
    zep.batch.process(batch.uuid_)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        progress = zep.batch.get(batch.uuid_).progress
        if progress is not None and progress.processing_items:
            break
        time.sleep(0.02)
    assert first.process is not None
    first.process.kill()  # mid-run, no clean shutdown: its leases are left held
    first.process.wait(10)
    first.process = None

    second = make_server(db, env=env)
    zep = second.client()
    assert _wait_batch(zep, batch.uuid_, timeout=120) == "succeeded"
    stored = list(zep.thread.list_messages(thread.uuid_))
    assert [m.content for m in stored] == texts  # once each, in order
    assert all(m.processed for m in stored)
    items = list(zep.batch.list_items(batch.uuid_, page_size=100))
    assert len(items) == 64 and all(i.status == "succeeded" for i in items)
