"""Durability: data survives a restart, and tasks left unfinished are resumed."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
from zep_cloud import AddMessage, NodeInput

from graphrecall.domain.inputs import EpisodeCreate
from graphrecall.services.accounts import projects
from graphrecall.services.container import Services
from graphrecall.services.graph import episodes
from graphrecall.store import open_store
from tests.conftest import Server, wait_for_task

# Slow: server processes restarted on the same database (a restart is the point).
pytestmark = pytest.mark.slow


def test_data_survives_restart(make_server: Callable[..., Server], tmp_path: Path) -> None:
    db = tmp_path / "restart.db"
    first = make_server(db)
    zep = first.client()
    user = zep.user.create(user_id="persist", first_name="Per")
    thread = zep.thread.create(user_uuid=user.uuid_)
    msgs = zep.thread.add_messages(thread.uuid_, messages=[AddMessage(role="user", content="hi")])
    wait_for_task(zep, msgs.task.uuid_)
    graph = zep.graph.create(name="durable")
    nodes = zep.graph.node.add(graph.uuid_, nodes=[NodeInput(name=f"n{i}") for i in range(5)])
    first.stop()

    second = make_server(db)
    zep = second.client()
    assert zep.user.get(user.uuid_).user_id == "persist"
    assert [m.content for m in zep.thread.list_messages(thread.uuid_)] == ["hi"]
    assert {n.uuid_ for n in zep.graph.node.list(graph.uuid_)} >= {n.uuid_ for n in nodes.nodes}
    assert zep.task.get(msgs.task.uuid_).status == "succeeded"


def test_unfinished_tasks_resume_after_restart(
    make_server: Callable[..., Server], tmp_path: Path
) -> None:
    db = tmp_path / "resume.db"
    # Write an episode with no worker running: it stays pending, as after a crash.
    store = open_store(db)
    project = projects.get_or_create_project(store)
    projects.create_key(store, project, key="gr_resume_key_0123")
    ctx = Services(store=store, embedder=None)
    from graphrecall.domain.inputs import GraphCreate
    from graphrecall.services.graph import graphs

    graph = graphs.create_graph(ctx, project, GraphCreate(name="crashy"))
    episode, task = episodes.add_episode(ctx, project, graph.uuid, EpisodeCreate(data="pending"))
    # A task that was mid-flight when the process died.
    store.update(task.model_copy(update={"status": "processing"}))
    store.close()

    server = make_server(db, api_key="gr_resume_key_0123")
    zep = server.client()
    assert wait_for_task(zep, task.uuid) == "succeeded"
    assert zep.graph.episode.get(graph.uuid, episode.uuid).processed is True
