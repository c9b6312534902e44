"""Two API processes (each with its worker) on one PostgreSQL database, through the real
zep-cloud SDK: what one writes, the other reads and searches; tasks are claimed once."""

from __future__ import annotations

import uuid
from collections.abc import Callable

import pytest
from zep_cloud import AddMessage

from tests import pg_server
from tests.conftest import Server, wait_for_task

# Slow: two API processes on one database (two processes are the point).
pytestmark = pytest.mark.slow


def test_two_api_processes_share_one_postgres_database(
    make_server: Callable[..., Server],
) -> None:
    url = pg_server.with_schema(pg_server.server_url(), f"t{uuid.uuid4().hex}")
    first = make_server(db=url).client()
    second = make_server(db=url).client()

    user = first.user.create(user_id="pg-bob", first_name="Bob")
    thread = first.thread.create(user_uuid=user.uuid_)
    added = first.thread.add_messages(
        thread.uuid_,
        messages=[
            AddMessage(role="user", name="Bob", content="I just moved to Lisbon."),
            AddMessage(role="assistant", name="Agent", content="Welcome to Portugal!"),
            AddMessage(role="user", name="Bob", content="I work at a bakery in Alfama now."),
        ],
    )
    # Either process's worker may take the task; the other process reports its end.
    assert wait_for_task(second, added.task.uuid_) == "succeeded"

    assert second.user.get(user.uuid_).user_id == "pg-bob"
    messages = list(second.thread.list_messages(thread.uuid_))
    assert [m.content for m in messages] == [m.content for m in added.messages]
    assert all(m.processed for m in messages)

    episodes = second.graph.search_episodes(user.graph_uuid, query="bakery Alfama").items
    assert episodes and "bakery" in episodes[0].content
    edges = second.graph.search_edges(user.graph_uuid, query="Where does Bob live?").items
    assert edges and any("Lisbon" in e.fact for e in edges)

    # A write through the second process is read through the first at once.
    second.thread.message.update(thread.uuid_, messages[0].uuid_, metadata={"k": "v"})
    assert first.thread.message.get(thread.uuid_, messages[0].uuid_).metadata == {"k": "v"}
